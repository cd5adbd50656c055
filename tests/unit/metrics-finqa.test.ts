import { describe, expect, it } from "vitest";
import {
  answerValue,
  executeProgram,
  finqaNumber,
  finqaScorer,
  pythonRound,
  tokenizeProgram,
} from "../../evals/metrics/finqa.js";
import type { EvalExample } from "../../evals/types.js";

const TABLE = [
  ["", "2019", "2018"],
  ["revenue", "$ 1,000", "$ 3,000 ( 1 )"],
  ["margin", "12%", "n/a"],
];

function example(gold: string): EvalExample {
  const [header = [], ...data] = TABLE;
  return {
    id: "q1",
    dataset: "finqa",
    question: "What was the change?",
    tables: [{ name: "table", columns: header, data }],
    gold,
  };
}

const run = (program: string) => executeProgram(tokenizeProgram(program), TABLE);

describe("FinQA rounding and numbers", () => {
  it("rounds as Python's round(x, 5) does, exact binary ties to even", () => {
    // Values computed with CPython 3.11.
    expect(pythonRound(0.015625, 5)).toBe(0.01562);
    expect(pythonRound(-0.015625, 5)).toBe(-0.01562);
    expect(pythonRound(0.046875, 5)).toBe(0.04688);
    expect(pythonRound(0.015635, 5)).toBe(0.01563);
    expect(pythonRound(2.675, 2)).toBe(2.67);
    expect(pythonRound(5868000 / 86842000, 5)).toBe(0.06757);
  });

  it("reads numbers as the evaluator's str_to_num does", () => {
    expect(finqaNumber("1,234.5")).toBe(1234.5);
    expect(finqaNumber("12%")).toBe(0.12);
    expect(finqaNumber("const_100")).toBe(100);
    expect(finqaNumber("const_m1")).toBe(-1);
    expect(finqaNumber("1e3")).toBe(1000);
    expect(finqaNumber("twelve")).toBeNull();
  });
});

describe("FinQA programs", () => {
  it("tokenizes as program_tokenization does", () => {
    expect(tokenizeProgram("subtract(5829, 5735), divide(#0, 5735)")).toEqual([
      "subtract(",
      "5829",
      "5735",
      ")",
      "divide(",
      "#0",
      "5735",
      ")",
      "EOF",
    ]);
  });

  it("executes arithmetic with step references and constants, rounded to 5 decimals", () => {
    expect(run("subtract(92710000, 86842000), divide(#0, 86842000)")).toBe(0.06757);
    expect(run("divide(455, const_7)")).toBe(65);
    expect(run("add(703.1, 705.4), add(#0, const_2), divide(#1, const_2)")).toBe(705.25);
    expect(run("greater(28000, 19000)")).toBe("yes");
    expect(run("exp(const_2, const_3)")).toBe(8);
  });

  it("runs table operations over a row named by its first cell ($ and a (note) dropped)", () => {
    expect(run("table_average(revenue, none)")).toBe(2000);
    expect(run("table_max(revenue, none)")).toBe(3000);
    expect(run("table_sum(revenue, none), divide(#0, const_1000)")).toBe(4);
  });

  it("flags what the evaluator flags as invalid", () => {
    expect(run("modulo(5, 2)")).toBeNull(); // unknown operation
    expect(run("divide(1, 0)")).toBeNull(); // Python raises, the evaluator catches
    expect(run("add(1, twelve)")).toBeNull(); // an argument that is no number
    expect(run("table_sum(margin, none)")).toBeNull(); // a cell that is no number
    expect(run("table_sum(profit, none)")).toBeNull(); // no such row
    expect(run("add(1, 2")).toBeNull(); // no closing parenthesis
  });

  it("reads plain answers as values: numbers, percentages, money, yes/no", () => {
    expect(answerValue("6.757%", TABLE)).toBe(0.06757);
    expect(answerValue("$1,234", TABLE)).toBe(1234);
    expect(answerValue("12 %", TABLE)).toBe(0.12);
    expect(answerValue("Yes.", TABLE)).toBe("yes");
    expect(answerValue("about a third", TABLE)).toBeNull();
  });
});

describe("finqaScorer", () => {
  const score = async (gold: string, answer: string) =>
    finqaScorer.score(example(gold), `Some reasoning.\nFinal Answer: ${answer}`);

  it("counts an answer exact only when its 5-decimal value equals exe_ans", async () => {
    expect((await score("0.06757", "6.757%")).metrics).toEqual({ exact: 1, close: 1 });
    expect(
      (await score("0.06757", "subtract(92710000, 86842000), divide(#0, 86842000)")).score,
    ).toBe(1);
    expect((await score("yes", "yes")).score).toBe(1);
    expect((await score("65.0", "65")).score).toBe(1);
  });

  it("counts a rounded answer as close, not exact", async () => {
    expect((await score("0.06757", "6.76%")).metrics).toEqual({ exact: 0, close: 1 });
    expect((await score("0.06757", "6.76")).metrics).toEqual({ exact: 0, close: 1 });
    expect((await score("16.93811", "0.1694")).metrics).toEqual({ exact: 0, close: 1 });
    expect((await score("0.06757", "7.2%")).metrics).toEqual({ exact: 0, close: 0 });
    expect((await score("yes", "no")).metrics).toEqual({ exact: 0, close: 0 });
  });

  it("marks an output without a readable answer as not parsed", async () => {
    const missing = await finqaScorer.score(example("0.5"), "I could not work it out.");
    expect(missing).toMatchObject({ parsed: false, prediction: "", score: 0 });
    const prose = await score("0.5", "about a half");
    expect(prose).toMatchObject({ parsed: false, prediction: "about a half", score: 0 });
  });

  it("summarizes exact as the headline, close beside it, over the given examples only", async () => {
    const examples = [example("1"), example("2"), example("3")].map((e, i) => ({
      ...e,
      id: `q${i}`,
    }));
    const scores = await Promise.all(
      ["Final Answer: 1", "Final Answer: 2.01", "nothing"].map(async (out, i) => ({
        ...(await finqaScorer.score(examples[i] as EvalExample, out)),
        id: `q${i}`,
      })),
    );
    scores.push({ ...(scores[0] as (typeof scores)[number]), id: "elsewhere" });
    const summary = finqaScorer.summarize(examples, scores);
    expect(summary).toMatchObject({ n: 3, overall: 33.33, parseRate: 66.67 });
    expect(summary.metrics).toEqual({ exact: 33.33, close: 66.67 });
  });
});
