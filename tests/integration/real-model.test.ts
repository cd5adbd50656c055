import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecResultSchema } from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { clearChatModelCache } from "../../models/chat.js";
import { installedDefaultModel, LocalEnvSchema } from "../../models/local-spec.js";
import { ReplyParseError } from "../../nodes/llm.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { EXAMPLES, useTempHome, withContext } from "../support/env.js";

/*
 * The whole table_qa graph on the real embedded model (SmolLM2-135M-Instruct), no stub. A model
 * this small is rarely right, so these tests hold it to what it can be held to: the run ends
 * within its bounds, every reply parses (the local model's grammars) or fails with a clear
 * error, generated code stays in the sandbox, and every piece of evidence points at something
 * real. Not its accuracy.
 */

const model = installedDefaultModel(LocalEnvSchema.parse(process.env));

const BOUNDS = {
  model: "local",
  maxCodeAttempts: 2,
  maxReflections: 0,
  llmChecker: false,
  memory: false,
  contextTokens: 900,
  llmTimeoutMs: 60_000,
  temperature: 0,
  seed: 11,
};
/** planner + coder tries + answerer per solve, one solve per reflection more, and the reflector. */
const MAX_MODEL_CALLS =
  (1 + BOUNDS.maxReflections) * (2 + BOUNDS.maxCodeAttempts) + BOUNDS.maxReflections;
/** Generous: two busy cores, prompts of up to ~1,500 tokens at a few hundred tokens/s. */
const WALL_LIMIT_MS = 150_000;

const QUESTIONS = [
  {
    file: "olympics_2020_medals.csv",
    question: "How many gold medals did these ten nations win in total?",
  },
  { file: "planets.json", question: "How many planets take more than 1000 days to orbit the Sun?" },
];

interface Outcome {
  question: string;
  state: TableQAStateValue | null;
  error: unknown;
  ms: number;
}

/** Every file under examples/ with its content hash: a run must not change any of them. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      const hash = createHash("sha256").update(readFileSync(file)).digest("hex");
      return `${path.relative(dir, file)} ${hash}`;
    })
    .sort();
}

/** A canonical CSV's cells (the artifact store's, unquoted in these examples). */
function cellsOf(uri: string): { header: string[]; rows: string[][] } {
  const [head = "", ...lines] = readFileSync(uri, "utf8").trimEnd().split("\n");
  return { header: head.split(","), rows: lines.map((line) => line.split(",")) };
}

const saved: Record<string, string | undefined> = {};
const outcomes: Outcome[] = [];
let before: string[] = [];

beforeAll(async () => {
  if (!model) {
    throw new Error(
      "The local model is not installed, so the real-model tests cannot run: run `npm run setup` (it runs scripts/setup-model.sh), then the tests again.",
    );
  }
  // A machine with no endpoint: the graph falls back to nothing but the local model.
  for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "TABLEMINDS_MODEL"]) {
    saved[key] = process.env[key];
    delete process.env[key];
  }
  useTempHome();
  before = snapshot(EXAMPLES);
  for (const { file, question } of QUESTIONS) {
    const started = performance.now();
    let state: TableQAStateValue | null = null;
    let error: unknown = null;
    try {
      state = (await graph.invoke(
        { question, sources: [{ path: path.join(EXAMPLES, file) }] },
        withContext(BOUNDS),
      )) as TableQAStateValue;
    } catch (caught) {
      error = caught;
    }
    outcomes.push({ question, state, error, ms: performance.now() - started });
  }
}, 400_000);

