import { existsSync } from "node:fs";
import { extname } from "node:path";
import { Argument, Command, CommanderError, Help } from "commander";
import { z } from "zod";
import { listGraphs } from "../graphs/registry.js";
import type { Configuration } from "../settings/configuration.js";
import { TABLE_FORMATS } from "../tables/formats.js";
import { graphOption } from "./args.js";
import { registerAuditCommand } from "./audit.js";
import {
  ASK_FLAGS,
  configurationFromFlags,
  withConfigurationFlags,
} from "./configuration-flags.js";
import { registerConsumeCommand } from "./consume.js";
import { registerDataCommands } from "./data.js";
import { registerDbCommands } from "./db.js";
import { registerEvalCommands } from "./eval.js";
import { graphLines } from "./graph-list.js";
import { registerInspectCommand } from "./inspect.js";
import { JSON_OPTION_HELP } from "./json-fields.js";
import { registerMcpCommand } from "./mcp.js";
import { registerMineCommand } from "./mine.js";
import { registerPruneCommand } from "./prune.js";
import { registerServeCommand } from "./serve.js";
import { registerServeRewardCommand } from "./serve-reward.js";
import { registerUiCommand } from "./ui.js";
import { routeWarnings } from "./warnings.js";

/*
 * Start-up: `tableminds --help` loads commander, zod and the flag definitions only. What a
 * command runs (graphs, LangChain, DuckDB, the sandbox, the local model) is imported inside its
 * action, so printing help or a usage error never pays for it.
 */

/** The table file types `ask` reads. */
export const ASK_TABLE_FORMATS = TABLE_FORMATS;

const ENVIRONMENT = `
Environment:
  OPENAI_API_KEY              key for the model endpoint ("none" is fine for local servers)
  OPENAI_BASE_URL             any OpenAI-compatible endpoint (vLLM, SGLang, Ollama, llama.cpp,
                              LM Studio), e.g. http://127.0.0.1:8000/v1; default: OpenAI
  TABLEMINDS_MODEL            model for every role (default gpt-4o-mini)
  TABLEMINDS_PLANNER_MODEL    model for the planner only (also _CODER_, _ANSWERER_, _CHECKER_,
                              _REFLECTOR_, _ARCHIVER_)
  TABLEMINDS_PYTHON           python with pandas for the local sandbox (default: found on PATH;
                              \`npm run setup\` installs Debian's python3-pandas)
  TABLEMINDS_HOME             where artifacts, memory.sqlite and checkpoints.sqlite are kept
                              (default ./.tableminds)
  E2B_API_KEY                 key for E2B cloud sandboxes (--sandbox e2b)
  E2B_DOMAIN, E2B_TEMPLATE    a self-hosted E2B; a template with python3 and pandas
  LANGSMITH_TRACING=true      trace runs to LangSmith (with LANGSMITH_API_KEY)
  TABLEMINDS_REWARD_URL       the reward server the generated verl module calls (with
                              TABLEMINDS_REWARD_TOKEN or TABLEMINDS_REWARD_TOKEN_FILE)
`;

const EXAMPLE_QUESTION =
  'tableminds ask examples/olympics_2020_medals.csv "How many gold medals did these ten nations win in total?"';

const PROGRAM_EXAMPLES = `
Examples:
  ${EXAMPLE_QUESTION}
  tableminds ask --help                 every option of ask, with more examples
  tableminds doctor                     check the sandbox, the model and the settings
  tableminds graphs                     the graphs --graph can run`;

const ASK_EXAMPLES = `
Examples:
  ${EXAMPLE_QUESTION}
  tableminds ask examples/planets.json "Which planet has the longest orbital period?" --json
  tableminds ask examples/elements.tsv -t examples/planets.json "How many noble gases are listed?"
  tableminds ask examples/olympics_2020_medals.csv "Which nation won the most silver medals?" \\
      --graph mom --plans 4
  tableminds ask examples/olympics_2020_medals.csv "And for bronze?" --thread medals
  tableminds ask report.xlsx "Total revenue in Q3?" --sheet Results --header-rows 2`;

const AskFlagsSchema = z.object({
  table: z.array(z.string()),
  encoding: z.string().optional(),
  json: z.boolean(),
  quiet: z.boolean(),
  graph: z.string(),
  thread: z.string().optional(),
  memory: z.boolean(),
  exitZero: z.boolean(),
});

