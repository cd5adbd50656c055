import type { DatasetSummary, EvalExample, QuestionScore } from "../types.js";

/** Percentages as the benchmarks report them: rounded to 2 decimals. */
export const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Python's `round(x, 2)`: the exact binary value rounded to 2 decimals, a tie (x = k/8, the
 * only doubles exactly halfway) to the even neighbour, then the nearest double. `round2` rounds
 * x * 100 instead, which can differ in the last place kept (0.125 -> 0.13 there, 0.12 here).
 */
export function pythonRound2(x: number): number {
  if (!Number.isFinite(x)) return x;
  const eighths = x * 8;
  if (Number.isInteger(eighths) && Math.abs(eighths) % 2 === 1) {
    const low = Math.floor(x * 100); // x * 100 is exact here: a multiple of 12.5
    return (low % 2 === 0 ? low : low + 1) / 100;
  }
  return Number(x.toFixed(2));
}

/**
 * A dataset scored as one group, as WikiTQ, TabFact and FinQA are: over the scores of the
 * given examples, the mean of each of `metrics` in percent (the first is the headline) and
 * the share of outputs that parsed.
 */
export function singleGroupSummary(
  dataset: string,
  metrics: [string, ...string[]],
  examples: EvalExample[],
  scores: QuestionScore[],
): DatasetSummary {
  const wanted = new Set(examples.map((e) => e.id));
  const kept = scores.filter((s) => wanted.has(s.id));
  const n = kept.length;
  const percent = (count: number) => (n === 0 ? 0 : round2((100 * count) / n));
  const means = Object.fromEntries(
    metrics.map((m) => [m, percent(kept.reduce((sum, s) => sum + (s.metrics[m] ?? 0), 0))]),
  );
  const [headline] = metrics;
  const overall = means[headline] ?? 0;
  return {
    dataset,
    n,
    overall,
    parseRate: percent(kept.filter((s) => s.parsed).length),
    groups: [{ name: "all", n, metric: headline, score: overall }],
    subgroups: [],
    metrics: means,
  };
}