afterAll(async () => {
  await closeSandboxes();
  clearChatModelCache();
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

const finished = () => outcomes.flatMap((o) => (o.state ? [o.state] : []));

describe("table_qa on the real local model", () => {
  it("ends every run within its bounds, or fails it with a clear reply error", () => {
    expect(outcomes).toHaveLength(QUESTIONS.length);
    for (const outcome of outcomes) {
      expect(outcome.ms).toBeLessThan(WALL_LIMIT_MS);
      if (outcome.error) {
        // Not a crash: a reply the parsers could not use, saying what was missing.
        expect(outcome.error).toBeInstanceOf(ReplyParseError);
        expect(String(outcome.error)).toMatch(/the \w+ reply has no .+; it was: /);
        continue;
      }
      const state = outcome.state as TableQAStateValue;
      // The small model writes queries (coderDialect auto): the query is the plan and its result
      // the answer, so a run may make one model call.
      expect(state.budget.llmCalls).toBeGreaterThanOrEqual(1);
      expect(state.budget.llmCalls).toBeLessThanOrEqual(MAX_MODEL_CALLS);
      expect(state.budget.promptTokens).toBeGreaterThan(0);
      expect(state.budget.completionTokens).toBeGreaterThan(0);
      expect(state.reflections.length).toBeLessThanOrEqual(BOUNDS.maxReflections);
      expect(state.attempts.length).toBeLessThanOrEqual(
        (1 + state.reflections.length) * BOUNDS.maxCodeAttempts,
      );
    }
    // The grammars make a tiny model's replies usable: the runs end with an answer.
    expect(finished().length).toBeGreaterThan(0);
    for (const state of finished()) expect(state.answer?.final.trim()).not.toBe("");
  });

  it("parses every reply: a query of the table's columns, its plan, a Final Answer with evidence", () => {
    for (const state of finished()) {
      expect(state.plan.length).toBeGreaterThan(0);
      for (const step of state.plan) expect(step.trim()).not.toBe("");
      for (const attempt of state.attempts) {
        expect(attempt.raw).toMatch(/^```query\n(result|a) = [\s\S]*\n```$/);
        expect(attempt.query).toBe(attempt.raw.slice("```query\n".length, -"\n```".length));
        expect(attempt.parseError).toBeNull();
        expect(attempt.code.trim()).not.toBe("");
      }
      expect(state.answer?.raw).toMatch(/^Final Answer: [^\n]+\nEvidence: \S/);
    }
  });

  it("runs the generated code in the sandbox only", () => {
    for (const state of finished()) {
      for (const attempt of state.attempts) {
        // Whatever the code did, the executor gave back a well-formed result.
        expect(ExecResultSchema.safeParse(attempt.result).success).toBe(true);
      }
    }
    expect(snapshot(EXAMPLES)).toEqual(before);
  });

  it("anchors every piece of evidence in something that exists", () => {
    for (const state of finished()) {
      const ids = new Set(state.evidence.map((e) => e.id));
      for (const cited of state.answer?.evidence ?? []) expect(ids).toContain(cited);
      for (const claim of state.claims) for (const id of claim.evidence) expect(ids).toContain(id);
      for (const packet of state.evidence) {
        const anchor = packet.anchor;
        if (anchor.kind === "code") {
          const attempt = state.attempts.find((a) => a.id === anchor.attempt);
          expect(attempt, packet.id).toBeDefined();
          const lines = attempt?.code.split("\n").length ?? 0;
          const [first, last] = anchor.lines;
          expect(first).toBeGreaterThanOrEqual(1);
          expect(last).toBeGreaterThanOrEqual(first);
          expect(last).toBeLessThanOrEqual(lines);
          const stdout = attempt?.result?.stdout ?? "";
          const [start, end] = anchor.stdout;
          expect(start).toBeGreaterThanOrEqual(0);
          expect(end).toBeGreaterThanOrEqual(start);
          expect(end).toBeLessThanOrEqual(stdout.length);
        } else if (anchor.kind === "cells") {
          const table = state.tables.find((t) => t.name === anchor.table);
          expect(table, packet.id).toBeDefined();
          if (!table) continue;
          const { header, rows } = cellsOf(table.uri);
          for (const column of anchor.columns) expect(header).toContain(column);
          for (const row of anchor.rows) {
            expect(row).toBeLessThan(table.rows);
            const column = header.indexOf(anchor.columns[0] ?? "");
            expect(rows[row]?.[column]).toBe(String(packet.value));
          }
        }
      }
    }
  });
});
