import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { stubEnv } from "../support/env.js";
import { FINANCE, financeWorkbookBytes } from "../support/messy-workbook.js";
import { answerFromOutput } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { fixtureDir } from "../support/table-fixtures.js";

/** The obvious code for what the coder is shown: the Q1 revenue column, summed. */
function sumQ1(prompt: string): string {
  const column = prompt.includes("`Revenue / Q1`") ? "Revenue / Q1" : "Revenue";
  return [
    "```python",
    `total = finance[${JSON.stringify(column)}].sum()`,
    "print(total)",
    "```",
  ].join("\n");
}

describe("a finance workbook as a new user gives it", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  let file: string;

  beforeAll(async () => {
    stub = await startStubOpenAI({
      respond: (req) => {
        const prompt = req.messages.map((m) => m.content).join("\n");
        if (req.role === "planner") return "<plan>\n1. Sum the Q1 revenue of the regions.\n</plan>";
        if (req.role === "coder") return sumQ1(prompt);
        if (req.role === "answerer") return answerFromOutput(req);
        return { status: 500, content: `no reply for ${req.role}` };
      },
    });
    env = stubEnv(stub.url);
    file = path.join(fixtureDir(), "finance.xlsx");
    writeFileSync(file, financeWorkbookBytes());
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("sums the regions once: the Total row is not data, and the cells are cited in the sheet", async () => {
    const result = await runCli(
      ["ask", file, "What was the Q1 revenue of all regions?", "--no-memory"],
      env,
    );
    const expected = FINANCE.amounts.reduce((sum, row) => sum + (row[0] ?? 0), 0);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Answer: ${expected}$`, "m"));
    expect(result.stdout).toMatch(/Results!B5/);
    // The rows the sum comes from, as the sheet writes them.
    expect(result.stdout).toContain("$1,250,400");
    const coder = stub.requests.find((r) => r.role === "coder");
    const prompt = coder?.messages.map((m) => m.content).join("\n") ?? "";
    expect(prompt).toContain("Total rows left out of the data");
    expect(prompt).toContain("finance_totals");
    expect(prompt).toContain('Hidden sheet not loaded: "Lookup"');
  }, 90_000);

  it("--json names the cited cells in the sheet's own places, not by internal ids", async () => {
    const result = await runCli(
      ["ask", file, "What was the Q1 revenue of all regions?", "--no-memory", "--json"],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const { citations } = JSON.parse(result.stdout) as {
      citations: { evidence: string; cells: string[] }[];
    };
    expect(citations.length).toBeGreaterThan(0);
    const cells = citations.flatMap((c) => c.cells).join("; ");
    expect(cells).toMatch(/Results!B5/);
    expect(cells).not.toMatch(/:r\d+:/);
  }, 90_000);

  it("inspect prints the reading; --raw the literal one; --json the references", async () => {
    const shown = await runCli(["inspect", file], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("`Revenue / Q3`");
    expect(shown.stdout).toContain("Regional results FY2024");
    expect(shown.stdout).toContain("Source: regional ledgers, March 2025.");
    expect(shown.stdout).toMatch(
      /Sheet "Results", header at sheet row 4; columns A="Region", B="Revenue \/ Q1"/,
    );
    const raw = await runCli(["inspect", file, "--raw"], env);
    expect(raw.stdout).toContain("`column_3`");
    expect(raw.stdout).not.toContain("Revenue / Q3");
    const json = await runCli(["inspect", file, "--json", "--sheet", FINANCE.hiddenSheet], env);
    const tables = JSON.parse(json.stdout) as { name: string }[];
    expect(tables.map((t) => t.name)).toEqual(["finance"]);
    const missing = await runCli(["inspect", path.join(fixtureDir(), "nope.csv")], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
  }, 90_000);
});
