import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Command, Option } from "commander";
import { z } from "zod";
import { DATASETS } from "../evals/datasets/names.js";
import { DEFAULT_MAX_ENDPOINT_FAILURES, stopMessage } from "../evals/endpoint-failures.js";
import { currentQuestion } from "../evals/question-scope.js";
import type { Report } from "../evals/report.js";
import type { ResultRecord } from "../evals/results-file.js";
import { DEFAULT_SEED, type Selection, selectExamples } from "../evals/selection.js";
import type { ChartRunner, EvalExample } from "../evals/types.js";
import { servicesSettings } from "../settings/services.js";
import { graphOption, nonNegativeInt, positiveInt } from "./args.js";
import { configurationFromFlags, withConfigurationFlags } from "./configuration-flags.js";
import { evalProgress } from "./eval-progress.js";
import { QUEUE_FLAG_HELP, queueOfFlag } from "./queue-flags.js";
import { redirectWarnings, warningsLog } from "./warnings.js";

const datasetOption = () =>
  new Option("-d, --dataset <name>", "dataset").choices(DATASETS).makeOptionMandatory();

const EVAL_HELP = `
"tableminds eval --dataset NAME ..." is short for "tableminds eval run --dataset NAME ...".

Examples:
  tableminds eval --dataset tablebench --limit 100 --concurrency 8 --out runs/tb-100
  tableminds eval score predictions.jsonl --dataset tablebench --out runs/other-system
  tableminds eval report runs/tb-100
  tableminds eval compare runs/other-system runs/tb-100
`;

const RUN_HELP = `
The same command again resumes: questions already in results.jsonl are skipped, and a line
torn by a crash is moved to results.jsonl.corrupt-<time> so its question runs again. A
directory whose results were made with another model, endpoint, selection or configuration
is refused unless --allow-config-change is given (the change is recorded in run.json).
A question whose model endpoint fails (nothing listening, unknown host, 401/403/404...) is
not recorded: it runs again next time, and after --max-endpoint-failures such questions in
a row the run stops with exit code 1.
Ctrl-C stops starting questions, drops those in flight (they run next time), writes the
report of what is done and exits with 130. With LANGSMITH_API_KEY set, a finished run is
also recorded as a LangSmith experiment (LANGSMITH_ENDPOINT for a self-hosted one).

With --queue, the questions go to a queue on Redis and \`tableminds consume\` processes, on
this machine or any other, run them; this command shows their progress and writes the same
files as a run here. The same command again queues only what is neither done nor queued, and
collects what finished while it was away. Ctrl-C stops waiting (the queued questions go on).
--concurrency does not apply: each consumer's own --concurrency sets how many run at once.
When the endpoint stop comes, questions not started yet are taken off the queue, to be
queued again by the next run. The run's graph and settings travel with the questions, sealed
with TABLEMINDS_QUEUE_KEY (the same secret on every consumer), and tables given as paths go
into the artifact store first; the endpoint, API key, models, sandbox and replay cache are
each consumer's own.
  tableminds eval --dataset tablebench --limit 500 --queue redis://10.0.0.5:6379 --out runs/tb-500
`;

const RunFlagsSchema = z.object({
  dataset: z.enum(DATASETS),
  data: z.string().optional(),
  graph: z.string(),
  limit: z.number().optional(),
  sample: z.number().optional(),
  seed: z.number().optional(),
  allowConfigChange: z.boolean(),
  maxEndpointFailures: z.number(),
  concurrency: z.number(),
  out: z.string().optional(),
  timeout: z.number(),
  retries: z.number(),
  quiet: z.boolean(),
  queue: z.union([z.string(), z.literal(true)]).optional(),
});

const ScoreFlagsSchema = z.object({
  dataset: z.enum(DATASETS),
  data: z.string().optional(),
  out: z.string().optional(),
  json: z.boolean(),
});

/** The evaluation modules load on use: charts and the runner cost ~0.3 s that `ask` need not pay. */
async function evals() {
  const [datasets, metrics, chart, report, runner, predictions, runDirectory, sandboxes] =
    await Promise.all([
      import("../evals/datasets/index.js"),
      import("../evals/metrics/index.js"),
      import("../evals/metrics/chart.js"),
      import("../evals/report.js"),
      import("../evals/runner.js"),
      import("../evals/predictions.js"),
      import("../evals/run-directory.js"),
      import("../sandbox/index.js"),
    ]);
  return {
    ...datasets,
    ...metrics,
    ...report,
    ...runner,
    ...predictions,
    ...runDirectory,
    closeSandboxes: sandboxes.closeSandboxes,
    localCharts: async (): Promise<ChartRunner> =>
      chart.sandboxChartRunner(await sandboxes.getSandbox("local")),
  };
}

