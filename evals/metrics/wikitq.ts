import { pyCollapseSpace, pyStrip } from "../../grounding/python-text.js";
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
    // Citations and footnote marks at the end (Python's \d: a digit of any script).
    x = pyStrip(x).replace(/(?:(?<!^)\[[^\]]*\]|\[\p{Nd}+\]|[•♦†‡*#+])*$/u, "");
    // Details in parentheses at the end.
    x = pyStrip(x).replace(/(?<!^)(?: \([^)]*\))*$/u, "");
    // Outermost quotation marks.
    x = pyStrip(x).replace(/^"([^"]*)"$/u, "$1");
    if (x === old) break;
  }
  if (x.endsWith(".")) x = x.slice(0, -1);
  return pyStrip(pyCollapseSpace(x).toLowerCase());
}

/**
 * A number's amount as NumberValue keeps it: a Python int (a bigint: exact at any size), or
 * a float that is not within 1e-6 of an integer.
 */
export type Amount = bigint | number;

export type WikiValue =
  | { kind: "string"; normalized: string }
  | { kind: "number"; normalized: string; amount: Amount }
  | { kind: "date"; normalized: string; ymd: [bigint, number, number] };

/** `NumberValue.parse`: int(), else a finite float(). */
function parseNumber(text: string): Amount | null {
  const int = pythonInt(text);
  if (int !== null) return int;
  const float = pythonFloat(text);
  return float === null || !Number.isFinite(float) ? null : float;
}

/** NumberValue's constructor: a float within 1e-6 of an integer becomes int(amount), truncated. */
function numberAmount(amount: Amount): Amount {
  if (typeof amount === "bigint") return amount;
  return Math.abs(amount - Math.round(amount)) < 1e-6 ? BigInt(Math.trunc(amount)) : amount;
}

function parseDate(text: string): [bigint, number, number] | null {
  const parts = text.toLowerCase().split("-");
  if (parts.length !== 3) return null;
  const [y, m, d] = parts as [string, string, string];
  const year = y === "xx" || y === "xxxx" ? -1n : pythonInt(y);
  const month = m === "xx" ? -1n : pythonInt(m);
  const day = d === "xx" ? -1n : pythonInt(d);
  if (year === null || month === null || day === null) return null;
  if (year === -1n && month === -1n && day === -1n) return null;
  if (month !== -1n && (month < 1n || month > 12n)) return null;
  if (day !== -1n && (day < 1n || day > 31n)) return null;
  return [year, Number(month), Number(day)];
}

/** The amount a NumberValue made from `text` keeps; null when `text` is no number. */
export function numberValueAmount(text: string): Amount | null {
  const amount = parseNumber(text);
  return amount === null ? null : numberAmount(amount);
}

/** `to_value`: a number, else a date (a bare year is a number), else a string. */
export function toValue(original: string, canonical = original): WikiValue {
  const normalized = normalizeWikiTQ(original);
  const amount = numberValueAmount(canonical);
  if (amount !== null) return { kind: "number", amount, normalized };
  const ymd = parseDate(canonical);
  if (ymd) {
    if (ymd[1] === -1 && ymd[2] === -1) return { kind: "number", amount: ymd[0], normalized };
    return { kind: "date", ymd, normalized };
  }
  return { kind: "string", normalized };
}

/**
 * What Python's set() compares: a number by its amount, a date by (y, m, d), a string by
 * text. An int amount and a float amount are never equal: a float amount is never integral.
 */
function identity(v: WikiValue): string {
  if (v.kind === "number")
    return `n:${typeof v.amount === "bigint" ? `${v.amount}` : `f${v.amount}`}`;
  if (v.kind === "date") return `d:${v.ymd.join("-")}`;
  return `s:${v.normalized}`;
}

/** `to_value_list`: the distinct values of a list of answers; a set keeps the first of equals. */
export function toValueList(originals: string[], canonicals?: string[]): WikiValue[] {
  const distinct = new Map<string, WikiValue>();
  originals.forEach((o, i) => {
    const value = toValue(o, canonicals?.[i] ?? o);
    const key = identity(value);
    if (!distinct.has(key)) distinct.set(key, value);
  });
  return [...distinct.values()];
}

/** Python's `abs(a - b) < 1e-6`: exact between ints, in floats once either is one. */
function amountsClose(a: Amount, b: Amount): boolean {
  if (typeof a === "bigint" && typeof b === "bigint") return a === b;
  return Math.abs(Number(a) - Number(b)) < 1e-6;
}

/** `target.match(predicted)`: the same normalized text, else the same number or date. */
export function valuesMatch(target: WikiValue, predicted: WikiValue): boolean {
  if (target.normalized === predicted.normalized) return true;
  if (target.kind === "number" && predicted.kind === "number")
    return amountsClose(target.amount, predicted.amount);
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
