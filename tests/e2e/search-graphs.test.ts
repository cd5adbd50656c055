import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam, orchestratedMedalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { tablebenchTeam } from "../support/tablebench-team.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

describe("mom and mcts from the command line", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    env = stubEnv(stub.url);
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("asks with --graph mom: a line per branch as it finishes, then the vote", async () => {
    const result = await runCli(
      ["ask", TABLE, MEDALS_QUESTION, "--graph", "mom", "--plans", "3"],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    const branches = result.stderr.match(/^branch\s+p\d\.c1\.a1 answered 203 \(check passed\)$/gm);
    expect(branches).toHaveLength(3);
    expect(result.stderr).toMatch(/^vote\s+203: p1\.c1\.a1, 3 of 3 branches \(weight 18\)$/m);
    expect(result.stdout).toContain("[a1:out2]");
  });

  it("asks with --graph mcts within its budget, then names the best answer", async () => {
    const before = stub.requests.length;
    const result = await runCli(
      ["ask", TABLE, MEDALS_QUESTION, "--graph", "mcts", "--search-budget", "10", "--json"],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).answer.final).toBe("203");
    expect(stub.requests.length - before).toBeLessThanOrEqual(10);
    expect(result.stderr).toMatch(/^best\s+203$/m);
    // One line for the search; the branches' own planners and coders say nothing.
    expect(result.stderr).toMatch(/^search\s+\d+ branch(es)? grown, \d+ answers? backed up$/m);
    expect(result.stderr).not.toMatch(/^(planner|coder)\s/m);
  });
});

describe("the orchestrator from the command line", () => {
  it("asks with --graph orchestrator: the split, each worker's packet, the choice, the answer", async () => {
    const stub = await startStubOpenAI({ respond: orchestratedMedalsTeam() });
    try {
      const result = await runCli(
        ["ask", TABLE, MEDALS_QUESTION, "--graph", "orchestrator"],
        stubEnv(stub.url),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Answer: 203$/m);
      expect(result.stderr).toMatch(/^decomposer 1 subtask: s1 \[pandas, sql\]$/m);
      expect(result.stderr).toMatch(/^worker\s+s1\.pandas answered 203 \(score 0\.90\)$/m);
      expect(result.stderr).toMatch(/^worker\s+s1\.sql answered 203 \(score 0\.90\)$/m);
      expect(result.stderr).toMatch(/^selector\s+kept s1\.sql, s1\.pandas \(100% covered\)$/m);
      // Nothing from inside the pandas worker's own solve.
      expect(result.stderr).not.toMatch(/^planner\s/m);
      expect(result.stdout).toContain("[s1.sql.q1:sql1]");
      expect(result.stdout).toContain("[s1.pandas.a1:out2]");
    } finally {
      await stub.close();
    }
  });
});

describe("mom in an evaluation", () => {
  let stub: StubServer;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: tablebenchTeam });
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("runs TableBench questions through mom and scores them", async () => {
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), "tableminds-mom-eval-")), "run");
    const args = ["eval", "--dataset", "tablebench", "--data", SAMPLE, "--limit", "3"];
    const result = await runCli([...args, "--graph", "mom", "--plans", "2", "--out", out], {
      ...stubEnv(stub.url),
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = readFileSync(path.join(out, "results.jsonl"), "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    const run = JSON.parse(readFileSync(path.join(out, "run.json"), "utf8"));
    expect(JSON.stringify(run)).toContain('"graph":"mom"');
    // Two branches of three calls each per question: the budget counts them all.
    const calls = lines.map((line) => JSON.parse(line).llmCalls);
    expect(calls).toEqual([6, 6, 6]);
  });
});
