import { describe, expect, it } from "vitest";
import { sentenceBleu } from "../../training/rewards/bleu.js";
import { answerFormat, codeFormat, planFormat } from "../../training/rewards/format.js";
import { REWARDS, scoreReward } from "../../training/rewards/index.js";
import type { RewardSample } from "../../training/rewards/types.js";

const PLAN = "<plan>\n1. Filter rows where year > 2000\n2. Sum the sales column\n</plan>";
const GOLD_PLAN = "1. Filter rows where year > 2000\n2. Sum the sales column";

const score = (preset: "paper" | "release", role: "plan" | "answer", sample: RewardSample) =>
  scoreReward(preset, role, sample);

describe("format checks", () => {
  it("plan: strict wants numbered steps inside a closed <plan> block, loose anywhere", () => {
    expect(planFormat(PLAN, "strict")).toBe(1);
    expect(planFormat("Step 1: sum\nStep 2: print", "strict")).toBe(0);
    expect(planFormat("Step 1: sum\nStep 2: print", "loose")).toBe(1);
    expect(planFormat("<plan>\n- sum the column\n</plan>", "strict")).toBe(0);
    expect(planFormat("<plan>\n1) sum\n", "strict")).toBe(0);
    expect(planFormat("just do it", "loose")).toBe(0);
  });

  it("code: exactly one ```python block", () => {
    expect(codeFormat("Here:\n```python\nprint(1)\n```")).toBe(1);
    expect(codeFormat("```python\nprint(1)\n```\n```python\nprint(2)\n```")).toBe(0);
    expect(codeFormat("```\nprint(1)\n```")).toBe(0);
    expect(codeFormat("print(1)")).toBe(0);
  });

  it('answer: a "Final Answer: ..." line', () => {
    expect(answerFormat("Reasoning.\nFinal Answer: 48")).toBe(1);
    expect(answerFormat("48")).toBe(0);
    expect(answerFormat("Final Answer:")).toBe(0);
  });
});

describe("plan rewards", () => {
  it("paper: 0.1 format + 0.9 BLEU of the <plan> block against the pseudo-gold plan", async () => {
    const exact = await score("paper", "plan", { response: PLAN, reference: GOLD_PLAN });
    expect(exact.reward).toBeCloseTo(1, 15);
    expect(exact.parts).toEqual({ format: 0.1, bleu: 0.9 });
    const loose = await score("paper", "plan", { response: GOLD_PLAN, reference: GOLD_PLAN });
    expect(loose.parts).toEqual({ format: 0, bleu: 0.9 });
    const other = "<plan>\n1. Sum the sales column\n</plan>";
    const partial = await score("paper", "plan", { response: other, reference: GOLD_PLAN });
    expect(partial.reward).toBeCloseTo(
      0.1 + 0.9 * sentenceBleu(GOLD_PLAN, "1. Sum the sales column"),
      15,
    );
    // By hand: 5 tokens against 12, BP = exp(1 - 12/5); every unigram matches; the n-grams
    // starting at "1." do not ("1. Filter" in the reference): p = 1, 3/4, 2/3, 1/2.
    expect(sentenceBleu(GOLD_PLAN, "1. Sum the sales column")).toBeCloseTo(
      Math.exp(1 - 12 / 5) * (1 * (3 / 4) * (2 / 3) * (1 / 2)) ** 0.25,
      15,
    );
  });

  it("release: the format the context asks for, strict unless told loose", async () => {
    const sample = { response: GOLD_PLAN, reference: GOLD_PLAN, tables: [] };
    expect((await REWARDS.release.plan(sample, {})).parts.format).toBe(0);
    expect((await REWARDS.release.plan(sample, { planFormat: "loose" })).reward).toBeCloseTo(1, 15);
  });
});

describe("answer rewards", () => {
  it("paper: 0.1 format + 0.9 exact match of the Final Answer line", async () => {
    const right = await score("paper", "answer", { response: "Final Answer: 48", reference: "48" });
    expect(right.parts).toEqual({ format: 0.1, match: 0.9 });
    const wrong = await score("paper", "answer", { response: "Final Answer: 47", reference: "48" });
    expect(wrong.parts).toEqual({ format: 0.1, match: 0 });
    const bare = await score("paper", "answer", { response: "48", reference: "48" });
    expect(bare.reward).toBe(0);
  });

  it("release: TableBench's metric for the subtype, with no format term", async () => {
    const em = await score("release", "answer", {
      response: "Final Answer: 48",
      reference: "48",
      qtype: "NumericalReasoning",
      qsubtype: "Aggregation",
    });
    expect(em).toEqual({ reward: 1, parts: { em: 1 } });
    const within = {
      response: "Final Answer: 105",
      reference: "100",
      qtype: "DataAnalysis",
    };
    expect(
      (await score("release", "answer", { ...within, qsubtype: "TrendForecasting" })).parts,
    ).toEqual({ em10: 1 });
    expect(
      (await score("release", "answer", { ...within, qsubtype: "ImpactAnalysis" })).parts,
    ).toEqual({ em: 0 });
    // ROUGE-L: LCS of "sales rose in 2019" and "sales fell in 2019" is 3 of 4 -> F = 0.75.
    const rouge = await score("release", "answer", {
      response: "Final Answer: Sales fell in 2019.",
      reference: "sales rose in 2019",
      qtype: "DataAnalysis",
      qsubtype: "DescriptiveAnalysis",
    });
    expect(rouge.parts).toEqual({ rougeL: 0.75 });
    const missing = await score("release", "answer", { response: "48", reference: "48" });
    expect(missing.reward).toBe(0);
  });

  it("rejects a malformed sample at the door", async () => {
    const bad = { response: 1, reference: "48" } as unknown as RewardSample;
    await expect(async () => scoreReward("paper", "answer", bad)).rejects.toThrow();
  });
});
