import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph } from "../../graphs/orchestrator/graph.js";
import type { OrchestratorStateValue } from "../../graphs/orchestrator/state.js";
import { closeSandboxes } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { adoptOperatorFields } from "../../settings/operator.js";
import { useStubEndpoint, useTempHome } from "../support/env.js";
import { answerFromOutput, lastMessage } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

const CITIES = {
  name: "cities",
  columns: ["city", "country", "km_to_sea"],
  data: [
    ["Lyon", "France", 250],
    ["Graz", "Austria", 180],
    ["Osaka", "Japan", 0],
    ["Bern", "Switzerland", 320],
  ],
};
const COUNTRIES = {
  name: "countries",
  columns: ["country", "continent"],
  data: [
    ["France", "Europe"],
    ["Austria", "Europe"],
    ["Japan", "Asia"],
    ["Switzerland", "Europe"],
  ],
};
const USER_PROJECT = path.resolve(import.meta.dirname, "../../node_modules/.cache/tableminds");
const QUESTION = "How far from the sea are the European cities, in total, in miles?";
const fast: Partial<Configuration> = { maxCodeAttempts: 2, llmMaxRetries: 0, llmTimeoutMs: 10_000 };

function plan(subtasks: object[]): string {
  return JSON.stringify({ subtasks });
}

const JOIN_SQL =
  "```sql\nSELECT sum(c.km_to_sea) AS km FROM cities c JOIN countries n ON c.country = n.country WHERE n.continent = 'Europe'\n```";
/** The right number, written into the query instead of computed from the tables. */
const LITERAL_SQL = "```sql\nSELECT 750 FROM cities LIMIT 1\n```";

function chain(sql: string) {
  return (req: StubRequest): StubReply => {
    if (req.role === "decomposer") {
      return plan([
        { id: "s1", task: "Total km to the sea of European cities", workers: ["sql"] },
        { id: "s2", task: "Convert s1 from km to miles", workers: ["calc"], dependsOn: ["s1"] },
      ]);
    }
    if (req.role === "sql") return sql;
    if (req.role === "calc") {
      // The calc worker is told the earlier answer by name.
      expect(lastMessage(req)).toContain("s1 = 750");
      return '```python\nconvert(s1, "km", "mi")\n```';
    }
    return { status: 500, content: `unscripted ${req.role}` };
  };
}

