import { describe, expect, it } from "vitest";
import {
  computeEm,
  computeEmWithTolerance,
  exactMatch,
  exactMatchWithin,
} from "../../evals/metrics/tablebench.js";
import { tablebenchPairs } from "../support/generated-cases.js";
import { askReference } from "../support/reference-python.js";

/*
 * TableBench's exact match against CPython running upstream's compute_em and
 * compute_em_with_tolerance (reimplemented in python_reference.py from
 * metrics/custom_em_metric.py), on 4000 seeded pairs: on the raw strings (Decimal, the
 * comma split, percents, rounding to the reference's decimals, the 28-digit context) and after
 * the SQuAD normalization, as QAMetric scores them.
 */
type Scores = { em: number; em2: number; em5: number; em10: number };
type Answer = { raw: Scores; normalized: Scores };

const pairs = tablebenchPairs(4000, 20_250_521);
const answers = askReference<Answer>("python3", "tablebench_em", pairs);

function ours(reference: string, prediction: string): Answer {
  return {
    raw: {
      em: computeEm(reference, prediction),
      em2: computeEmWithTolerance(reference, prediction, 2),
      em5: computeEmWithTolerance(reference, prediction, 5),
      em10: computeEmWithTolerance(reference, prediction, 10),
    },
    normalized: {
      em: exactMatch(reference, prediction),
      em2: exactMatchWithin(reference, prediction, 2),
      em5: exactMatchWithin(reference, prediction, 5),
      em10: exactMatchWithin(reference, prediction, 10),
    },
  };
}

describe("TableBench's EM, against upstream's rules under CPython", () => {
  it("generates pairs that reach every rule", () => {
    const raw = answers.map((a) => a.raw);
    const single = pairs.filter(([r]) => !r.includes(","));
    expect(single.length).toBeGreaterThan(2500);
    // Matches, misses, partial list credit, and numbers only the tolerance accepts.
    expect(raw.filter((s) => s.em === 1).length).toBeGreaterThan(500);
    expect(raw.filter((s) => s.em === 0).length).toBeGreaterThan(1000);
    expect(raw.filter((s) => s.em > 0 && s.em < 1).length).toBeGreaterThan(100);
    expect(raw.filter((s) => s.em10 > s.em).length).toBeGreaterThan(200);
    expect(raw.filter((s) => s.em10 > s.em5).length).toBeGreaterThan(50);
    expect(raw.filter((s) => s.em5 > s.em2).length).toBeGreaterThan(50);
    expect(pairs.filter(([r]) => r.includes("%")).length).toBeGreaterThan(400);
    expect(pairs.filter(([r]) => /[^\p{ASCII}]/u.test(r)).length).toBeGreaterThan(200);
    const normalized = answers.map((a) => a.normalized);
    expect(normalized.filter((s) => s.em === 1).length).toBeGreaterThan(300);
    expect(normalized.filter((s) => s.em10 > s.em).length).toBeGreaterThan(30);
  });

  it("scores every pair as upstream does, raw and normalized", () => {
    const wrong = pairs.flatMap(([reference, prediction], i) => {
      const mine = ours(reference, prediction);
      return JSON.stringify(mine) === JSON.stringify(answers[i])
        ? []
        : [{ reference, prediction, ours: mine, python: answers[i] }];
    });
    expect(wrong.slice(0, 10)).toEqual([]);
  });
});
