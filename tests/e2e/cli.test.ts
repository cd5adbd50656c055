import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

describe("tableminds CLI", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    env = stubEnv(stub.url);
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("answers, streams progress per node, and prints the evidence", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    expect(result.stdout).toContain("[a1:out2]");
    expect(result.stdout).toContain("4 | print(total)");
    const stages = result.stderr
      .split("\n")
      .map((line) => line.split(/\s+/)[0])
      .filter(Boolean);
    expect(stages).toEqual(["ingest", "planner", "coder", "executor", "answerer", "checker"]);
    expect(result.stderr).toMatch(/^checker\s+passed \(type 2\/2, format 2\/2, grounding 2\/2\)$/m);
    expect(result.stderr).toContain("olympics_2020_medals (10 rows x 6 columns)");
    expect(result.stdout).toMatch(
      /^Check: passed \(type 2\/2, format 2\/2, grounding 2\/2; by rules\)$/m,
    );
  });

  it("recalls the lesson of the first run from $TABLEMINDS_HOME/memory.sqlite in a new process", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION.replace("gold", "silver")], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^recall\s+1 lesson from similar past questions \(similarity 0\.\d\d\)$/m,
    );
    const forgetful = await runCli(["ask", TABLE, MEDALS_QUESTION, "--no-memory"], env);
    expect(forgetful.stderr).not.toMatch(/^recall/m);
  });

  it("prints {answer, evidence, plan, attempts} with --json", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION, "--json", "--quiet"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    const json = JSON.parse(result.stdout);
    expect(json.answer.final).toBe("203");
    expect(json.answer.evidence).toContain("a1:out2");
    expect(json.plan).toHaveLength(2);
    expect(json.attempts[0].result.ok).toBe(true);
    expect(json.evidence.map((e: { id: string }) => e.id)).toContain("a1:by_nation");
  });

  it("keeps stdout to the JSON answer when a node has to retry its model call", async () => {
    let plannerCalls = 0;
    const team = medalsTeam();
    // The client's own retries are off, so the node's retry is what recovers.
    const flaky = await startStubOpenAI({
      respond: (req) =>
        req.role === "planner" && ++plannerCalls === 1 ? { status: 503 } : team(req),
    });
    try {
      const result = await runCli(
        ["ask", TABLE, MEDALS_QUESTION, "--json", "--no-memory", "--llm-retries", "0"],
        stubEnv(flaky.url),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).answer.final).toBe("203");
      expect(result.stderr).toMatch(
        /^tableminds: warning: planner model .* 503 .*; running the node again$/m,
      );
      expect(plannerCalls).toBe(2);
    } finally {
      await flaky.close();
    }
  });

  it("says what to set when no model endpoint is configured", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION], {
      ...env,
      OPENAI_BASE_URL: undefined,
      OPENAI_API_KEY: undefined,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/OPENAI_API_KEY/);
    expect(result.stderr).toMatch(/OPENAI_BASE_URL/);
  });

  it("names the file and the problem for a missing table", async () => {
    const result = await runCli(["ask", "no/such/table.csv", "q?"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no\/such\/table\.csv/);
  });

  it("rejects an unknown graph and lists the known ones", async () => {
    const result = await runCli(["ask", TABLE, "q?", "--graph", "nope"], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/unknown graph "nope".*table_qa/);
  });

  it("documents every option and environment variable in --help", async () => {
    const result = await runCli(["ask", "--help"], env);
    expect(result.code).toBe(0);
    for (const word of [
      "--json",
      "--graph",
      "--model",
      "--max-code-attempts",
      "--exec-timeout",
      "--thread",
      "--no-memory",
      "--max-reflections",
      "--llm-checker",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "TABLEMINDS_MODEL",
      "TABLEMINDS_PYTHON",
      "TABLEMINDS_HOME",
    ]) {
      expect(result.stdout).toContain(word);
    }
  });
});