describe("the orchestrator against the stub model", () => {
  let stub: StubServer | undefined;

  beforeAll(() => {
    useTempHome();
    mkdirSync(USER_PROJECT, { recursive: true });
  });
  afterEach(async () => {
    await stub?.close();
  });
  afterAll(async () => {
    await closeSandboxes();
  });

  async function run(
    respond: (req: StubRequest) => StubReply,
    context: Partial<Configuration> = {},
  ): Promise<OrchestratorStateValue> {
    stub = await startStubOpenAI({ respond });
    useStubEndpoint(stub.url);
    return (await graph.invoke(
      { question: QUESTION, sources: [CITIES, COUNTRIES] },
      { context: adoptOperatorFields({ ...fast, ...context }) },
    )) as OrchestratorStateValue;
  }

  it("answers with one SQL join across two tables, citing the result row, without a composer call", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") {
        return plan([
          { id: "s1", task: "Total km to the sea of European cities", workers: ["sql"] },
        ]);
      }
      if (req.role === "sql") return JOIN_SQL;
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.answer?.final).toBe("750");
    const packet = state.packets.find((p) => p.id === "s1.sql");
    expect(packet).toMatchObject({ answer: "750", error: null });
    const cited = state.evidence.filter((e) => state.answer?.evidence.includes(e.id));
    expect(cited.some((e) => e.anchor.kind === "sql" && e.value === 750)).toBe(true);
    expect(state.selection?.packets).toEqual(["s1.sql"]);
    expect(stub?.requests.map((r) => r.role)).toEqual(["decomposer", "sql"]);
    expect(state.budget.llmCalls).toBe(2);
    // The query is an attempt like a pandas run: its result re-ran on perturbed tables.
    const attempt = state.attempts.find((a) => a.id === "s1.sql.q1");
    expect(attempt?.code).toContain("SELECT sum(c.km_to_sea) AS km");
    expect(attempt?.result).toMatchObject({ ok: true, error: null, spans: [], tables: [] });
    expect(attempt?.result?.stdout).toBe("km\n750\n");
    expect(attempt?.result?.result).toMatchObject({
      from: "declared",
      kind: "scalar",
      values: [750],
      derived: "yes",
      lineage: [
        { table: "cities", rows: null, columns: ["country", "km_to_sea"] },
        { table: "countries", rows: null, columns: ["country", "continent"] },
      ],
    });
    expect(packet?.derived).toBe("yes");
    expect(state.evidence.map((e) => e.id)).toContain("s1.sql.q1:result");
    expect(state.verdict).toMatchObject({ pass: true, support: "derived" });
  });

  it("does not pass the right number when the SQL only states it as a literal", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") {
        return plan([
          { id: "s1", task: "Total km to the sea of European cities", workers: ["sql"] },
        ]);
      }
      if (req.role === "sql") return LITERAL_SQL;
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.answer?.final).toBe("750");
    expect(state.packets.find((p) => p.id === "s1.sql")).toMatchObject({
      answer: "750",
      derived: "no",
    });
    const result = state.attempts.find((a) => a.id === "s1.sql.q1")?.result?.result;
    expect(result).toMatchObject({ values: [750], derived: "no" });
    expect(result?.derivation).toMatch(/unchanged when the table's values were perturbed/);
    expect(state.verdict?.pass).toBe(false);
    expect(state.verdict?.support).not.toBe("derived");
    expect(state.verdict?.issues.join("\n")).toMatch(/not derived from the table/);
  });

  it("runs SQL, then exact unit arithmetic on its answer in the sandbox", async () => {
    const state = await run(chain(JOIN_SQL));
    // 750 km / 1.609344 km per mile, computed exactly, shown to 10 significant digits.
    expect(state.answer?.final).toBe("466.0283942");
    expect(state.round).toBe(2);
    const calc = state.packets.find((p) => p.id === "s2.calc");
    expect(calc?.answer).toBe("466.0283942");
    expect(state.attempts.map((a) => a.id)).toContain("s2.calc.a1");
    expect(state.edges).toContainEqual({
      from: "claim:s2.calc",
      to: "claim:s1.sql",
      kind: "depends",
    });
    expect(state.plan).toEqual([
      "s1 [sql] Total km to the sea of European cities",
      "s2 [calc] Convert s1 from km to miles (after s1)",
    ]);
    // The arithmetic reads no table itself; it is derived because s1's answer is.
    const result = state.attempts.find((a) => a.id === "s2.calc.a1")?.result?.result;
    expect(result).toMatchObject({ from: "declared", kind: "scalar", derived: "yes" });
    expect(result?.values[0]).toBeCloseTo(466.0283942, 7);
    expect(result?.derivation).toMatch(/^arithmetic over s1, an answer derived from the tables/);
    expect(result?.derivation).toMatch(/the program itself reads no table/);
    expect(calc?.derived).toBe("yes");
    expect(state.verdict).toMatchObject({ pass: true, support: "derived" });
  });

  it("does not pass arithmetic on an answer the SQL only stated as a literal", async () => {
    const state = await run(chain(LITERAL_SQL));
    expect(state.answer?.final).toBe("466.0283942");
    expect(state.packets.find((p) => p.id === "s1.sql")?.derived).toBe("no");
    const result = state.attempts.find((a) => a.id === "s2.calc.a1")?.result?.result;
    expect(result?.derived).toBe("no");
    expect(result?.derivation).toMatch(/^arithmetic over s1; s1 is not derived from the tables/);
    expect(state.packets.find((p) => p.id === "s2.calc")?.derived).toBe("no");
    expect(state.verdict?.pass).toBe(false);
  });

  it("shows two workers' conflicting answers in the evidence and lets the composer weigh them", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") {
        return plan([
          { id: "s1", task: "Total km to the sea of European cities", workers: ["pandas", "sql"] },
        ]);
      }
      // The pandas worker misses Bern: it sums only the first two rows.
      if (req.role === "planner") return "<plan>\n1. Sum km_to_sea of the first two rows.\n</plan>";
      if (req.role === "coder") return "```python\nprint(cities['km_to_sea'].head(2).sum())\n```";
      if (req.role === "answerer") return answerFromOutput(req);
      if (req.role === "sql") return JOIN_SQL;
      if (req.role === "composer") {
        expect(lastMessage(req)).toContain("Workers disagree");
        return "Final Answer: 750\nEvidence: s1.sql.q1:sql1";
      }
      return { status: 500, content: `unscripted ${req.role}` };
    });
    const answers = Object.fromEntries(state.packets.map((p) => [p.worker, p.answer]));
    expect(answers).toEqual({ pandas: "430", sql: "750" });
    expect(state.selection?.conflicts).toEqual([
      {
        subtask: "s1",
        packets: ["s1.pandas", "s1.sql"],
        answers: ["430", "750"],
        kept: expect.any(String),
      },
    ]);
    expect(state.edges).toContainEqual({
      from: "claim:s1.pandas",
      to: "claim:s1.sql",
      kind: "conflicts",
    });
    const claims = state.claims.filter((c) => c.id.startsWith("claim:s1."));
    expect(claims.map((c) => c.status)).toEqual(["conflicted", "conflicted"]);
    expect(state.answer?.final).toBe("750");
    expect(state.answer?.evidence).toContain("s1.sql.q1:sql1");
    // Both workers' attempts are kept apart under their own names.
    expect(state.attempts.map((a) => a.id)).toContain("s1.pandas.a1");
  });

  it("looks a city up without a model call, citing the row's cells", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") {
        return plan([{ id: "s1", task: 'What do we know about "Graz"?', workers: ["lookup"] }]);
      }
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.packets[0]).toMatchObject({
      id: "s1.lookup",
      answer: "city=Graz; country=Austria; km_to_sea=180",
      score: 0.8,
    });
    expect(state.packets[0]?.evidence).toEqual([
      "cities:r1:city",
      "cities:r1:country",
      "cities:r1:km_to_sea",
    ]);
    expect(stub?.requests.map((r) => r.role)).toEqual(["decomposer"]);
  });

  it("uses a worker added as one file in a folder of the user's", async () => {
    // A user's project: its workers import "tableminds/workers", resolved from the package.
    const dir = mkdtempSync(path.join(USER_PROJECT, "workers-"));
    cpSync(
      path.resolve(import.meta.dirname, "../fixtures/workers/rowcount.ts"),
      path.join(dir, "rowcount.ts"),
    );
    let described = "";
    const state = await run(
      (req) => {
        if (req.role === "decomposer") {
          described = String(req.messages[0]?.content ?? "");
          return plan([
            {
              id: "s1",
              task: "How many cities are listed?",
              workers: ["rowcount"],
              args: { table: "cities" },
            },
          ]);
        }
        return { status: 500, content: `unscripted ${req.role}` };
      },
      { workersDir: dir },
    );
    expect(described).toContain("- rowcount: Counts the rows of one table, exactly.");
    expect(described).toContain("table (string: the table to count)");
    expect(state.answer?.final).toBe("4");
    expect(state.packets[0]).toMatchObject({ worker: "rowcount", answer: "4", score: 1 });
  });

  it("falls back to pandas on the whole question when the split is unusable", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") return "I would split this into parts.";
      if (req.role === "planner") return "<plan>\n1. Count the rows.\n</plan>";
      if (req.role === "coder") return "```python\nprint(len(cities))\n```";
      if (req.role === "answerer") return answerFromOutput(req);
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.subtasks).toEqual([
      { id: "s1", task: QUESTION, workers: ["pandas"], dependsOn: [], args: {} },
    ]);
    expect(state.answer?.final).toBe("4");
  });

  it("does not run a subtask whose input found no answer, and says why", async () => {
    const state = await run((req) => {
      if (req.role === "decomposer") {
        return plan([
          { id: "s1", task: "Total km", workers: ["sql"] },
          { id: "s2", task: "In miles", workers: ["calc"], dependsOn: ["s1"] },
        ]);
      }
      if (req.role === "sql") return "```sql\nSELECT nope FROM nowhere\n```";
      return { status: 500, content: `unscripted ${req.role}` };
    });
    expect(state.packets.find((p) => p.id === "s1.sql")?.error).toBe("the worker found no answer");
    expect(state.packets.find((p) => p.id === "s2.calc")?.error).toBe(
      "not run: s1 found no answer",
    );
    expect(stub?.requests.filter((r) => r.role === "sql")).toHaveLength(2);
    expect(stub?.requests.some((r) => r.role === "calc")).toBe(false);
    expect(state.answer).toBeNull();
    expect(state.verdict?.pass).toBe(false);
  });

  it("stops dispatching when the rounds run out", async () => {
    const state = await run(
      (req) => {
        if (req.role === "decomposer") {
          return plan([
            { id: "s1", task: "Total km", workers: ["sql"] },
            {
              id: "s2",
              task: "In miles",
              workers: ["calc"],
              dependsOn: ["s1"],
              args: { expression: "s1" },
            },
          ]);
        }
        if (req.role === "sql") return JOIN_SQL;
        return { status: 500, content: `unscripted ${req.role}` };
      },
      { maxDispatchRounds: 1 },
    );
    expect(state.packets.find((p) => p.id === "s2.calc")?.error).toBe(
      "not run: the 1 dispatch rounds were used up",
    );
    expect(state.selection?.uncovered).toEqual(["s2"]);
    // The step that answers the question never ran: there is no answer, and no composer call.
    expect(state.answer).toBeNull();
    expect(stub?.requests.map((r) => r.role)).toEqual(["decomposer", "sql"]);
  });
});
