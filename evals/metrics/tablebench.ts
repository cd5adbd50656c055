import type {
  ChartRunner,
  DatasetSummary,
  EvalExample,
  GroupScore,
  QuestionScore,
  Scorer,
} from "../types.js";
import { judgeChart } from "./chart.js";
import { normalizeAnswer, rougeL } from "./squad.js";
import { pythonRound2 } from "./summary.js";
import { computeEm, computeEmWithTolerance } from "./tablebench-em.js";

export { computeEm, computeEmWithTolerance, isTableBenchNumber } from "./tablebench-em.js";

const EM10 = new Set(["CorrelationAnalysis", "TrendForecasting", "StatisticalAnalysis"]);

/**
 * The text after the first "Final Answer: " up to the end of its line (Python's `.` stops only
 * at "\n"), as upstream's `parse_dp_prediction`; null when there is none (upstream's '', a
 * parse failure).
 */
export function parsePrediction(output: string): string | null {
  const match = /Final Answer: ([^\n]+)/.exec(output);
  return match?.[1] ?? null;
}

/**
 * TableBench's EM of one answer, as QAMetric computes it: both sides SQuAD-normalized, then
 * upstream's compute_em (tablebench-em.ts). Normalization removes every comma, point, sign and
 * percent sign, so each side is one item, and a reference of digits (any script) is compared
 * as a Decimal with the prediction read by Decimal() ("0106" and "106" match, so do "1000"
 * and "1e3").
 */
export function exactMatch(reference: string, prediction: string): number {
  return computeEm(normalizeAnswer(reference), normalizeAnswer(prediction));
}

/** TableBench's EM_with_error_{errorRange} of one answer (errorRange in percent, 10 by default). */
export function exactMatchWithin(reference: string, prediction: string, errorRange = 10): number {
  return computeEmWithTolerance(
    normalizeAnswer(reference),
    normalizeAnswer(prediction),
    errorRange,
  );
}

/** Which metric counts for a question, by its qtype and qsubtype. */
export function metricFor(example: Pick<EvalExample, "category" | "subcategory">): string {
  if (example.category === "Visualization") return "pass";
  if (example.category === "DataAnalysis") {
    if (example.subcategory === "ImpactAnalysis") return "em";
    if (EM10.has(example.subcategory ?? "")) return "em10";
    return "rougeL";
  }
  return "em";
}

/** The last ```python block of an output, as upstream takes the chart code. */
export function lastPythonBlock(output: string): string | null {
  const blocks = [...output.matchAll(/```python\n([\s\S]*?)```/g)];
  return blocks.at(-1)?.[1] ?? null;
}

export const tablebenchScorer: Scorer = {
  dataset: "tablebench",

  async score(example, output, options = {}): Promise<QuestionScore> {
    const metric = metricFor(example);
    if (metric === "pass") {
      const code = lastPythonBlock(output);
      const judged =
        code && options.runChart ? await judgeChart(code, example, options.runChart) : null;
      const pass = judged?.verdict === true;
      return {
        id: example.id,
        prediction: code ?? "",
        // Upstream's Parse@1 for a chart: its second run printed True or False.
        parsed: typeof judged?.verdict === "boolean",
        metrics: { pass: pass ? 1 : 0 },
        metric,
        score: pass ? 1 : 0,
      };
    }
    const parsed = parsePrediction(output);
    const prediction = parsed ?? "";
    const metrics = {
      em: exactMatch(example.gold, prediction),
      em10: exactMatchWithin(example.gold, prediction, 10),
      rougeL: rougeL(normalizeAnswer(example.gold), normalizeAnswer(prediction)),
    };
    return {
      id: example.id,
      prediction,
      parsed: parsed !== null,
      metrics,
      metric,
      score: metrics[metric as keyof typeof metrics],
    };
  },

  summarize(examples, scores): DatasetSummary {
    const scored = scoredOf(examples, scores);
    const group = (key: (e: EvalExample) => string): GroupScore[] => {
      const groups = new Map<string, Scored[]>();
      for (const item of scored) {
        const name = key(item.e);
        groups.set(name, [...(groups.get(name) ?? []), item]);
      }
      return [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, items]) => {
          const metrics = new Set(items.map((i) => i.metric));
          return {
            name,
            n: items.length,
            metric: metrics.size === 1 ? ([...metrics][0] ?? "") : "mix",
            score: mixedScore(items),
          };
        });
    };
    const n = scored.length;
    const pools = overallPools(scored);
    const { overall, passAsPercent } = tablebenchOverall(pools);
    const parsed = scored.filter(({ s }) => s.parsed).length;
    const metricNames = [...new Set(scored.flatMap(({ s }) => Object.keys(s.metrics)))];
    const metrics = Object.fromEntries(
      metricNames.map((m) => {
        const values = scored.flatMap(({ s }) => (m in s.metrics ? [s.metrics[m] ?? 0] : []));
        return [m, percentOf(values)];
      }),
    );
    return {
      dataset: "tablebench",
      n,
      overall,
      ...(pools.pass.n > 0 ? { overallPassPercent: passAsPercent } : {}),
      parseRate: n === 0 ? 0 : pythonRound2((parsed / n) * 100),
      groups: group((e) => e.category ?? "all"),
      subgroups: group((e) => `${e.category ?? "all"}/${e.subcategory ?? "-"}`),
      metrics,
    };
  },
};

