import type { DatasetSummary, EvalExample, QuestionScore, Scorer } from "../types.js";
import { pythonFloat, pythonInt } from "./python-numbers.js";
import { singleGroupSummary } from "./summary.js";
import { parsePrediction } from "./tablebench.js";

/*
 * WikiTQ's official denotation evaluator (Pasupat & Liang), ported rule by rule: strings are
 * normalized, numbers and dates parsed as its Python does, and a prediction is right when it
 * has as many distinct values as the targets and every target matches one of them.
 */

/** The evaluator's string normalization. */
export function normalizeWikiTQ(input: string): string {
  let x = input
    .normalize("NFKD")
    .replace(/\p{Mn}/gu, "")
    .replace(/[‘’´`]/g, "'")
    .replace(/[“”]/g, '"')
    .replace(/[‐‑‒–—−]/g, "-");
  for (;;) {
    const old = x;
    // Citations and footnote marks at the end.
    x = x.trim().replace(/(?:(?<!^)\[[^\]]*\]|\[\d+\]|[•♦†‡*#+])*$/u, "");
    // Details in parentheses at the end.
    x = x.trim().replace(/(?<!^)(?: \([^)]*\))*$/u, "");
    // Outermost quotation marks.
    x = x.trim().replace(/^"([^"]*)"$/u, "$1");
    if (x === old) break;
  }
  if (x.endsWith(".")) x = x.slice(0, -1);
  return x.replace(/\s+/gu, " ").toLowerCase().trim();
}

export type WikiValue =
  | { kind: "string"; normalized: string }
  | { kind: "number"; normalized: string; amount: number }
  | { kind: "date"; normalized: string; ymd: [number, number, number] };

function parseNumber(text: string): number | null {
  const int = pythonInt(text);
  if (int !== null) return int;
  const float = pythonFloat(text);
  return float === null || !Number.isFinite(float) ? null : float;
}

function parseDate(text: string): [number, number, number] | null {
  const parts = text.toLowerCase().split("-");
  if (parts.length !== 3) return null;
  const [y, m, d] = parts as [string, string, string];
  const year = y === "xx" || y === "xxxx" ? -1 : pythonInt(y);
  const month = m === "xx" ? -1 : pythonInt(m);
  const day = d === "xx" ? -1 : pythonInt(d);
  if (year === null || month === null || day === null) return null;
  if (year === -1 && month === -1 && day === -1) return null;
  if (month !== -1 && (month < 1 || month > 12)) return null;
  if (day !== -1 && (day < 1 || day > 31)) return null;
  return [year, month, day];
}

/** `to_value`: a number, else a date (a bare year is a number), else a string. */
export function toValue(original: string, canonical = original): WikiValue {
  const amount = parseNumber(canonical);
  if (amount !== null) return { kind: "number", amount, normalized: normalizeWikiTQ(original) };
  const ymd = parseDate(canonical);
  if (ymd) {
    if (ymd[1] === -1 && ymd[2] === -1)
      return { kind: "number", amount: ymd[0], normalized: normalizeWikiTQ(original) };
    return { kind: "date", ymd, normalized: normalizeWikiTQ(original) };
  }
  return { kind: "string", normalized: normalizeWikiTQ(original) };
}

/** What Python's set() compares: a number by its amount, a date by (y, m, d), a string by text. */
function identity(v: WikiValue): string {
  if (v.kind === "number") return `n:${v.amount}`;
  if (v.kind === "date") return `d:${v.ymd.join("-")}`;
  return `s:${v.normalized}`;
}

/** `to_value_list`: the distinct values of a list of answers. */
export function toValueList(originals: string[], canonicals?: string[]): WikiValue[] {
  const values = originals.map((o, i) => toValue(o, canonicals?.[i] ?? o));
  return [...new Map(values.map((v) => [identity(v), v])).values()];
}

/** `target.match(predicted)`: the same normalized text, else the same number or date. */
export function valuesMatch(target: WikiValue, predicted: WikiValue): boolean {
  if (target.normalized === predicted.normalized) return true;
  if (target.kind === "number" && predicted.kind === "number")
    return Math.abs(target.amount - predicted.amount) < 1e-6;
  if (target.kind === "date" && predicted.kind === "date")
    return target.ymd.every((p, i) => p === predicted.ymd[i]);
  return false;
}

export function checkDenotation(targets: WikiValue[], predicted: WikiValue[]): boolean {
  if (targets.length !== predicted.length) return false;
  return targets.every((t) => predicted.some((p) => valuesMatch(t, p)));
}

/** WikiTQ's escapes inside a TSV field: `\n`, `\p` (a literal |) and `\\`. */
export function tsvUnescape(text: string): string {
  return text.replace(/\\(n|p|\\)/g, (_, c: string) => (c === "n" ? "\n" : c === "p" ? "|" : "\\"));
}

export function tsvUnescapeList(text: string): string[] {
  return text.split("|").map(tsvUnescape);
}

/** A system's answer as WikiTQ values: items separated by "|", or by a comma and a space. */
export function predictionItems(answer: string): string[] {
  const separator = answer.includes("|") ? "|" : ", ";
  return answer
    .split(separator)
    .map((s) => s.trim())
    .filter(Boolean);
}

export const wikitqScorer: Scorer = {
  dataset: "wikitq",
  async score(example: EvalExample, output: string): Promise<QuestionScore> {
    const parsed = parsePrediction(output);
    const prediction = parsed ?? "";
    const targets = toValueList(tsvUnescapeList(example.gold), example.goldCanonical);
    const right = parsed !== null && answerMatches(targets, prediction) ? 1 : 0;
    return {
      id: example.id,
      prediction,
      parsed: parsed !== null,
      metrics: { accuracy: right },
      metric: "accuracy",
      score: right,
    };
  },
  summarize(examples, scores): DatasetSummary {
    return singleGroupSummary("wikitq", ["accuracy"], examples, scores);
  },
};

/**
 * The official evaluator gets the predicted values already separated; a free-text answer is
 * read both as one value ("January 26, 1995") and as a list ("2004, 2005, 2006"), and is
 * right when either reading is.
 */
export function answerMatches(targets: WikiValue[], answer: string): boolean {
  if (checkDenotation(targets, toValueList([answer.trim()]))) return true;
  return checkDenotation(targets, toValueList(predictionItems(answer)));
}
