import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLES } from "../support/env.js";
import { MEDALS_QUESTION } from "../support/scripts.js";

/*
 * The README's first command on the real embedded model (the small fallback the tests install):
 * the coder writes a query over the table's columns, and the answer is right and passes.
 */

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
// No endpoint: the installed default local model answers.
const LOCAL = { OPENAI_API_KEY: "", OPENAI_BASE_URL: "", TABLEMINDS_MODEL: "" };

describe("ask on the embedded model", () => {
  it("answers the README's question right, from a query, and the check passes", async () => {
    const result = await runCli(
      ["ask", TABLE, MEDALS_QUESTION, "--no-memory", "--local-budget", "0"],
      LOCAL,
      200_000,
    );
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^Answer: 203$/m);
    expect(result.stdout).toMatch(/^Check: passed/m);
    expect(result.stderr).toMatch(/^coder +a1: query result = sum gold /m);
  }, 240_000);

  it("ends not sure, with the best candidate it has, when its budget runs out", async () => {
    const result = await runCli(
      ["ask", TABLE, MEDALS_QUESTION, "--no-memory", "--local-budget", "1500", "--json"],
      LOCAL,
      100_000,
    );
    expect(result.code, result.stderr).toBe(3);
    const out = JSON.parse(result.stdout) as { verdict: { sure: boolean; issues: string[] } };
    expect(out.verdict.sure).toBe(false);
    expect(out.verdict.issues.join(" ")).toMatch(/budget of 1\.5 s \(localBudgetMs\) ran out/);
    expect(result.stderr).toMatch(/^budget +1\.5 s for the local model ran out/m);
  }, 120_000);
});
