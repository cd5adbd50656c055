import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildReport, renderMarkdown, writeReport } from "../../evals/report.js";
import type { RecordedVerdict, ResultRecord } from "../../evals/results-file.js";
import {
  atCoverage,
  aurc,
  checkedOutcomes,
  checkerFigures,
  expectedCalibrationError,
  isRight,
  optimalRiskCoverage,
  reliability,
  riskCoverage,
} from "../../evals/selective.js";
import type { EvalExample, Scorer } from "../../evals/types.js";

function record(
  id: string,
  score: { metric: string; score: number },
  verdict?: RecordedVerdict,
): ResultRecord {
  return {
    id,
    prediction: "x",
    output: "Final Answer: x",
    score: {
      id,
      prediction: "x",
      parsed: true,
      metrics: { [score.metric]: score.score },
      ...score,
    },
    latencyMs: 10,
    tokens: { prompt: 1, completion: 1 },
    llmCalls: 1,
    attempts: 1,
    error: null,
    ...(verdict ? { verdict } : {}),
    finishedAt: "2026-11-23T00:00:00.000Z",
  };
}

const v = (confidence: number, pass: boolean, support = "none", sure = false): RecordedVerdict => ({
  pass,
  support,
  confidence,
  sure,
});

/*
 * Five answers with verdicts and one without, worked by hand:
 *   a 0.9 right  pass  derived      sure
 *   b 0.8 wrong  pass  looked-up
 *   c 0.6 right  fail  derived      (ROUGE-L 0.5: right)
 *   d 0.6 wrong  fail  coincidental (ROUGE-L 0.49: wrong)
 *   e 0.2 wrong  fail  none         (Pass@1 0)
 *   f no verdict (em 1): left out of every figure
 * In decreasing confidence, c and d tie: expected right among the first k is 1, 1, 1.5, 2, 2,
 * so the risks are 0, 1/2, 1/2, 1/2, 3/5 and AURC = 2.1 / 5 = 0.42. The best ranking (a, c
 * first) has risks 0, 0, 1/3, 1/2, 3/5: AURC = 1.4333.../5. ECE over the bins 9 (0.9 vs 1),
 * 8 (0.8 vs 0), 6 (0.6 vs 0.5, two answers), 2 (0.2 vs 0):
 * (0.1 + 0.8 + 2 × 0.1 + 0.2) / 5 = 0.26.
 */
const records = [
  record("a", { metric: "em", score: 1 }, v(0.9, true, "derived", true)),
  record("b", { metric: "em", score: 0 }, v(0.8, true, "looked-up")),
  record("c", { metric: "rougeL", score: 0.5 }, v(0.6, false, "derived")),
  record("d", { metric: "rougeL", score: 0.49 }, v(0.6, false, "coincidental")),
  record("e", { metric: "pass", score: 0 }, v(0.2, false, "none")),
  record("f", { metric: "em", score: 1 }),
];

describe("right and wrong answers", () => {
  it("are full marks, or ROUGE-L of at least 0.5", () => {
    expect(isRight({ metric: "em", score: 1 })).toBe(true);
    expect(isRight({ metric: "em10", score: 0 })).toBe(false);
    expect(isRight({ metric: "exact", score: 1 })).toBe(true);
    expect(isRight({ metric: "pass", score: 0 })).toBe(false);
    expect(isRight({ metric: "rougeL", score: 0.5 })).toBe(true);
    expect(isRight({ metric: "rougeL", score: 0.4999 })).toBe(false);
    expect(checkedOutcomes(records).map((o) => [o.id, o.right])).toEqual([
      ["a", true],
      ["b", false],
      ["c", true],
      ["d", false],
      ["e", false],
    ]);
  });
});

