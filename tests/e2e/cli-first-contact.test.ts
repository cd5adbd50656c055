import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_LOCAL_MODEL } from "../../models/local-spec.js";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, orchestratedMedalsTeam } from "../support/scripts.js";
import { type StubRequest, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/* What a new user meets first: the help, the graphs, a mistake, the doctor, SQL evidence. */

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
const README_QUESTION = "How many gold medals did these ten nations win in total?";

describe("the help a new user reads", () => {
  it("tableminds --help: ask's usage names the question, and an example to copy", async () => {
    const result = await runCli(["--help"], {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ {2}ask \[options\] <table\.\.\.> <question> /m);
    expect(result.stdout).toMatch(/^Examples:$/m);
    expect(result.stdout).toContain(
      `  tableminds ask examples/olympics_2020_medals.csv "${README_QUESTION}"`,
    );
  });

  it("tableminds ask --help: the question among the arguments, and examples", async () => {
    const result = await runCli(["ask", "--help"], {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: tableminds ask \[options\] <table\.\.\.> <question>$/m);
    const args = result.stdout.slice(result.stdout.indexOf("Arguments:"));
    expect(args).toMatch(/^ {2}table +one or more table files/m);
    expect(args).toMatch(/^ {2}question +the question, in quotes, after the tables/m);
    const examples = result.stdout.slice(result.stdout.indexOf("Examples:"));
    const shown = examples.split("\n").filter((l) => l.startsWith("  tableminds ask "));
    expect(shown.length).toBe(6);
    expect(shown.some((l) => l.includes("--thread"))).toBe(true);
  });

  it("tableminds graphs: what each graph does", async () => {
    const result = await runCli(["graphs"], {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^table_qa {6}plan, code, run, answer; then check/m);
    expect(result.stdout).toMatch(/^mom {11}Mixture-of-Minds: several plans/m);
    expect(result.stdout).toMatch(/^mcts {10}tree search over plans/m);
    expect(result.stdout).toMatch(/^orchestrator {2}subtasks for workers/m);
    expect(result.stdout).toMatch(/^ {14}\.\/graphs\/orchestrator\/graph\.ts:graph$/m);
  });

  it("a question with no table is told so, not as a missing question", async () => {
    const result = await runCli(["ask", README_QUESTION], {});
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `tableminds: missing the table before the question: name a table file first, e.g. tableminds ask table.csv "${README_QUESTION}"`,
    );
    const tableOnly = await runCli(["ask", TABLE], {});
    expect(tableOnly.stderr).toMatch(/^tableminds: missing the question after the table: /);
  });
});

describe("tableminds doctor on the embedded model", () => {
  it("names the local model and its file, not OpenAI's URL", async () => {
    // The default model's file, broken: llama.cpp must refuse it, and the doctor say so.
    const models = mkdtempSync(path.join(os.tmpdir(), "tableminds-doctor-models-"));
    const file = path.join(models, DEFAULT_LOCAL_MODEL.file);
    writeFileSync(file, Buffer.concat([Buffer.from("GGUF"), Buffer.alloc(4096, 7)]));
    const result = await runCli(
      ["doctor"],
      {
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        TABLEMINDS_MODEL: undefined,
        TABLEMINDS_MODELS_DIR: models,
      },
      120_000,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `Model:   local model ${DEFAULT_LOCAL_MODEL.name}, ${file} (every role; embedded, no endpoint)`,
    );
    expect(result.stdout).toMatch(/^ {2}DOES NOT WORK - local model .* cannot load it/m);
    expect(result.stdout).toMatch(/^PROBLEM: the local model does not work: /m);
    expect(result.stdout).not.toContain("api.openai.com");
  }, 130_000);
});

describe("SQL evidence from the orchestrator", () => {
  let stub: StubServer | undefined;

  afterAll(async () => {
    await stub?.close();
  });

  async function ask(question: string, sql: string) {
    await stub?.close();
    const team = orchestratedMedalsTeam();
    stub = await startStubOpenAI({
      respond: (req: StubRequest) => {
        if (req.role === "decomposer") {
          return JSON.stringify({ subtasks: [{ id: "s1", task: question, workers: ["sql"] }] });
        }
        if (req.role === "sql") return `\`\`\`sql\n${sql}\n\`\`\``;
        return team(req);
      },
    });
    return runCli(
      ["ask", TABLE, question, "--graph", "orchestrator", "--exit-zero"],
      stubEnv(stub.url),
    );
  }

  it("shows the rows an aggregate returned and the columns it read", async () => {
    const result = await ask(
      MEDALS_QUESTION,
      "SELECT sum(gold) AS total FROM olympics_2020_medals",
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    expect(result.stdout).not.toContain("(rows )");
    const evidence = result.stdout.slice(result.stdout.indexOf("Evidence:"));
    expect(evidence).toContain(
      [
        "  [s1.sql.q1:sql1] row 1 the query returned, 203, SQL over olympics_2020_medals:",
        "      SELECT sum(gold) AS total FROM olympics_2020_medals",
        "      it returned:",
        "        total",
        "        203",
      ].join("\n"),
    );
    expect(evidence).toContain("      reads olympics_2020_medals.csv, columns gold");
  });

  it("shows the source line of each row a selection returned, and the rows once", async () => {
    const result = await ask(
      "Which nations won more than 30 gold medals?",
      "SELECT nation FROM olympics_2020_medals WHERE gold > 30",
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^(Answer|Not sure\. Best candidate): United States, China/m);
    const evidence = result.stdout.slice(result.stdout.indexOf("Evidence:"));
    expect(evidence).toMatch(
      /\[s1\.sql\.q1:sql1\] row 1 the query returned, "United States", SQL over olympics_2020_medals:\n {6}SELECT nation .*\n {6}from olympics_2020_medals\.csv line 2\n/,
    );
    expect(evidence).toMatch(
      /\[s1\.sql\.q1:sql2\] row 2 the query returned, "China",[^\n]*\n.*\n {6}from olympics_2020_medals\.csv line 3\n/,
    );
    expect(
      evidence.match(/it returned:\n {8}nation\n {8}United States\n {8}China\n/g),
    ).toHaveLength(1);
  });
});