/** The checker's figures in two lines, when results carry its verdicts. */
function checkerText(report: Report): string[] {
  const c = report.checker;
  if (!c || c.checked === 0) return [];
  const pct = (x: number | null) => (x === null ? "-" : `${x.toFixed(2)}%`);
  const num = (x: number | null) => (x === null ? "-" : x.toFixed(3));
  const left = c.withoutVerdict > 0 ? ` (${c.withoutVerdict} without one left out)` : "";
  return [
    `  checker on ${c.checked} verdicts${left}: passed ${c.pass.passed}, precision ${pct(c.pass.precision)}, recall ${pct(c.pass.recall)}; wrong answers that passed: ${c.pass.wrongPassed} of ${c.wrong}`,
    `  confidence: AURC ${num(c.selective.aurc)} (best ${num(c.selective.optimalAurc)}, none ${num(c.selective.randomAurc)}), ECE ${num(c.calibration.ece)}; sure ${c.sure.n} (${pct(c.sure.accuracy)} right)`,
  ];
}

function summaryText(report: Report): string {
  const s = report.summary;
  const groups = s.groups.map(
    (g) =>
      `  ${g.name.padEnd(20)} ${String(g.n).padStart(4)}  ${g.metric.padEnd(6)} ${g.score.toFixed(2)}`,
  );
  const errors =
    report.errors.count > 0
      ? [`  ${report.errors.count} ended in an error (scored as unanswered)`]
      : [];
  return [
    `${s.dataset}: overall ${s.overall.toFixed(2)} over ${s.n} questions, Parse@1 ${s.parseRate.toFixed(2)}%`,
    ...groups,
    ...errors,
    ...checkerText(report),
  ].join("\n");
}

