import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  appendTrajectory,
  figuresTable,
  recheckLines,
  recheckRun,
  TRAJECTORIES,
} from "../../bench/recheck.js";
import type { RecordedVerdict, ResultRecord } from "../../evals/results-file.js";
import { checkerFigures } from "../../evals/selective.js";
import { codeResult, ranAttempt } from "../support/evidence.js";

function record(id: string, score: number, verdict?: RecordedVerdict): ResultRecord {
  return {
    id,
    prediction: "6",
    output: "Final Answer: 6",
    score: { id, prediction: "6", parsed: true, metrics: { em: score }, metric: "em", score },
    latencyMs: 10,
    tokens: { prompt: 1, completion: 1 },
    llmCalls: 3,
    attempts: 1,
    error: null,
    ...(verdict ? { verdict } : {}),
    finishedAt: "2026-11-23T00:00:00.000Z",
  };
}

/** A table_qa final state: the code summed the column and declared 6, derived from the table. */
function solvedState(final: string | null) {
  const { attempt, evidence } = ranAttempt(
    "attempt-1",
    "result = df['n'].sum()\nprint(result)",
    "6\n",
    [],
    codeResult([6]),
  );
  return {
    question: "What is the total of n?",
    sources: [{ columns: ["n"], data: [[1], [2], [3]] }],
    tables: [],
    plan: ["sum n"],
    attempts: [attempt],
    evidence,
    answer: final === null ? null : { raw: `Final Answer: ${final}`, final, evidence: [] },
    verdict: {
      answer: final ?? "",
      expectedType: "number",
      scores: { type: 0, format: 0, grounding: 0 },
      issues: [],
      pass: false,
      by: "rules",
      claims: [],
      support: "none",
      confidence: 0,
      sure: false,
    },
    reflections: [],
    budget: { llmCalls: 3 },
  };
}

const stale: RecordedVerdict = { pass: false, support: "none", confidence: 0, sure: false };

describe("re-checking stored trajectories", () => {
  it("judges each stored answer again and sets the stored verdicts beside the new ones", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-recheck-"));
    appendTrajectory(dir, "q-right", solvedState("6"));
    appendTrajectory(dir, "q-none", solvedState(null));
    // A failed run has no state: nothing is stored.
    appendTrajectory(dir, "q-failed", null);
    // A line the current schemas cannot read (an attempt of another shape).
    appendFileSync(
      path.join(dir, TRAJECTORIES),
      `${JSON.stringify({ id: "q-odd", question: "q", attempts: [{ id: 1 }], reflections: 0 })}\n`,
    );
    const stored = readFileSync(path.join(dir, TRAJECTORIES), "utf8").trim().split("\n");
    expect(stored).toHaveLength(3);
    expect(JSON.parse(stored[0] ?? "{}")).toMatchObject({
      id: "q-right",
      question: "What is the total of n?",
      reflections: 0,
    });

    const records = [
      record("q-right", 1, stale),
      record("q-none", 0, { pass: true, support: "derived", confidence: 0.9, sure: true }),
      record("q-failed", 0),
      record("q-odd", 0, stale),
    ];
    const recheck = await recheckRun(dir, records, () => [
      { columns: ["n"], data: [[1], [2], [3]] },
    ]);
    expect(recheck.missing).toBe(1);
    expect(recheck.unreadable.map((u) => u.id)).toEqual(["q-odd"]);
    expect(recheck.before.map((r) => [r.id, r.verdict?.pass])).toEqual([
      ["q-right", false],
      ["q-none", true],
    ]);
    // The derived, right answer passes now; no answer at all never does.
    expect(recheck.after.map((r) => [r.id, r.verdict?.pass, r.verdict?.support])).toEqual([
      ["q-right", true, "derived"],
      ["q-none", false, "none"],
    ]);
    expect(recheck).toMatchObject({ passedNow: 1, failedNow: 1 });
    // Only the verdict changes; the score and cost stay the stored ones.
    expect(recheck.after[0]).toMatchObject({ score: { score: 1 }, llmCalls: 3 });

    const lines = recheckLines("table_qa", recheck, records.length).join("\n");
    expect(lines).toContain(
      "**table_qa**: 2 of 4 answers re-checked. 1 without a trajectory and 1 unreadable are left out. The re-check passed 1 answers the stored verdict failed, and failed 1 it passed.",
    );
    expect(lines).toContain("| figure | before (stored verdicts) | after (re-checked) |");
    expect(lines).toContain("| passed | 1 | 1 |");
    expect(lines).toContain("| pass precision | 0.00% | 100.00% |");
    expect(lines).toContain("| wrong answers that passed | 1 of 1 | 0 of 1 |");
  });

  it("says so when a run has no stored trajectories", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-recheck-"));
    const records = [record("a", 1), record("b", 0)];
    const recheck = await recheckRun(dir, records, () => undefined);
    expect(recheck).toMatchObject({ before: [], after: [], missing: 2, unreadable: [] });
    expect(recheckLines("mom", recheck, 2)).toEqual([
      "- **mom**: none of its 2 results has a stored trajectory (results.jsonl keeps the answer and its score, not the attempts, evidence and tables the rules judge), so its answers cannot be re-checked without running the model again.",
    ]);
  });

  it("tabulates the figures of several runs side by side", () => {
    const table = figuresTable([
      { name: "a", figures: checkerFigures([record("x", 1, { ...stale, confidence: 0.8 })]) },
      { name: "b", figures: checkerFigures([record("x", 0, { ...stale, pass: true })]) },
    ]);
    expect(table[0]).toBe("| figure | a | b |");
    expect(table).toContain("| right / wrong | 1 / 0 | 0 / 1 |");
    expect(table).toContain("| ECE (10 bins) | 0.200 | 0.000 |");
    expect(table).toContain(
      "| AURC | 0.000 (best 0.000, none 0.000) | 1.000 (best 1.000, none 1.000) |",
    );
  });
});
