import { describe, expect, it } from "vitest";
import { normalizeAnswer, rougeL } from "../../evals/metrics/squad.js";
import { answerPairs, answerText, seeded } from "../support/generated-cases.js";
import { askReference, rougeReferencePython } from "../support/reference-python.js";

/*
 * TableBench's text scores against their references on seeded generated answers: ROUGE-L
 * against the rouge-score package itself (per pair; we report the plain mean where upstream
 * bootstraps), and the SQuAD-style normalization against CPython running its rules.
 * scripts/setup-tests.sh installs rouge-score; without it these tests fail and say so.
 */
// Looked up in each test, so that without the package each test fails with the reason.
let found: string | undefined;
const python = () => {
  found ??= rougeReferencePython();
  return found;
};
const pairs = answerPairs(400, 7_231);

describe("TableBench's ROUGE-L and normalization, against rouge-score and CPython", () => {
  it("normalizes as the SQuAD rules do under CPython", () => {
    const random = seeded(99);
    const texts = [...pairs.flat(), ...Array.from({ length: 200 }, () => answerText(random))];
    const expected = askReference<string>(python(), "squad", texts);
    const wrong = texts.flatMap((text, i) =>
      normalizeAnswer(text) === expected[i]
        ? []
        : [{ text: JSON.stringify(text), ours: normalizeAnswer(text), python: expected[i] }],
    );
    expect(wrong).toEqual([]);
  });

  it("scores each pair as rouge_score's rougeL F-measure, on normalized and on raw text", () => {
    const normalized = pairs.map(([r, p]) => [normalizeAnswer(r), normalizeAnswer(p)] as const);
    const cases = [...normalized, ...pairs];
    const expected = askReference<number>(python(), "rouge", cases);
    const wrong = cases.flatMap(([reference, prediction], i) =>
      rougeL(reference, prediction) === expected[i]
        ? []
        : [{ reference, prediction, ours: rougeL(reference, prediction), python: expected[i] }],
    );
    expect(wrong).toEqual([]);
    // Not a test of zeros: most pairs share some words, and some are identical.
    expect(expected.filter((f) => f > 0 && f < 1).length).toBeGreaterThan(150);
    expect(expected.filter((f) => f === 1).length).toBeGreaterThan(5);
  });
});