type Scored = { e: EvalExample; s: QuestionScore; metric: string };

/** The examples that have a score, with it and the metric that counts for them. */
function scoredOf(examples: EvalExample[], scores: QuestionScore[]): Scored[] {
  const byId = new Map(scores.map((s) => [s.id, s]));
  return examples.flatMap((e) => {
    const s = byId.get(e.id);
    return s ? [{ e, s, metric: metricFor(e) }] : [];
  });
}

/**
 * A set of per-question values as QAMetric.compute reports it: the float sum in order, over
 * the count, times 100, Python's round to 2 decimals; 0 for an empty set (upstream raises).
 */
function percentOf(values: number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return pythonRound2((sum / values.length) * 100);
}

/** The metrics in the order upstream's weighted sums add them. */
const POOL_ORDER = ["em", "em10", "rougeL", "pass"] as const;

/**
 * A group's score: its one metric's percent, or for a group of several (DataAnalysis)
 * upstream's Mix_Metric, each metric's percent (rounded) weighted by its questions, rounded.
 */
function mixedScore(items: Scored[]): number {
  const parts = POOL_ORDER.map((metric) => items.filter((i) => i.metric === metric))
    .filter((part) => part.length > 0)
    .map((part) => ({ n: part.length, score: percentOf(part.map((i) => i.s.score)) }));
  if (parts.length === 1) return parts[0]?.score ?? 0;
  let sum = 0;
  let count = 0;
  for (const part of parts) {
    sum += part.score * part.n;
    count += part.n;
  }
  return count === 0 ? 0 : pythonRound2(sum / count);
}

/** The four sets upstream's "Overall" block scores, each as one set. */
export interface OverallPools {
  /** EM over FactChecking + NumericalReasoning + ImpactAnalysis, a rounded percent. */
  em: { n: number; score: number };
  /** EM_with_error_10 over Correlation/Trend/Statistical analysis, a rounded percent. */
  em10: { n: number; score: number };
  /** ROUGE-L over the other DataAnalysis subtypes (our plain mean), a rounded percent. */
  rougeL: { n: number; score: number };
  /** Visualization's Pass@1 as upstream's Overall takes it: count(True) / total, 0 to 1. */
  pass: { n: number; fraction: number };
}

/** The pools of upstream's Overall over the scored examples. */
export function tablebenchPools(examples: EvalExample[], scores: QuestionScore[]): OverallPools {
  return overallPools(scoredOf(examples, scores));
}

function overallPools(scored: Scored[]): OverallPools {
  const values = (metric: string) =>
    scored.filter((i) => i.metric === metric).map((i) => i.s.score);
  const pool = (metric: string) => {
    const v = values(metric);
    return { n: v.length, score: percentOf(v) };
  };
  const passes = values("pass");
  return {
    em: pool("em"),
    em10: pool("em10"),
    rougeL: pool("rougeL"),
    pass: {
      n: passes.length,
      fraction: passes.length === 0 ? 0 : passes.filter((v) => v === 1).length / passes.length,
    },
  };
}

/**
 * TableBench's Overall exactly as upstream's eval_tablebench_script.py computes it:
 * (EM x n_em + EM10 x n_10 + ROUGE-L x n_rl + pass_fraction x n_vis) / (n_em + n_10 + n_rl +
 * n_vis), rounded to 2 decimals, where the first three are percents and Visualization's Pass@1
 * enters as a fraction between 0 and 1, so a chart question counts in the denominator while a
 * passing chart adds almost nothing. `passAsPercent` is the same sum with Pass@1 as a percent
 * (as the Visualization row reports it): a corrected figure, not the published one.
 */
export function tablebenchOverall(pools: OverallPools): {
  overall: number;
  passAsPercent: number;
} {
  const { em, em10, rougeL, pass } = pools;
  const total = em.n + em10.n + rougeL.n + pass.n;
  if (total === 0) return { overall: 0, passAsPercent: 0 };
  const text = em.score * em.n + em10.score * em10.n + rougeL.score * rougeL.n;
  const passPercent = pythonRound2(pass.fraction * 100);
  return {
    overall: pythonRound2((text + pass.fraction * pass.n) / total),
    passAsPercent: pythonRound2((text + passPercent * pass.n) / total),
  };
}

export type { ChartRunner };
