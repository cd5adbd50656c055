import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION } from "../support/scripts.js";
import { type StubRequest, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

/** A team whose coder writes `query` in the query dialect and whose answerer says `answer`. */
function queryTeam(query: string, answer: string, seen: StubRequest[] = []) {
  return (req: StubRequest) => {
    seen.push(req);
    if (req.role === "query") return `\`\`\`query\n${query}\n\`\`\``;
    if (req.role === "answerer") return `Final Answer: ${answer}\nEvidence: a1:result`;
    return { status: 500, content: `no reply scripted for role ${req.role}` };
  };
}

describe("ask with the coder's query dialect (the real sandbox runs the compiled pandas)", () => {
  const stubs: StubServer[] = [];
  afterAll(async () => {
    await Promise.all(stubs.map((s) => s.close()));
  });

  async function ask(query: string, answer: string, seen: StubRequest[] = [], more: string[] = []) {
    const stub = await startStubOpenAI({ respond: queryTeam(query, answer, seen) });
    stubs.push(stub);
    const flags = ["--no-memory", "--coder-dialect", "query", "--max-reflections", "0"];
    return runCli(["ask", TABLE, MEDALS_QUESTION, ...flags, ...more], stubEnv(stub.url));
  }

  it("answers from a query: one model call, the query's steps as the plan, the columns in the prompt", async () => {
    const seen: StubRequest[] = [];
    const result = await ask("result = sum gold", "203", seen);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    expect(result.stdout).toMatch(/^Check: passed/m);
    expect(result.stdout).toContain('result = pd.to_numeric(rows["gold"], errors="coerce").sum()');
    expect(result.stderr).toMatch(/coder +a1: query result = sum gold \(3 lines of python\)/);
    // The query's result is the answer: neither a planner nor an answerer call.
    expect(seen.map((r) => r.role)).toEqual(["query"]);
    const prompt = seen[0]?.messages.at(-1)?.content ?? "";
    expect(prompt).toContain('- ["gold","number"]');
    expect(prompt).toContain("The answer is a number.");
  });

  it("does not pass a query over another column (silver), nor one that drops the rows named", async () => {
    const silver = await ask("result = sum silver", "188");
    expect(silver.code, silver.stdout).toBe(3);
    expect(silver.stdout).toMatch(/^Not sure\. Best candidate: 188/m);
    const question = "How many gold medals did Japan win?";
    const stub = await startStubOpenAI({ respond: queryTeam("result = sum gold", "203") });
    stubs.push(stub);
    const dropped = await runCli(
      ["ask", TABLE, question, "--no-memory", "--coder-dialect", "query", "--max-reflections", "0"],
      stubEnv(stub.url),
    );
    expect(dropped.code, dropped.stdout).toBe(3);
    expect(dropped.stdout).toMatch(/which the question does not name/);
  });

  it("records a reply that is no query of the table as a parse error and tries again", async () => {
    const result = await ask(
      "result = sum medals",
      "203",
      [],
      ["--json", "--max-code-attempts", "2"],
    );
    expect(result.code).toBe(3);
    const attempts = JSON.parse(result.stdout).attempts as { parseError: string | null }[];
    expect(attempts).toHaveLength(2);
    for (const a of attempts) expect(a.parseError).toMatch(/no query of this table/);
  });
});