const ASK_EXIT_STATUS = `
Exit status:
  0    the answer passed the check (or checking is off)
  1    an error: a bad table, an endpoint that is down, a bad option
  3    the answer did not pass the check, or the run is not sure of it (--exit-zero: 0)
  4    answered but unchecked: the answer holds no value or claim to check (--exit-zero: 0)
  130  interrupted (Ctrl-C)`;

const QUESTION_ARGUMENT = new Argument(
  "<question>",
  'the question, in quotes, after the tables: "How many rows are there?"',
);

/** `ask`'s exit status when the answer did not pass the check (or the run is not sure of it). */
export const EXIT_NOT_PASSED = 3;
/** `ask`'s exit status when the answer holds nothing to check (open prose): answered, unchecked. */
export const EXIT_UNCHECKED = 4;

/** Commander's own errors are thrown, not printed, so `main` says each in one line. */
function quietErrors(program: Command): Command {
  return program.exitOverride().configureOutput({ outputError: () => {} });
}

/** The (sub)commands named at the start of `args`, e.g. ["eval", "run"]. */
function commandPath(program: Command, args: string[]): string[] {
  const path: string[] = [];
  let at = program;
  for (const arg of args.filter((a) => !a.startsWith("-"))) {
    const next = at.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!next) break;
    path.push(next.name());
    at = next;
  }
  return path;
}

/** One line for a command-line mistake, with the hint the mistake calls for. */
export function usageError(error: CommanderError, program: Command, args: string[]): string {
  const path = commandPath(program, args);
  const message = error.message.replace(/^error: /, "").replace(/\.$/, "");
  if (error.code === "commander.excessArguments" && path.join(" ") === "ask") {
    return `${message}: put the question in quotes, e.g. tableminds ask table.csv "How many rows are there?"`;
  }
  return `${message} (see ${["tableminds", ...path, "--help"].join(" ")})`;
}

const QUOTE_HINT =
  'put the question in quotes, e.g. tableminds ask table.csv "How many rows are there?"';

/** A word that names a table file: a table's extension, or a file that exists. */
function isTableWord(word: string): boolean {
  return ASK_TABLE_FORMATS.includes(extname(word).toLowerCase()) || existsSync(word);
}

/**
 * `ask`'s words: table files, then the question. A word that is neither a table file name
 * nor an existing file means the question was not quoted.
 */
function splitAskArguments(words: readonly string[]): { tables: string[]; question: string } {
  const question = words.at(-1) ?? "";
  const tables = words.slice(0, -1);
  if (tables.length === 0) {
    // One word: a table without its question, or a question without its table.
    if (isTableWord(question))
      throw new Error(`missing the question after the table: ${QUOTE_HINT}`);
    throw new Error(
      `missing the table before the question: name a table file first, e.g. tableminds ask table.csv ${JSON.stringify(question)}`,
    );
  }
  const stray = tables.find((word) => !isTableWord(word));
  if (stray !== undefined && tables.length > 1) {
    throw new Error(`${JSON.stringify(stray)} is not a table file: ${QUOTE_HINT}`);
  }
  return { tables, question };
}

/** Starts the shared local sandbox without waiting for it; its module, to close it, or none. */
async function startLocalSandboxEarly(context: Partial<Configuration>) {
  const { adoptOperatorFields, operatorSettings } = await import("../settings/operator.js");
  adoptOperatorFields(context);
  if (operatorSettings().sandbox !== "local") return undefined;
  const sandboxes = await import("../sandbox/index.js");
  // A failed start is not kept: the executor tries again and reports it.
  sandboxes.getSandbox("local").catch(() => {});
  return sandboxes;
}

/** Before the graph is loaded: a question to ask, and an endpoint to ask it of. */
async function checkAsk(question: string, model: string | undefined): Promise<void> {
  if (!question.trim()) {
    throw new Error("the question is empty: ask something about the table, in quotes");
  }
  const { resolveModel } = await import("../models/config.js");
  resolveModel("planner", { model });
}