describe("selective prediction", () => {
  const outcomes = checkedOutcomes(records);

  it("takes answers in decreasing confidence, ties as in random order", () => {
    const curve = riskCoverage(outcomes);
    expect(curve.map((p) => p.k)).toEqual([1, 2, 3, 4, 5]);
    expect(curve.map((p) => p.right)).toEqual([1, 1, 1.5, 2, 2]);
    expect(curve.map((p) => p.risk)).toEqual([0, 50, 50, 50, 60]);
    expect(curve.map((p) => p.coverage)).toEqual([20, 40, 60, 80, 100]);
    expect(aurc(curve)).toBeCloseTo(0.42, 12);
    expect(aurc(optimalRiskCoverage(outcomes))).toBeCloseTo((1 / 3 + 1 / 2 + 3 / 5) / 5, 12);
    // The order of the input does not matter, nor the order of tied answers.
    expect(aurc(riskCoverage([...outcomes].reverse()))).toBeCloseTo(0.42, 12);
  });

  it("gives the error rate at every coverage when the confidence ranks nothing", () => {
    const flat = outcomes.map((o) => ({ ...o, confidence: 0.5 }));
    expect(riskCoverage(flat).map((p) => p.risk)).toEqual([60, 60, 60, 60, 60]);
    expect(aurc(riskCoverage(flat))).toBeCloseTo(0.6, 12);
    expect(aurc([])).toBeNull();
  });

  it("reads accuracy at a coverage from the ceil(coverage × n) most confident answers", () => {
    const curve = riskCoverage(outcomes);
    expect(atCoverage(curve, 100)).toMatchObject({ k: 5, accuracy: 40 });
    expect(atCoverage(curve, 90)).toMatchObject({ k: 5, accuracy: 40 });
    expect(atCoverage(curve, 80)).toMatchObject({ k: 4, accuracy: 50, confidence: 0.6 });
    expect(atCoverage(curve, 50)).toMatchObject({ k: 3, accuracy: 50, confidence: 0.6 });
    expect(atCoverage(curve, 1)).toMatchObject({ k: 1, accuracy: 100, confidence: 0.9 });
  });
});

describe("calibration", () => {
  it("bins confidence in ten equal-width bins and weighs each bin's gap by its answers", () => {
    const bins = reliability(checkedOutcomes(records));
    expect(bins).toHaveLength(10);
    expect(bins.map((b) => b.n)).toEqual([0, 0, 1, 0, 0, 0, 2, 0, 1, 1]);
    expect(bins[6]).toMatchObject({ from: 0.6, to: 0.7, n: 2, accuracy: 0.5 });
    expect(bins[6]?.confidence).toBeCloseTo(0.6, 12);
    expect(bins[0]).toMatchObject({ n: 0, confidence: null, accuracy: null });
    expect(expectedCalibrationError(bins)).toBeCloseTo(0.26, 12);
    expect(expectedCalibrationError(reliability([]))).toBeNull();
  });

  it("puts a bin's lower edge in the bin and 1 in the last bin", () => {
    const at = (confidence: number) =>
      reliability([{ id: "x", right: true, pass: true, confidence, sure: true, support: "none" }])
        .map((b, i) => (b.n > 0 ? i : -1))
        .filter((i) => i >= 0);
    expect(at(0)).toEqual([0]);
    expect(at(0.3)).toEqual([3]);
    expect(at(0.7)).toEqual([7]);
    expect(at(0.99)).toEqual([9]);
    expect(at(1)).toEqual([9]);
  });
});

describe("the checker's figures", () => {
  it("count results without a verdict apart and measure pass, sureness and support", () => {
    const c = checkerFigures(records);
    expect(c).toMatchObject({
      checked: 5,
      withoutVerdict: 1,
      right: 2,
      wrong: 3,
      pass: { passed: 2, precision: 50, recall: 50, wrongPassed: 1, rightFailed: 1 },
      sure: { n: 1, right: 1, accuracy: 100 },
      notSure: { n: 4, right: 1, accuracy: 25 },
      support: [
        { kind: "derived", n: 2, right: 2, accuracy: 100 },
        { kind: "looked-up", n: 1, right: 0, accuracy: 0 },
        { kind: "coincidental", n: 1, right: 0, accuracy: 0 },
        { kind: "none", n: 1, right: 0, accuracy: 0 },
      ],
    });
    expect(c.pass.wrongPassedRate).toBeCloseTo(100 / 3, 12);
    expect(c.selective.aurc).toBeCloseTo(0.42, 12);
    expect(c.selective.randomAurc).toBeCloseTo(0.6, 12);
    expect(c.selective.atCoverage.map((p) => [p.coverage, p.k, p.accuracy])).toEqual([
      [100, 5, 40],
      [90, 5, 40],
      [80, 4, 50],
      [50, 3, 50],
    ]);
    expect(c.calibration.ece).toBeCloseTo(0.26, 12);
  });

  it("are empty, not wrong, when no result has a verdict (older files, checking off)", () => {
    const c = checkerFigures([record("a", { metric: "em", score: 1 })]);
    expect(c).toMatchObject({
      checked: 0,
      withoutVerdict: 1,
      pass: { passed: 0, precision: null, recall: null, wrongPassed: 0, wrongPassedRate: null },
      selective: { aurc: null, optimalAurc: null, randomAurc: null, atCoverage: [] },
      calibration: { ece: null },
    });
  });
});

