import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

/** Each mistake gets one line on stderr, prefixed like every message of the command. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^tableminds: /);
  return lines[0] ?? "";
}

describe("tableminds on the command line's mistakes", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    env = stubEnv(stub.url);
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("refuses an empty question before loading anything or calling the model", async () => {
    const result = await runCli(["ask", "no/such/table.csv", "   "], env);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe(
      "tableminds: the question is empty: ask something about the table, in quotes",
    );
    expect(stub.requests).toEqual([]);
  });

  it("says to quote a question given as several words", async () => {
    const result = await runCli(["ask", TABLE, "How", "many", "medals?"], env);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/put the question in quotes, e\.g\. tableminds ask /);
  });

  it.each([
    [
      ["ask", "--temperature", "7", TABLE, "q?"],
      /'7' is invalid\. Too big: expected number to be <=2 \(see tableminds ask --help\)$/,
    ],
    [
      ["ask", "-g", "nope", TABLE, "q?"],
      /unknown graph "nope"; langgraph\.json has: table_qa, mom, mcts, orchestrator \(see tableminds ask --help\)$/,
    ],
    [
      ["eval", "run", "--dataset", "nope"],
      /Allowed choices are .*finqa \(see tableminds eval run --help\)$/,
    ],
    [["frobnicate"], /^tableminds: unknown command 'frobnicate' \(see tableminds --help\)$/],
  ])("says what is wrong with %j in one line", async (args, message) => {
    const result = await runCli(args, env);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(message);
    expect(result.stdout).toBe("");
  });

  it("refuses --review without a terminal in one line, after the sandbox has started", async () => {
    // ask starts the local sandbox before it loads the graph; this refusal comes after that.
    const result = await runCli(["ask", TABLE, "q?", "--review", "code"], env, 20_000);
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/--review pauses for approve, edit or reject/);
  });

  it("checks the endpoint configuration before loading the table", async () => {
    const result = await runCli(["ask", "no/such/table.csv", "q?"], {
      ...env,
      OPENAI_BASE_URL: undefined,
      OPENAI_API_KEY: undefined,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^tableminds: No model endpoint is configured/);
    expect(result.stderr).not.toMatch(/no\/such\/table/);
  });
});
