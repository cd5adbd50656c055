import { EMPTY_BUDGET } from "../../blackboard/reducers.js";
import type { Attempt, Reflection, TableRef, Verdict } from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { answer, verdict } from "./verdicts.js";

export const MEDALS_TABLE: TableRef = {
  id: "t1",
  name: "medals",
  uri: "/nowhere/medals.csv",
  sha256: "0".repeat(64),
  rows: 10,
  columns: [
    { name: "nation", dtype: "object" },
    { name: "gold", dtype: "int64" },
    { name: "silver", dtype: "int64" },
  ],
};

/** A CSV about something else: no column in common with the medals. */
export const SALES_TABLE: TableRef = {
  id: "t2",
  name: "sales",
  uri: "/nowhere/sales.csv",
  sha256: "1".repeat(64),
  rows: 12,
  columns: [
    { name: "store", dtype: "object" },
    { name: "orders", dtype: "int64" },
    { name: "year", dtype: "int64" },
  ],
};

/** The example medals CSV's columns: half of them are MEDALS_TABLE's. */
export const OLYMPICS_TABLE: TableRef = {
  id: "t3",
  name: "olympics_2020_medals",
  uri: "/nowhere/olympics_2020_medals.csv",
  sha256: "2".repeat(64),
  rows: 10,
  columns: ["rank", "nation", "gold", "silver", "bronze", "total"].map((name) => ({
    name,
    dtype: name === "nation" ? "object" : "int64",
  })),
};

export const WORKING_CODE = "total = df[\"gold\"].sum()\nprint(df['nation'].count(), total)";

/** An attempt that ran, or one that raised `error` ("Type: message"). */
export function attempt(id: string, code: string, error?: string): Attempt {
  const [type = "Error", message = ""] = error?.split(": ") ?? [];
  return {
    id,
    code,
    raw: code,
    result: {
      ok: !error,
      stdout: error ? "" : "10 203\n",
      stderr: "",
      error: error ? { type, message, line: 1 } : null,
      tables: [],
      spans: [],
      truncated: false,
      durationMs: 5,
      result: null,
    },
    parseError: null,
  };
}

export function reflection(id: string, diagnosis: string, improvement: string[]): Reflection {
  return {
    id,
    diagnosis,
    improvement,
    route: "coder",
    verdict: verdict("210", { grounding: 0 }),
    afterAttempts: 1,
    byModel: true,
  };
}

/**
 * A finished run whose answer passed its check by derivation (see verdicts.ts), unless `over`
 * says otherwise.
 */
export function solvedState(over: Partial<TableQAStateValue> = {}): TableQAStateValue {
  return {
    question: "How many gold medals did these 10 nations win in 2020?",
    sources: [],
    tables: [MEDALS_TABLE],
    turns: [],
    plan: ["Keep the nation and gold columns.", "Sum the gold column and print it."],
    attempts: [
      attempt("a1", 'df["golds"].sum()', "KeyError: 'golds'"),
      attempt("a2", WORKING_CODE),
    ],
    evidence: [],
    claims: [],
    edges: [],
    answer: answer("203"),
    verdict: verdict("203"),
    checked: [{ id: "c1", answer: answer("203"), verdict: verdict("203") }],
    reflections: [],
    memories: [],
    startAt: null,
    stopAfter: null,
    budget: { ...EMPTY_BUDGET },
    ...over,
  };
}

/**
 * A run whose answer failed its check on a concrete contradiction: the verdict's claim is
 * conflicted by what the code printed.
 */
export function contradictedState(final: string, over: Partial<TableQAStateValue> = {}) {
  const failed: Verdict = {
    ...verdict(final, { grounding: 0 }, [`${final} is contradicted by a2:out1`]),
    claims: [`claim:${final}:1`],
  };
  return solvedState({
    answer: answer(final),
    verdict: failed,
    checked: [{ id: "c1", answer: answer(final), verdict: failed }],
    claims: [{ id: `claim:${final}:1`, text: final, evidence: ["a2:out1"], status: "conflicted" }],
    ...over,
  });
}
