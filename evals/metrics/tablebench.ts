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
import { round2 } from "./summary.js";

const NUMERIC_REFERENCE = /^-?\d+(\.\d+)?%?$/;
const EM10 = new Set(["CorrelationAnalysis", "TrendForecasting", "StatisticalAnalysis"]);

/** The text after the first "Final Answer: " on its line; "" when there is none (a parse failure). */
export function parsePrediction(output: string): string | null {
  const match = /Final Answer: (.+)/.exec(output);
  return match?.[1] ?? null;
}

function asNumber(text: string): number | null {
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : null;
}

/**
 * Exact match as TableBench scores it. After normalization no commas are left, so each side
 * is one item; a numeric reference is compared as a number (so "0106" equals "106").
 */
export function exactMatch(reference: string, prediction: string, tolerance = 0): number {
  const ref = normalizeAnswer(reference);
  const pred = normalizeAnswer(prediction);
  if (NUMERIC_REFERENCE.test(ref)) {
    const r = asNumber(ref.replace(/%$/, ""));
    const p = asNumber(pred.replace(/%$/, ""));
    if (r === null || p === null) return 0;
    if (tolerance === 0) return r === p ? 1 : 0;
    if (r === 0) return p === 0 ? 1 : 0;
    return Math.abs(r - p) / Math.abs(r) <= tolerance ? 1 : 0;
  }
  return ref === pred ? 1 : 0;
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
      em10: exactMatch(example.gold, prediction, 0.1),
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
    const byId = new Map(scores.map((s) => [s.id, s]));
    const scored = examples.flatMap((e) => {
      const s = byId.get(e.id);
      return s ? [{ e, s }] : [];
    });
    const group = (
      key: (e: EvalExample) => string,
      metricName: (e: EvalExample) => string,
    ): GroupScore[] => {
      const groups = new Map<string, { n: number; sum: number; metrics: Set<string> }>();
      for (const { e, s } of scored) {
        const g = groups.get(key(e)) ?? { n: 0, sum: 0, metrics: new Set<string>() };
        g.n += 1;
        g.sum += s.score;
        g.metrics.add(metricName(e));
        groups.set(key(e), g);
      }
      return [...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, g]) => ({
          name,
          n: g.n,
          metric: g.metrics.size === 1 ? ([...g.metrics][0] ?? "") : "mix",
          score: round2((100 * g.sum) / g.n),
        }));
    };
    const groups = group((e) => e.category ?? "all", metricFor);
    const subgroups = group((e) => `${e.category ?? "all"}/${e.subcategory ?? "-"}`, metricFor);
    const n = scored.length;
    const overall = n === 0 ? 0 : round2(groups.reduce((sum, g) => sum + g.score * g.n, 0) / n);
    const parsed = scored.filter(({ s }) => s.parsed).length;
    const metricNames = [...new Set(scored.flatMap(({ s }) => Object.keys(s.metrics)))];
    const metrics = Object.fromEntries(
      metricNames.map((m) => {
        const values = scored.flatMap(({ s }) => (m in s.metrics ? [s.metrics[m] ?? 0] : []));
        return [m, round2((100 * values.reduce((a, b) => a + b, 0)) / Math.max(1, values.length))];
      }),
    );
    return {
      dataset: "tablebench",
      n,
      overall,
      parseRate: n === 0 ? 0 : round2((100 * parsed) / n),
      groups,
      subgroups,
      metrics,
    };
  },
};

export type { ChartRunner };