const examples: EvalExample[] = ["a", "b", "c", "d", "e", "f", "g"].map((id) => ({
  id,
  dataset: "fake",
  question: `q ${id}`,
  tables: [{ columns: ["n"], data: [[1]] }],
  gold: "1",
}));

const scorer: Scorer = {
  dataset: "fake",
  async score() {
    throw new Error("not used");
  },
  summarize(_examples, scores) {
    return {
      dataset: "fake",
      n: scores.length,
      overall: 0,
      parseRate: 100,
      groups: [],
      subgroups: [],
      metrics: {},
    };
  },
};

describe("the report", () => {
  it("states the checker's figures, the rule for right answers, and what was left out", () => {
    const report = buildReport(examples, records, scorer);
    expect(report.checker?.checked).toBe(5);
    const markdown = renderMarkdown("run", report);
    expect(markdown).toContain("## The checker's verdicts");
    expect(markdown).toContain(
      "5 of 6 results carry the checker's verdict; the figures below are over them. 1 result without one",
    );
    expect(markdown).toContain(
      "1 question of the run has no result (not run yet, or failed on the model endpoint), so it is not counted here, and never as wrong answers.",
    );
    expect(markdown).toContain("or at least 0.5 for ROUGE-L. Of the 5: 2 right, 3 wrong.");
    expect(markdown).toContain("precision 50.00% (right among the passed), recall 50.00%");
    expect(markdown).toContain("**Wrong answers that passed**: 1 of 3 (33.33%)");
    expect(markdown).toContain("| 80% | 4 | 0.600 | 50.00% |");
    expect(markdown).toContain("AURC **0.420**");
    expect(markdown).toContain("The best ranking of these answers gives 0.287");
    expect(markdown).toContain("the error rate, 0.600");
    expect(markdown).toContain("ECE **0.260**");
    expect(markdown).toContain("| [0.6, 0.7) | 2 | 0.600 | 0.500 | -0.100 |");
    expect(markdown).toContain("| [0.9, 1.0] | 1 | 0.900 | 1.000 | +0.100 |");
    expect(markdown).toContain("derived 2 (100.00% right), looked-up 1 (0.00% right)");
    expect(markdown).toContain("not sure: 4 answers, 25.00% right.");
  });

  it("says there are no figures when no result carries a verdict", () => {
    const old = records.map(({ verdict: _, ...r }) => r);
    const markdown = renderMarkdown("run", buildReport(examples, old, scorer));
    expect(markdown).toContain("None of the 6 results carries the checker's verdict");
    expect(markdown).not.toContain("AURC");
  });

  it("draws the risk-coverage and reliability charts only when there are verdicts", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-selective-"));
    const report = await writeReport(dir, examples, records, scorer);
    expect(existsSync(path.join(dir, "charts", "risk-coverage.svg"))).toBe(true);
    expect(existsSync(path.join(dir, "charts", "reliability.png"))).toBe(true);
    const json = JSON.parse(readFileSync(path.join(dir, "report.json"), "utf8"));
    expect(json.checker.calibration.ece).toBeCloseTo(0.26, 12);
    expect(json.checker.selective.aurc).toBeCloseTo(report.checker?.selective.aurc ?? -1, 12);

    const none = mkdtempSync(path.join(os.tmpdir(), "tableminds-selective-"));
    await writeReport(none, examples, [record("a", { metric: "em", score: 1 })], scorer);
    expect(existsSync(path.join(none, "charts", "risk-coverage.svg"))).toBe(false);
    expect(existsSync(path.join(none, "charts", "reliability.svg"))).toBe(false);
  });
});