export function registerEvalCommands(program: Command): void {
  const evalCommand = program
    .command("eval")
    .description("evaluate a graph on a benchmark, resumably, and report the scores")
    .addHelpText("after", EVAL_HELP);

  withConfigurationFlags(
    evalCommand
      .command("run", { isDefault: true })
      .description("run a dataset's questions through a graph; the same command again resumes")
      .addOption(datasetOption())
      .option(
        "--data <path>",
        "the dataset's file or directory (default: $TABLEMINDS_HOME/datasets/<name>, or ../shared)",
      )
      .addOption(graphOption("graph of langgraph.json"))
      .addOption(
        new Option("-n, --limit <n>", "only the first n questions")
          .argParser(positiveInt)
          .conflicts("sample"),
      )
      .option(
        "--sample <n>",
        "n questions sampled at random, stratified by category/subtype (see --seed)",
        positiveInt,
      )
      .option(
        "--seed <s>",
        `seed of --sample; the same seed draws the same questions (default ${DEFAULT_SEED})`,
        nonNegativeInt,
      )
      .option("-c, --concurrency <k>", "questions in flight at once", positiveInt, 4)
      .option(
        "-o, --out <dir>",
        "run directory: results.jsonl, run.json, report.md (default runs/<dataset>-<graph>)",
      )
      .option("--timeout <ms>", "limit per question, retries included", positiveInt, 300_000)
      .option(
        "--retries <n>",
        "tries again after a transient model failure (429, 5xx, dropped connection)",
        nonNegativeInt,
        2,
      )
      .option(
        "--max-endpoint-failures <n>",
        "stop after this many questions in a row fail on the model endpoint",
        positiveInt,
        DEFAULT_MAX_ENDPOINT_FAILURES,
      )
      .option(
        "--allow-config-change",
        "resume a directory whose results were made with another configuration",
        false,
      ),
  )
    .option("-q, --quiet", "no progress on stderr", false)
    .option("--queue [redis-url]", QUEUE_FLAG_HELP)
    .addHelpText("after", RUN_HELP)
    .action(async (flags: unknown, command: Command) => {
      const opts = RunFlagsSchema.parse(flags);
      if (opts.seed !== undefined && opts.sample === undefined) {
        throw new Error("--seed chooses the questions of --sample; give --sample N too");
      }
      const selection: Selection =
        opts.sample !== undefined
          ? { kind: "sample", n: opts.sample, seed: opts.seed ?? DEFAULT_SEED }
          : opts.limit !== undefined
            ? { kind: "first", n: opts.limit }
            : { kind: "all" };
      const queue = opts.queue === undefined ? undefined : await queueOfFlag(opts.queue, command);
      const ev = await evals();
      const scorer = ev.getScorer(opts.dataset);
      const dataset = await ev.loadDataset(opts.dataset, { path: opts.data });
      const examples = selectExamples(dataset, selection);
      const outDir = path.resolve(opts.out ?? path.join("runs", `${opts.dataset}-${opts.graph}`));
      const bar = evalProgress(opts.quiet);
      const controller = new AbortController();
      const onSigint = () => {
        if (controller.signal.aborted) {
          bar.note("eval: stopped at once");
          process.exit(130);
        }
        bar.note(
          queue
            ? "eval: stopping (Ctrl-C again quits at once); the queued questions go on, the same command collects them"
            : "eval: stopping (Ctrl-C again quits at once); questions in flight are dropped and run next time",
        );
        controller.abort();
      };
      process.on("SIGINT", onSigint);
      mkdirSync(outDir, { recursive: true });
      const warningsFile = path.join(outDir, "warnings.log");
      const logWarning = warningsLog(warningsFile);
      let warnings = 0;
      const restoreWarnings = redirectWarnings((line) => {
        if (logWarning(line, currentQuestion())) warnings += 1;
      });
      try {
        const outcome = await ev.runEvaluation({
          examples,
          scorer,
          graph: opts.graph,
          outDir,
          concurrency: opts.concurrency,
          timeoutMs: opts.timeout,
          retries: opts.retries,
          // Questions must not teach each other during an evaluation.
          context: { ...configurationFromFlags(command), memory: false },
          // Queued questions are scored where they run.
          runChart: queue ? undefined : await ev.localCharts(),
          answerer: queue
            ? (await import("../evals/queue/submit.js")).queuedAnswerer({
                url: queue,
                kind: "eval",
                result: (await import("../evals/queue/payload.js")).QuestionResultSchema,
                note: (line) => bar.note(line),
              })
            : undefined,
          signal: controller.signal,
          selection,
          allowConfigChange: opts.allowConfigChange,
          maxEndpointFailures: opts.maxEndpointFailures,
          info: {
            command: process.argv.slice(2),
            data: opts.data ? path.resolve(opts.data) : undefined,
            limit: opts.limit,
          },
          onStart: ({ total, done, repaired }) => {
            if (repaired) {
              bar.note(
                `eval: ${repaired.lines} torn line(s) in results.jsonl moved to ${repaired.savedTo}; those questions run again`,
              );
            }
            bar.start(total - done, done, total);
          },
          onResult: (record) => bar.tick(record),
          onUnscored: (failure) =>
            bar.note(
              `eval: ${failure.id} could not be scored (${failure.error}); it runs again next time`,
            ),
          onFailedToRun: (failure) =>
            bar.note(
              `eval: ${failure.id} failed to run (${failure.error}); not recorded, it runs again next time`,
            ),
        });
        bar.stop();
        restoreWarnings();
        if (warnings > 0)
          process.stderr.write(`eval: ${warnings} warning(s), in ${warningsFile}\n`);
        // The report covers every result in the directory, also those of a larger selection.
        const covered = ev.coveredExamples(dataset, examples, outcome.records);
        const report = await ev.writeReport(outDir, covered, outcome.records, scorer);
        process.stdout.write(`${summaryText(report)}\nreport: ${path.join(outDir, "report.md")}\n`);
        const answered = new Set(outcome.records.map((r) => r.id));
        const missing = examples.filter((e) => !answered.has(e.id)).length;
        if (outcome.stopped) {
          process.stderr.write(
            `eval: stopped: ${stopMessage(outcome.stopped)}; ${missing} of ${examples.length} questions left, the same command runs them once the endpoint works\n`,
          );
          process.exitCode = 1;
        } else if (outcome.interrupted) {
          process.stderr.write(
            `eval: interrupted with ${missing} of ${examples.length} questions left; the same command goes on\n`,
          );
          process.exitCode = 130;
        } else if (outcome.failedToRun.length > 0) {
          const [first] = outcome.failedToRun;
          process.stderr.write(
            `eval: ${outcome.failedToRun.length} questions failed to run (${first?.error}); not recorded, the same command runs them again\n`,
          );
          process.exitCode = 1;
        } else if (outcome.unscored.length > 0) {
          process.stderr.write(
            `eval: ${outcome.unscored.length} questions could not be scored; the same command tries them again\n`,
          );
          process.exitCode = 1;
        } else if (servicesSettings().LANGSMITH_API_KEY) {
          await toLangSmith(opts.dataset, opts.graph, outDir, examples, outcome.records);
        }
      } finally {
        restoreWarnings();
        process.removeListener("SIGINT", onSigint);
        bar.stop();
        await ev.closeSandboxes();
      }
    });

  evalCommand
    .command("score")
    .description("score predictions made elsewhere (JSONL of {id, prediction}) as a run is scored")
    .argument("<file>", "one JSON object per line: id, and prediction (the raw output text)")
    .addOption(datasetOption())
    .option("--data <path>", "the dataset's file or directory")
    .option(
      "-o, --out <dir>",
      "also write results.jsonl, run.json and the report there, for `eval compare`",
    )
    .option("--json", "print the summary as JSON", false)
    .action(async (file: string, flags: unknown) => {
      const opts = ScoreFlagsSchema.parse(flags);
      const ev = await evals();
      const scorer = ev.getScorer(opts.dataset);
      const all = await ev.loadDataset(opts.dataset, { path: opts.data });
      const predictions = ev.readPredictions(file, all, opts.dataset);
      const examples = predictions.map((p) => p.example);
      const out = opts.out ? path.resolve(opts.out) : undefined;
      try {
        const records = await ev.scorePredictions(predictions, scorer, await ev.localCharts());
        const report = out
          ? await ev.saveScoredRun(out, {
              scorer,
              examples,
              records,
              data: opts.data ? path.resolve(opts.data) : undefined,
              command: process.argv.slice(2),
            })
          : ev.buildReport(examples, records, scorer);
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(report.summary, null, 2)}\n`
            : `${summaryText(report)}\n${out ? `report: ${path.join(out, "report.md")}\n` : ""}`,
        );
      } finally {
        await ev.closeSandboxes();
      }
    });

  evalCommand
    .command("report")
    .description("write report.md, report.json and charts/ of a run directory again")
    .argument("<run>", "run directory")
    .action(async (run: string) => {
      const { loadRun, writeReport } = await evals();
      const { examples, records, scorer } = await loadRun(run);
      const report = await writeReport(run, examples, records, scorer);
      process.stdout.write(`${summaryText(report)}\nreport: ${path.join(run, "report.md")}\n`);
      if (report.answered < examples.length) {
        process.stderr.write(
          `eval: ${run} has results for ${report.answered} of its ${examples.length} questions\n`,
        );
      }
    });

  evalCommand
    .command("compare")
    .description(
      "per-category deltas and per-question wins of run B over run A (writes compare.md in B)",
    )
    .argument("<runA>", "baseline run directory")
    .argument("<runB>", "run directory to compare")
    .action(async (runA: string, runB: string) => {
      const { buildReport, compareRuns, loadRun } = await evals();
      const side = async (dir: string) => {
        const { examples, records, scorer } = await loadRun(dir);
        const report: Report = buildReport(examples, records, scorer);
        return { name: path.basename(path.resolve(dir)), dataset: scorer.dataset, report, records };
      };
      const a = await side(runA);
      const b = await side(runB);
      if (a.dataset !== b.dataset) {
        throw new Error(`${runA} is a ${a.dataset} run and ${runB} a ${b.dataset} run`);
      }
      const text = compareRuns(a, b);
      writeFileSync(path.join(runB, "compare.md"), text);
      process.stdout.write(text);
    });
}

/** Also records the run as a LangSmith experiment; a failure there loses nothing local. */
async function toLangSmith(
  dataset: string,
  graph: string,
  outDir: string,
  examples: EvalExample[],
  records: ResultRecord[],
): Promise<void> {
  const { recordExperiment } = await import("../evals/langsmith.js");
  const experimentName = `${path.basename(outDir)}-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  try {
    await recordExperiment({
      datasetName: `tableminds-${dataset}`,
      experimentName,
      graph,
      examples,
      records,
    });
    process.stderr.write(`eval: recorded in LangSmith as experiment ${experimentName}\n`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `eval: warning: could not record the run in LangSmith (${message}); the local results are complete\n`,
    );
  }
}
