import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import { chartScript, readVerdict, VERDICT_MARKER } from "../../evals/metrics/chart.js";
import { getScorer } from "../../evals/metrics/index.js";
import { normalizeAnswer, rougeL, rougeTokens } from "../../evals/metrics/squad.js";
import {
  exactMatch,
  lastPythonBlock,
  metricFor,
  parsePrediction,
  tablebenchScorer,
} from "../../evals/metrics/tablebench.js";
import type { EvalExample } from "../../evals/types.js";

const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

function example(over: Partial<EvalExample>): EvalExample {
  return {
    id: "q",
    dataset: "tablebench",
    question: "?",
    tables: [{ name: "table", columns: ["a"], data: [[1]] }],
    gold: "",
    category: "NumericalReasoning",
    subcategory: "Aggregation",
    ...over,
  };
}

describe("normalization (SQuAD style, as upstream)", () => {
  it("lower-cases, removes every ASCII punctuation mark and the articles, collapses spaces", () => {
    expect(normalizeAnswer("10.6")).toBe("106");
    expect(normalizeAnswer("1,062")).toBe("1062");
    expect(normalizeAnswer("45%")).toBe("45");
    expect(normalizeAnswer("-5")).toBe("5");
    expect(normalizeAnswer("The  United   States")).toBe("united states");
    expect(normalizeAnswer("an Apple, a Pear")).toBe("apple pear");
    expect(normalizeAnswer("theatre")).toBe("theatre");
  });

  // As CPython runs the rules: \b knows Unicode letters and digits, split() its whitespace.
  it("finds articles and whitespace as Python's re and str.split() do", () => {
    expect(normalizeAnswer("éthe")).toBe("éthe");
    expect(normalizeAnswer("٣the")).toBe("٣the");
    expect(normalizeAnswer("thé")).toBe("thé");
    expect(normalizeAnswer("the_x")).toBe("thex");
    expect(normalizeAnswer("x\x1cy")).toBe("x y");
    expect(normalizeAnswer("x\x85the y")).toBe("x y");
    expect(normalizeAnswer("x\ufeffy")).toBe("x\ufeffy");
  });
});

describe("exact match and the 10% band", () => {
  it("compares numeric references as numbers after normalization", () => {
    expect(exactMatch("10.6", "10.6")).toBe(1);
    expect(exactMatch("10.6", "106")).toBe(1); // punctuation removal makes them equal
    expect(exactMatch("10.6", "10.60")).toBe(0); // 106 vs 1060
    expect(exactMatch("106", "0106")).toBe(1); // Decimal comparison
    expect(exactMatch("55", "55 goals")).toBe(0);
    expect(exactMatch("Great Britain", "great britain.")).toBe(1);
    expect(exactMatch("Real Betis, Real Madrid B", "Real Betis, Real Madrid B")).toBe(1);
    expect(exactMatch("Real Betis, Real Madrid B", "Real Madrid B, Real Betis")).toBe(0);
  });

  it("accepts a numeric prediction within 10% of the normalized reference", () => {
    expect(exactMatch("100", "110", 0.1)).toBe(1);
    expect(exactMatch("100", "110.1", 0.1)).toBe(0); // 1101 vs 100 after normalization
    expect(exactMatch("100", "111", 0.1)).toBe(0);
    expect(exactMatch("100", "90", 0.1)).toBe(1);
    expect(exactMatch("100", "89", 0.1)).toBe(0);
    // "0.85" and "0.80" become 085 and 080: 85 vs 80 is within 5.9%, a quirk upstream has too.
    expect(exactMatch("0.85", "0.80", 0.1)).toBe(1);
  });

  it("compares text references exactly even with the band", () => {
    expect(exactMatch("Positive impact", "positive impact", 0.1)).toBe(1);
    expect(exactMatch("Positive impact", "Negative impact", 0.1)).toBe(0);
  });
});

describe("ROUGE-L", () => {
  it("tokenizes like rouge_score and takes the LCS F-measure", () => {
    expect(rougeTokens("No clear impact!")).toEqual(["no", "clear", "impact"]);
    expect(rougeL("positive impact", "positive impact")).toBe(1);
    // LCS("a b c d", "a c e") = 2: P = 2/3, R = 2/4, F = 2PR/(P+R) = 4/7.
    expect(rougeL("a b c d", "a c e")).toBeCloseTo(4 / 7, 12);
    expect(rougeL("x", "")).toBe(0);
    expect(rougeL("no clear impact", "impact clear no")).toBeCloseTo(1 / 3, 12);
  });
});

