import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { InMemoryStore } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import * as mom from "../../graphs/mom/graph.js";
import type { MomStateValue } from "../../graphs/mom/state.js";
import * as orchestrator from "../../graphs/orchestrator/graph.js";
import type { OrchestratorStateValue } from "../../graphs/orchestrator/state.js";
import { graphFromModule } from "../../graphs/registry.js";
import * as tableQa from "../../graphs/table_qa/graph.js";
import { auditRun, readAuditRun } from "../../models/audit.js";
import { closeSandboxes } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { offlineEmbed } from "../../storage/memory/embeddings.js";
import { runCli } from "../support/cli.js";
import { useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { citingAnswerer } from "../support/privacy-team.js";
import { lastMessage } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

/*
 * The canary: a text cell and a number planted in a table must never reach the model under the
 * `values` and `schema` privacy modes, by any road (the table context, printed output, the
 * code's result, error messages, the checker's notes, reflections, memory, the orchestrator's
 * workers, mom's judge); with privacy `off` they do, so the check can fail. Each run's audit log
 * must list exactly the requests the stub model received.
 */

const CANARY = "ZQX-canary-7741";
const NUMBER = "987654.321";
/** Too short for the last-line scrub: only the modes' own rules keep it home. */
const SHORT = "Q7";
const LEDGER = {
  name: "ledger",
  columns: ["item", "category", "amount", "qty", "code"],
  data: [
    ["Widget", "tools", 12.5, 3, "Kx"],
    ["Gadget", "tools", 40.25, 7, "Mv"],
    [CANARY, "secret", 987654.321, 2, SHORT],
    ["Sprocket", "parts", 1500000.75, 5, "Rb"],
    ["Flange", "parts", 99.99, 11, "Tn"],
    ["Bracket", "misc", 310.4, 4, "Wd"],
  ],
};
const SOURCES = [LEDGER];
const QUESTION = "Which item costs between 900000 and 1000000?";
const fenced = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

/** The row the canary is in, found without naming it: the code never holds the canary. */
const PICK = 'row = df[(df["amount"] > 900000) & (df["amount"] < 1000000)].iloc[0]';
const RAISES = fenced(
  `${PICK}\nraise ValueError(f"bad row: {row['item']} ({row['code']}) costs {row['amount']}")`,
);
const CONVERTS = fenced(
  'by_amount = df.sort_values("amount")\nx = float(by_amount["item"].iloc[4])',
);
const PRINTS = fenced(
  `${PICK}\nprint(row["item"])\nprint(row["amount"])\nprint(row["code"])\nresult = row["item"]`,
);
const COUNTS = fenced('n = int((df["amount"] > 100).sum())\nprint("rows:", len(df))\nresult = n');

/** JSON text with every object's keys sorted, so that two spellings of one body compare equal. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  return JSON.stringify(sorted(value));
}

/** Anything of the canary row: its text in any case, the number's digits, its short code. */
function leaks(body: string): boolean {
  return /canary-7741/i.test(body) || body.includes(NUMBER.slice(0, 6)) || /\bQ7\b/.test(body);
}

interface Scenario {
  coder?: string[];
  /** Answers before the answerer starts citing. */
  wrongAnswers?: string[];
}

/** A scripted team; each role's replies in order, the last one repeating. */
function team(scenario: Scenario) {
  let coder = 0;
  let answers = 0;
  const codes = scenario.coder ?? [PRINTS];
  return (req: StubRequest): StubReply => {
    const prompt = lastMessage(req);
    switch (req.role) {
      case "planner":
        return "<plan>\n1. Find the rows the question names.\n2. Set result.\n</plan>";
      case "coder":
        return codes[Math.min(coder++, codes.length - 1)] ?? COUNTS;
      case "answerer": {
        const wrong = scenario.wrongAnswers?.[answers++];
        return wrong === undefined ? citingAnswerer(req) : `Final Answer: ${wrong}`;
      }
      case "checker":
        return '{"type": 1, "format": 2, "grounding": 1, "issues": ["the answer may not follow"]}';
      case "reflector":
        return "Diagnosis: the answer did not follow the result.\nRoute: code\nImprovement:\n1. Answer with the result.";
      case "archiver":
        return '{"lessons": ["filter the amount column by its range"], "pitfalls": []}';
      case "judge":
        return "Winner: B";
      case "decomposer":
        return JSON.stringify({
          subtasks: [
            { id: "s1", task: QUESTION, workers: ["lookup", "sql"] },
            {
              id: "s2",
              task: "How many items cost more than 100?",
              workers: ["pandas", "sql"],
              dependsOn: ["s1"],
            },
          ],
        });
      case "sql":
        return /between 900000/.test(prompt)
          ? "```sql\nSELECT item FROM ledger WHERE amount BETWEEN 900000 AND 1000000\n```"
          : "```sql\nSELECT count(*) AS n FROM ledger WHERE amount > 50\n```";
      case "composer":
        return "Final Answer: 3\nEvidence: ";
      default:
        return { status: 500, content: `no reply for ${req.role}` };
    }
  };
}

describe("privacy modes: the canary never leaves", () => {
  let stub: StubServer;
  let respond: (req: StubRequest) => StubReply = () => ({ status: 500 });
  const home = useTempHome();

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: (req) => respond(req), embed: offlineEmbed });
    useStubEndpoint(stub.url);
  });
  afterAll(async () => {
    await stub?.close();
    await closeSandboxes();
  });

  /**
   * Runs `fn` with `scenario`'s team under its own audit run: what the stub received (each body
   * as JSON text, sorted) and what the audit log says was sent.
   */
  async function observed<T>(scenario: Scenario, fn: () => Promise<T>) {
    respond = team(scenario);
    const before = stub.requests.length;
    const run = `canary-${randomUUID()}`;
    const value = await auditRun(run, fn);
    const received = stub.requests.slice(before);
    const sent = received.map((r) => canonical(r.body)).sort();
    const logged = readAuditRun(run)
      .filter((e) => e.kind === "request")
      .map((e) => canonical(JSON.parse(e.body ?? "null")))
      .sort();
    return { value, received, sent, logged };
  }

  const base = (privacy: Configuration["privacy"]): Partial<Configuration> => ({
    privacy,
    memory: false,
    llmMaxRetries: 0,
    maxCodeAttempts: 3,
  });

  async function tableQaRun(privacy: Configuration["privacy"]) {
    return observed({ coder: [RAISES, CONVERTS, PRINTS], wrongAnswers: ["5"] }, () =>
      graphFromModule(tableQa).invoke(
        { question: QUESTION, sources: SOURCES },
        withContext({ ...base(privacy), llmChecker: true, maxReflections: 1 }),
      ),
    );
  }

  it("with privacy off, the canary does reach the model (the check can fail)", async () => {
    const run = await tableQaRun("off");
    expect(run.sent.some(leaks)).toBe(true);
    expect(run.logged).toEqual(run.sent);
  });

  for (const mode of ["values", "schema"] as const) {
    describe(`privacy ${mode}`, () => {
      it("table_qa: errors quoting it, code printing it, its result, the checker and a reflection", async () => {
        const run = await tableQaRun(mode);
        const state = run.value as TableQAStateValue;
        // Every road was taken: two failures, a run that printed the canary, a wrong answer
        // rejected, a reflection, a second round, the checker model.
        expect(state.attempts.filter((a) => a.result?.ok === false)).toHaveLength(2);
        expect(state.reflections.length).toBe(1);
        expect(run.received.map((r) => r.role)).toEqual(
          expect.arrayContaining(["planner", "coder", "answerer", "checker", "reflector"]),
        );
        // The model named the result it could not see; the answer was filled in here.
        expect(state.answer?.final).toBe(CANARY);
        expect(run.sent.filter(leaks)).toEqual([]);
        expect(run.logged).toEqual(run.sent);
      });

      it("memory: an archived episode recalled by a second question", async () => {
        const store = new InMemoryStore();
        const withMemory = graphFromModule(tableQa, { store });
        const context = {
          ...base(mode),
          memory: true,
          llmArchiver: true,
          maxReflections: 1,
          memoryNamespace: `canary-${mode}`,
        };
        const first = await observed({ coder: [RAISES, PRINTS], wrongAnswers: ["Widget"] }, () =>
          withMemory.invoke(
            { question: QUESTION, sources: SOURCES, gold: CANARY },
            withContext(context),
          ),
        );
        const second = await observed({ coder: [PRINTS] }, () =>
          withMemory.invoke(
            { question: "Which item costs between 800000 and 1000000?", sources: SOURCES },
            withContext(context),
          ),
        );
        const recalled = (second.value as TableQAStateValue).memories;
        expect(recalled).toHaveLength(1);
        const planner = second.received.find((r) => r.role === "planner");
        expect(lastMessage(planner as StubRequest)).toContain("A similar question");
        expect([...first.sent, ...second.sent].filter(leaks)).toEqual([]);
        expect(first.logged).toEqual(first.sent);
        expect(second.logged).toEqual(second.sent);
      });

      it("orchestrator: lookup and sql find it, a later subtask and the composer see their answers", async () => {
        const run = await observed({ coder: [COUNTS] }, () =>
          graphFromModule(orchestrator).invoke(
            { question: QUESTION, sources: SOURCES },
            withContext({ ...base(mode), maxConcurrency: 2 }),
          ),
        );
        const state = run.value as OrchestratorStateValue;
        expect(state.packets.map((p) => p.answer)).toContain(CANARY);
        expect(run.received.map((r) => r.role)).toEqual(
          expect.arrayContaining(["decomposer", "sql", "planner", "composer"]),
        );
        expect(run.sent.filter(leaks)).toEqual([]);
        expect(run.logged).toEqual(run.sent);
      });

      it("mom: two branches answer differently and a judge settles them", async () => {
        const run = await observed({ coder: [PRINTS, COUNTS] }, () =>
          graphFromModule(mom).invoke(
            { question: QUESTION, sources: SOURCES },
            withContext({ ...base(mode), plans: 2, judge: "always", maxConcurrency: 2 }),
          ),
        );
        const state = run.value as MomStateValue;
        expect(state.ballot?.method).toBe("judge");
        expect(run.received.some((r) => r.role === "judge")).toBe(true);
        expect(run.sent.filter(leaks)).toEqual([]);
        expect(run.logged).toEqual(run.sent);
      });
    });
  }

  it("ask --privacy on the command line, and `tableminds audit` lists what was sent", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-canary-"));
    const csv = path.join(dir, "ledger.csv");
    const rows = LEDGER.data.map((row) => row.join(","));
    writeFileSync(csv, [LEDGER.columns.join(","), ...rows].join("\n"));
    respond = team({ coder: [RAISES, PRINTS] });
    const before = stub.requests.length;
    const env = {
      OPENAI_BASE_URL: stub.url,
      OPENAI_API_KEY: "sk-never-logged-0123456789",
      TABLEMINDS_MODEL: "stub-model",
      TABLEMINDS_HOME: home,
    };
    const asked = await runCli(
      ["ask", csv, QUESTION, "--privacy", "values", "--no-memory", "--json"],
      env,
    );
    expect(asked.code, asked.stderr).toBe(0);
    expect(JSON.parse(asked.stdout).answer.final).toBe(CANARY);
    const sent = stub.requests.slice(before);
    expect(sent.map((r) => JSON.stringify(r.body)).filter(leaks)).toEqual([]);

    const listed = await runCli(["audit", "last", "--json", "--full"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain("sk-never-logged");
    const entries = JSON.parse(listed.stdout) as { body: string; endpoint: string }[];
    expect(entries.map((e) => canonical(JSON.parse(e.body))).sort()).toEqual(
      sent.map((r) => canonical(r.body)).sort(),
    );
    expect(entries.every((e) => e.endpoint === `${stub.url}/chat/completions`)).toBe(true);
    const plain = await runCli(["audit", "last", "--full"], env);
    expect(plain.stdout).toMatch(new RegExp(`^${sent.length} requests left this machine`, "m"));
    expect(plain.stdout).toContain("[system]\n# tableminds planner");
    expect(plain.stdout).toContain("Privacy (values)");
  });
});
