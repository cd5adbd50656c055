import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_PLAN, MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubRequest, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
const fenced = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

/**
 * A team whose coder writes `code` and whose answerer says `answer` whatever ran: the ways a
 * wrong answer used to pass the check. Each test names its own question so runs do not share
 * a stub script.
 */
function wrongTeam(code: string, answer: string) {
  return (req: StubRequest) => {
    if (req.role === "planner") return MEDALS_PLAN;
    if (req.role === "coder") return fenced(code);
    if (req.role === "answerer") return `Final Answer: ${answer}\nEvidence: a1:out1`;
    return { status: 500, content: `no reply scripted for role ${req.role}` };
  };
}

describe("ask never asserts an answer the check did not pass", () => {
  const stubs: StubServer[] = [];
  let right: Record<string, string | undefined>;

  beforeAll(async () => {
    const stub = await startStubOpenAI({ respond: medalsTeam() });
    stubs.push(stub);
    right = stubEnv(stub.url);
  });

  afterAll(async () => {
    await Promise.all(stubs.map((s) => s.close()));
  });

  async function ask(code: string, answer: string, more: string[] = []) {
    const stub = await startStubOpenAI({ respond: wrongTeam(code, answer) });
    stubs.push(stub);
    return runCli(
      ["ask", TABLE, MEDALS_QUESTION, "--no-memory", "--max-reflections", "0", ...more],
      stubEnv(stub.url),
    );
  }

  it("passes a total derived from the table, exit 0, citing the code's result", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION, "--no-memory"], right);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    expect(result.stdout).toMatch(/^Check: passed/m);
    expect(result.stdout).toMatch(/^Support: derived from the code's result; confidence 0\.9/m);
  });

  it("says it is not sure of a cell that happens to hold a number, and exits 3 (the README's wrong 14)", async () => {
    const result = await ask("gold = df['gold']", "14");
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/^Not sure\. Best candidate: 14 \(confidence 0\.\d\d\)$/m);
    expect(result.stdout).not.toMatch(/passed/);
    expect(result.stdout).toMatch(/^Check: FAILED/m);
    expect(result.stdout).toMatch(/"14" merely occurs in olympics_2020_medals:r\d+:/);
  });

  it("keeps exit 0 with --exit-zero, and puts support and confidence in --json", async () => {
    const result = await ask("gold = df['gold']", "14", ["--exit-zero", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const verdict = JSON.parse(result.stdout).verdict;
    expect(verdict).toMatchObject({ pass: false, sure: false, support: "coincidental" });
    expect(verdict.confidence).toBeLessThan(0.5);
  });

  it("prints what the model wrote without obeying its terminal escape sequences", async () => {
    const result = await ask("gold = df['gold']", "14\u001b]0;owned\u0007");
    expect(result.stdout).not.toContain("\u001b");
    expect(result.stdout).not.toContain("\u0007");
    expect(result.stdout).toContain("Best candidate: 14\\x1b]0;owned\\x07");
  });

  it("fails the right number typed in as a literal: it does not depend on the table", async () => {
    const result = await ask("print(203)", "203");
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/not derived from the table: unchanged when/);
  });

  it("states the alignment of the computation with the question", async () => {
    const result = await runCli(["ask", TABLE, MEDALS_QUESTION, "--no-memory"], right);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^Alignment: the result is the total of `gold` over all 10 rows; it computes the/m,
    );
  });

  it("fails a derived total of another column than the one asked, and says so", async () => {
    const result = await ask("result = int(df['silver'].sum())", "188", ["--json"]);
    const verdict = JSON.parse(result.stdout).verdict;
    expect(result.code, result.stderr).toBe(3);
    expect(verdict.pass).toBe(false);
    expect(verdict.alignment.status).toBe("conflicted");
    expect(verdict.alignment.summary).toMatch(/depends on `silver`, not on `gold`/);
  });

  it("gives prose with no claim to check as answered but unchecked, exit 4, without reflecting", async () => {
    const prose =
      "The table lists the ten nations with the most gold medals at the games, ordered by their rank.";
    const result = await ask("print(df.head())", prose, ["--max-reflections", "2"]);
    expect(result.code, result.stderr).toBe(4);
    expect(result.stdout).toMatch(/^Answer \(unchecked\): The table lists/m);
    expect(result.stdout).toMatch(/^Check: unchecked \(the answer states no value or claim/m);
    expect(result.stderr).not.toMatch(/reflector/);
  });

  it("fails an answer the code's own result contradicts, whatever else it printed", async () => {
    const result = await ask(
      "print(df['gold'].head(3).sum())\nresult = int(df['gold'].sum())\nprint(result)",
      "113",
    );
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/"113" differs from a1:result, the code's declared result: 203/);
  });
});
