import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import { describeSelection, selectExamples, stratifiedSample } from "../../evals/selection.js";
import type { EvalExample } from "../../evals/types.js";

/** 100 questions in strata of 50, 30, 15 and 5, interleaved. */
const strata = [
  ["big", 50],
  ["mid", 30],
  ["small", 15],
  ["tiny", 5],
] as const;
const examples: EvalExample[] = strata.flatMap(([name, size]) =>
  Array.from({ length: size }, (_, i) => ({
    id: `${name}-${i}`,
    dataset: "fake",
    question: "?",
    tables: [{ columns: ["n"], data: [[i]] }],
    gold: "",
    subcategory: name,
  })),
);

const count = (list: EvalExample[]) =>
  Object.fromEntries(
    strata.map(([name]) => [name, list.filter((e) => e.subcategory === name).length]),
  );

describe("the stratified sample", () => {
  it("gives every stratum one question, the rest in proportion to its size", () => {
    const sample = stratifiedSample(examples, 10, 0);
    expect(sample).toHaveLength(10);
    expect(count(sample)).toEqual({ big: 4, mid: 3, small: 2, tiny: 1 });
    // 16 left after one each, over rooms of 49, 29, 14 and 4: 8.2, 4.8, 2.3, 0.7.
    expect(count(stratifiedSample(examples, 20, 7))).toEqual({
      big: 9,
      mid: 6,
      small: 3,
      tiny: 2,
    });
  });

  it("is the same for the same seed, whatever the file's order, and another for another seed", () => {
    const ids = (list: EvalExample[]) => list.map((e) => e.id).sort();
    const once = stratifiedSample(examples, 12, 5);
    expect(ids(stratifiedSample([...examples].reverse(), 12, 5))).toEqual(ids(once));
    expect(ids(stratifiedSample(examples, 12, 6))).not.toEqual(ids(once));
    // The dataset's order is kept.
    const order = new Map(examples.map((e, i) => [e.id, i]));
    const positions = once.map((e) => order.get(e.id) ?? -1);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it("takes everything when asked for as many questions as there are", () => {
    expect(stratifiedSample(examples, 100, 0)).toHaveLength(100);
    expect(stratifiedSample(examples, 500, 0)).toHaveLength(100);
  });

  it("spreads a small TableBench sample over its subtypes, where the first N are one subtype", async () => {
    const sample40 = await loadDataset("tablebench", {
      path: path.resolve(
        import.meta.dirname,
        "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
      ),
    });
    const subtypes = (list: EvalExample[]) => new Set(list.map((e) => e.subcategory)).size;
    const first = selectExamples(sample40, { kind: "first", n: 8 });
    const sampled = selectExamples(sample40, { kind: "sample", n: 8, seed: 0 });
    expect(subtypes(first)).toBeLessThanOrEqual(4);
    expect(subtypes(sampled)).toBe(8);
  });

  it("says which selection was used", () => {
    expect(describeSelection({ kind: "all" })).toBe("all");
    expect(describeSelection({ kind: "first", n: 10 })).toBe("first 10");
    expect(describeSelection({ kind: "sample", n: 10, seed: 3 })).toBe("sample 10 seed 3");
  });
});