export function buildProgram(): Command {
  const program = quietErrors(new Command("tableminds"))
    .description("Answer questions over tables with a team of LLM agents, with the evidence.")
    .version("0.1.0")
    // The list of commands shows each one's usage line, so ask's names its question too.
    .configureHelp({ subcommandTerm: (command) => `${command.name()} ${command.usage()}` })
    .addHelpText("after", PROGRAM_EXAMPLES)
    .addHelpText("after", ENVIRONMENT);

  withConfigurationFlags(
    program
      .command("ask")
      .description(
        "answer a question about one or more tables (CSV, TSV, JSON, Excel, Parquet) and show the evidence",
      )
      .usage("[options] <table...> <question>")
      .argument(
        "<table...>",
        `one or more table files: ${ASK_TABLE_FORMATS.join(", ")} ` +
          "(JSON: records or {columns, data}; a workbook gives one table per sheet)",
      )
      // Commander takes the question as the table list's last word; help lists it on its own.
      .configureHelp({
        visibleArguments: (command) => [...new Help().visibleArguments(command), QUESTION_ARGUMENT],
      })
      .option(
        "-t, --table <file>",
        "another table (repeatable)",
        (v, all: string[]) => [...all, v],
        [],
      )
      .option(
        "--encoding <name>",
        "encoding of the text tables (e.g. windows-1252, shift_jis); default: detected",
      )
      .option("--json", JSON_OPTION_HELP, false)
      .option("-q, --quiet", "no progress on stderr", false)
      .option(
        "--exit-zero",
        `exit 0 even when the answer did not pass the check (else ${EXIT_NOT_PASSED})`,
        false,
      )
      .addOption(graphOption("graph of langgraph.json to run")),
    ASK_FLAGS,
  )
    .option(
      "--thread <id>",
      'a conversation: save each step under this id; the same command again resumes an interrupted run, a new question on it is a follow-up ("And for silver?")',
    )
    .addHelpText("after", ASK_EXAMPLES)
    .addHelpText("after", ASK_EXIT_STATUS)
    .addHelpText("after", ENVIRONMENT)
    .action(async (words: string[], flags: unknown, command: Command) => {
      const opts = AskFlagsSchema.parse(flags);
      const { tables, question } = splitAskArguments(words);
      const context = configurationFromFlags(command);
      await checkAsk(question, context.model);
      if (opts.encoding !== undefined) {
        const { isKnownEncoding } = await import("../tables/encoding.js");
        if (!isKnownEncoding(opts.encoding)) {
          throw new Error(
            `unknown encoding ${JSON.stringify(opts.encoding)} for --encoding (e.g. utf-8, windows-1252, latin1, shift_jis, gb18030, utf-16le)`,
          );
        }
      }
      // The local sandbox's Python (about a second, mostly pandas' import) starts now, while
      // the graph's modules load; ask() closes it, and so does the finally below if ask()
      // fails before it gets that far.
      const sandbox = await startLocalSandboxEarly(context);
      const { ask } = await import("./ask.js");
      const state = await ask({
        tables: [...tables, ...opts.table],
        question,
        graph: opts.graph,
        json: opts.json,
        quiet: opts.quiet,
        context,
        thread: opts.thread,
        memory: opts.memory,
        encoding: opts.encoding,
      }).finally(() => sandbox?.closeSandboxes());
      const verdict = state?.verdict;
      if (verdict && !(verdict.pass && verdict.sure) && !opts.exitZero) {
        process.exitCode = verdict.unchecked ? EXIT_UNCHECKED : EXIT_NOT_PASSED;
      }
    });

  program
    .command("doctor")
    .description("check the sandbox Python, the local sandbox's protections and the settings")
    .action(async () => {
      const { doctor } = await import("./doctor.js");
      process.exitCode = await doctor();
    });

  registerEvalCommands(program);
  registerMineCommand(program);
  registerServeRewardCommand(program);
  registerDataCommands(program);
  registerInspectCommand(program);
  registerPruneCommand(program);
  registerAuditCommand(program);
  registerConsumeCommand(program);
  registerServeCommand(program);
  registerUiCommand(program);
  registerDbCommands(program);
  registerMcpCommand(program);

  program
    .command("graphs")
    .description("list the graphs --graph can run (langgraph.json), with what each does")
    .action(() => {
      for (const line of graphLines(listGraphs())) console.log(line);
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  routeWarnings();
  // Output piped into `head` may close early; that is not an error of ours.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end this way too, having printed what was asked.
      if (error.exitCode !== 0) {
        process.stderr.write(`tableminds: ${usageError(error, program, argv.slice(2))}\n`);
      }
      process.exitCode = error.exitCode;
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`tableminds: ${message}\n`);
    process.exitCode = 1;
  }
}