describe("which metric counts", () => {
  it("follows qtype and qsubtype", () => {
    expect(metricFor({ category: "FactChecking", subcategory: "MatchBased" })).toBe("em");
    expect(metricFor({ category: "NumericalReasoning", subcategory: "Counting" })).toBe("em");
    expect(metricFor({ category: "DataAnalysis", subcategory: "ImpactAnalysis" })).toBe("em");
    expect(metricFor({ category: "DataAnalysis", subcategory: "TrendForecasting" })).toBe("em10");
    expect(metricFor({ category: "DataAnalysis", subcategory: "CorrelationAnalysis" })).toBe(
      "em10",
    );
    expect(metricFor({ category: "DataAnalysis", subcategory: "StatisticalAnalysis" })).toBe(
      "em10",
    );
    expect(metricFor({ category: "DataAnalysis", subcategory: "CausalAnalysis" })).toBe("rougeL");
    expect(metricFor({ category: "Visualization", subcategory: "ChartGeneration" })).toBe("pass");
  });

  it("parses the first Final Answer line, and the last python block for charts", () => {
    expect(parsePrediction("blah\nFinal Answer: 42\nFinal Answer: 43")).toBe("42");
    expect(parsePrediction("final answer: 42")).toBeNull();
    expect(lastPythonBlock("```python\na\n```\ntext\n```python\nb\n```")).toBe("b\n");
    expect(lastPythonBlock("no code")).toBeNull();
  });
});

describe("aggregation", () => {
  it("rounds each group to 2 decimals, then weights the groups by their questions", async () => {
    const examples = [
      example({ id: "f1", category: "FactChecking", subcategory: "MatchBased", gold: "p" }),
      example({ id: "f2", category: "FactChecking", subcategory: "MatchBased", gold: "b" }),
      example({ id: "f3", category: "FactChecking", subcategory: "MatchBased", gold: "c" }),
      example({
        id: "d1",
        category: "DataAnalysis",
        subcategory: "CausalAnalysis",
        gold: "w x y z",
      }),
    ];
    const outputs = ["Final Answer: p", "Final Answer: x", "no answer line", "Final Answer: w y q"];
    const scores = await Promise.all(
      examples.map((e, i) => tablebenchScorer.score(e, outputs[i] ?? "")),
    );
    const summary = tablebenchScorer.summarize(examples, scores);
    const fact = summary.groups.find((g) => g.name === "FactChecking");
    const analysis = summary.groups.find((g) => g.name === "DataAnalysis");
    expect(fact).toEqual({ name: "FactChecking", n: 3, metric: "em", score: 33.33 });
    expect(analysis).toEqual({ name: "DataAnalysis", n: 1, metric: "rougeL", score: 57.14 });
    // (3 * 33.33 + 1 * 57.14) / 4 = 39.2825 -> 39.28
    expect(summary.overall).toBe(39.28);
    expect(summary.parseRate).toBe(75);
    expect(summary.n).toBe(4);
  });

  it("scores the gold answers of the 40-question sample at 100% (charts need a runner)", async () => {
    const examples = await loadDataset("tablebench", { path: SAMPLE });
    expect(examples).toHaveLength(40);
    const scorer = getScorer("tablebench");
    const text = examples.filter((e) => e.category !== "Visualization");
    const scores = await Promise.all(text.map((e) => scorer.score(e, `Final Answer: ${e.gold}`)));
    expect(scorer.summarize(text, scores).overall).toBe(100);
    expect(() => getScorer("nope")).toThrow(/known: tablebench/);
  });
});

describe("charts", () => {
  const chart = example({
    category: "Visualization",
    subcategory: "ChartGeneration",
    chartType: "bar",
    gold: "y_references = [[1, 2]]",
  });

  it("hands the parser the code, references, chart type and table as one JSON request", () => {
    const script = chartScript("plt.bar(['x'], [1])", chart);
    const request = /^_REQUEST = json\.loads\((.*)\)$/m.exec(script)?.[1] ?? "";
    expect(JSON.parse(JSON.parse(request))).toEqual({
      code: "plt.bar(['x'], [1])",
      answer: "y_references = [[1, 2]]",
      chart_type: "bar",
      columns: ["a"],
      data: [[1]],
    });
    expect(script).toContain("from metrics.chart_metric_utils import *");
  });

  it("reads the verdict line; Parse@1 needs a printed True or False", async () => {
    expect(readVerdict(`noise\n${VERDICT_MARKER}{"ecr": true, "verdict": false}\n`)).toEqual({
      ecr: true,
      verdict: false,
    });
    expect(readVerdict(`${VERDICT_MARKER}{"ecr": false, "verdict": null}`)?.verdict).toBeNull();
    expect(readVerdict("no marker")).toBeNull();
    const printed = (verdict: string) => async () => ({
      ok: true,
      stdout: `${VERDICT_MARKER}{"ecr": true, "verdict": ${verdict}}\n`,
    });
    const output = "```python\nplt.bar(['x'], [1])\n```";
    const score = (verdict: string) =>
      tablebenchScorer.score(chart, output, { runChart: printed(verdict) });
    expect(await score("true")).toMatchObject({ score: 1, parsed: true });
    expect(await score("false")).toMatchObject({ score: 0, parsed: true });
    expect(await score("null")).toMatchObject({ score: 0, parsed: false });
    expect(await tablebenchScorer.score(chart, output)).toMatchObject({ score: 0, parsed: false });
  });
});
