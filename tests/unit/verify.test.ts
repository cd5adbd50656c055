import { describe, expect, it } from "vitest";
import type { CodeResult } from "../../blackboard/schemas.js";
import { needsDerivation } from "../../grounding/derivation.js";
import { numberCarried, numbersIn, parseNumber } from "../../grounding/numbers.js";
import { printedBooleans } from "../../grounding/printed.js";
import {
  asksForOrder,
  claimsFrom,
  type GroundingInput,
  groundingScore,
  verifyGrounding,
} from "../../grounding/verify.js";
import { useTempHome } from "../support/env.js";
import { codeResult, failedAttempt, ranAttempt } from "../support/evidence.js";
import { medalsRef, tableRef } from "../support/table-fixtures.js";

useTempHome();

const NOW = "2026-01-01T00:00:00Z";

/** [item, status, support] per item for an answer to one run of `code` with `result`. */
async function judged(
  answer: string,
  result: CodeResult | null,
  more: Partial<GroundingInput> & { code?: string; stdout?: string } = {},
) {
  const { code = "result = f(df)", stdout = "", ...input } = more;
  const { attempt, evidence } = ranAttempt("a1", code, stdout, [], result);
  const { checks } = await verifyGrounding({
    answer,
    evidence,
    attempts: [attempt],
    now: NOW,
    ...input,
  });
  return checks.map((c) => [c.item, c.status, c.support]);
}

describe("numbers as written", () => {
  it("reads separators, currency, units, scale words, signs and percentages", () => {
    expect(parseNumber("1,062")).toMatchObject({ value: 1062, places: 0, percent: false });
    expect(parseNumber("$1,200.50")).toMatchObject({ value: 1200.5, places: 2 });
    expect(parseNumber("-3.25")).toMatchObject({ value: -3.25, places: 2 });
    expect(parseNumber("−4")).toMatchObject({ value: -4 });
    expect(parseNumber("45%")).toMatchObject({ value: 45, percent: true });
    expect(parseNumber("468.3 km")).toMatchObject({ value: 468.3, places: 1 });
    expect(parseNumber("USD 1.2 million")).toMatchObject({ value: 1.2, scale: 1e6 });
    expect(parseNumber("Japan")).toBeNull();
    expect(parseNumber("1990 - 91")).toBeNull();
    expect(parseNumber("3 - 0")).toBeNull();
    expect(parseNumber("2880210, tony stewart")).toBeNull();
  });

  it("finds the numbers of a printed line without taking hyphens or names for signs", () => {
    const values = (text: string) => numbersIn(text).map((n) => n.value);
    expect(values("total: 1,062.5 (45%)")).toEqual([1062.5, 45]);
    expect(values("2019-05-01")).toEqual([2019, 5, 1]);
    expect(values("a1 x2 -3 np.float64(10.6)")).toEqual([-3, 10.6]);
    expect(values("4.5e-05")).toEqual([0.000045]);
  });

  it("accepts rounding to the stated precision and fraction/percent forms, nothing looser", () => {
    const claim = (t: string) =>
      parseNumber(t) ?? { value: Number.NaN, places: 0, percent: false, scale: 1 };
    const found = (value: number, percent = false) => ({ value, places: 6, percent, scale: 1 });
    expect(numberCarried(claim("10.6"), found(10.6000001))).toBe(true);
    expect(numberCarried(claim("10.6"), found(10.57))).toBe(true);
    expect(numberCarried(claim("11"), found(10.6))).toBe(true);
    expect(numberCarried(claim("10.57"), found(10.6))).toBe(false);
    expect(numberCarried(claim("10.7"), found(10.6))).toBe(false);
    expect(numberCarried(claim("2.68"), found(2.675))).toBe(true);
    expect(numberCarried(claim("45%"), found(0.45))).toBe(true);
    expect(numberCarried(claim("45%"), found(45))).toBe(true);
    expect(numberCarried(claim("45.2%"), found(0.4523))).toBe(true);
    expect(numberCarried(claim("0.45"), found(45, true))).toBe(true);
    expect(numberCarried(claim("45"), found(0.45))).toBe(false);
    expect(numberCarried(claim("45"), found(0.45), { rounding: true, percentQuestion: true })).toBe(
      true,
    );
    expect(numberCarried(claim("$1.2 million"), found(1_200_000))).toBe(true);
    expect(numberCarried(claim("-5"), found(5))).toBe(false);
    expect(numberCarried(claim("11"), found(10.6), { rounding: false })).toBe(false);
  });
});

describe("derived from the code's result", () => {
  it("supports an answer equal to a derived result, rounding to the answer's precision", async () => {
    const q = { question: "What is the total number of gold medals?" };
    expect(await judged("203", codeResult([203]), q)).toEqual([["203", "supported", "derived"]]);
    expect(await judged("10.6", codeResult([10.5714]), q)).toEqual([
      ["10.6", "supported", "derived"],
    ]);
    expect(await judged("1,062", codeResult([1062]), q)).toEqual([
      ["1,062", "supported", "derived"],
    ]);
    const percent = { question: "What percentage of medals were gold?" };
    expect(await judged("45%", codeResult([0.45]), percent)).toEqual([
      ["45%", "supported", "derived"],
    ]);
    expect(await judged("45", codeResult([0.45]), percent)).toEqual([
      ["45", "supported", "derived"],
    ]);
  });

  it("never supports a result that is not derived: a literal, metadata, a result the table does not change", async () => {
    const literal = codeResult([203], {
      derived: "no",
      derivation: "unchanged when the table's values were perturbed",
    });
    const question = "What is the total number of gold medals?";
    expect(await judged("203", literal, { question, code: "result = 203" })).toEqual([
      ["203", "unsupported", "coincidental"],
    ]);
    const unknown = codeResult([203], { derived: "unknown", derivation: "out of time" });
    expect(await judged("203", unknown, { question })).toEqual([
      ["203", "unsupported", "coincidental"],
    ]);
  });

  it("marks an answer the result contradicts as a conflict, whatever else was printed", async () => {
    const question = "What is the total number of gold medals?";
    const checks = await judged("126", codeResult([203]), {
      question,
      code: "print(df.gold.head(3).sum())\nresult = df.gold.sum()\nprint(result)",
      stdout: "126\n203\n",
    });
    expect(checks).toEqual([["126", "conflicted", "none"]]);
    const printed = codeResult(["most gold: China"], { from: "printed" });
    expect(
      await judged("Japan", printed, {
        question: "Which nation won the most gold?",
        stdout: "Japan 27\nmost gold: China\n",
      }),
    ).toEqual([["Japan", "conflicted", "none"]]);
  });

  it("reads the value after a printed label when the result is the last printed line", async () => {
    const printed = codeResult(["total: 203"], { from: "printed" });
    expect(await judged("203", printed, { question: "What is the total gold?" })).toEqual([
      ["203", "supported", "derived"],
    ]);
    const name = codeResult(["Nation with most gold: United States"], { from: "printed" });
    expect(
      await judged("United States", name, { question: "Which nation won the most gold?" }),
    ).toEqual([["United States", "supported", "derived"]]);
  });

  it("wants a list answer to name the result's values, not pick one of several", async () => {
    const sums = codeResult([120, 95, 80], { kind: "series", labels: ["North", "South", "East"] });
    const question = "Which region sold the most units?";
    expect(await judged("North", sums, { question })).toEqual([
      ["North", "unsupported", "coincidental"],
    ]);
    const top = codeResult(["North", "South"]);
    expect(
      await judged("North, South", top, { question: "Which two regions sold the most?" }),
    ).toEqual([
      ["North", "supported", "derived"],
      ["South", "supported", "derived"],
    ]);
    expect(
      await judged("South, North", top, {
        question: "List the two regions in descending order of units",
      }),
    ).toEqual([
      ["South", "conflicted", "none"],
      ["North", "conflicted", "none"],
    ]);
    const labels = codeResult([120, 95], { kind: "series", labels: ["North", "South"] });
    expect(
      await judged("North, South", labels, { question: "Which regions sold over 90 units?" }),
    ).toEqual([
      ["North", "supported", "derived"],
      ["South", "supported", "derived"],
    ]);
  });

  it("checks yes/no against a derived truth value", async () => {
    const question = "Did China win more gold than Japan?";
    expect(await judged("Yes", codeResult([true]), { question })).toEqual([
      ["Yes", "supported", "derived"],
    ]);
    expect(await judged("No", codeResult([true]), { question })).toEqual([
      ["No", "conflicted", "none"],
    ]);
    const printed = codeResult(["more gold: False"], { from: "printed" });
    expect(await judged("No", printed, { question })).toEqual([["No", "supported", "derived"]]);
  });

  it("traces the figures of a sentence to the result's values, and leaves a sentence without any unsupported", async () => {
    const question = "Describe how gold medals relate to silver medals.";
    const corr = codeResult([0.87]);
    const sentence =
      "There is a strong positive correlation of 0.87 between gold and silver medals.";
    // The direction it claims is an item too, checked against the result's sign.
    expect(await judged(sentence, corr, { question })).toEqual([
      ["0.87", "supported", "derived"],
      ["positive", "supported", "derived"],
    ]);
    const opposite = await judged("There is a negative correlation between them.", corr, {
      question,
    });
    expect(opposite).toEqual([["negative", "conflicted", "none"]]);
    const checks = await judged(
      "The nations that win gold also tend to win silver medals often.",
      corr,
      {
        question,
      },
    );
    expect(checks).toEqual([[expect.any(String), "unsupported", "none"]]);
  });

  it("judges against the newest successful attempt only", async () => {
    const failed = failedAttempt("a1", "print(126)\nraise ValueError()", "126\n");
    const good = ranAttempt("a2", "result = df.gold.sum()", "", [], codeResult([203]));
    const input = {
      evidence: [...failed.evidence, ...good.evidence],
      attempts: [failed.attempt, good.attempt],
      question: "What is the total gold?",
    };
    const right = await verifyGrounding({ answer: "203", ...input });
    expect(right.checks.map((c) => c.support)).toEqual(["derived"]);
    expect(right.checks[0]?.supports).toEqual(["a2:result"]);
    const wrong = await verifyGrounding({ answer: "126", ...input });
    expect(wrong.checks.map((c) => c.status)).toEqual(["conflicted"]);
  });
});

describe("which run an answer is judged against", () => {
  it("takes the run whose result the answer cites (an orchestrator's chosen worker), else the last", async () => {
    const pandas = ranAttempt("s1.pandas.a1", "result = df.gold.sum()", "", [], codeResult([203]));
    const other = ranAttempt("s2.sql.q1", "SELECT count(*) FROM medals", "", [], codeResult([10]));
    const input = {
      answer: "203",
      evidence: [...pandas.evidence, ...other.evidence],
      attempts: [pandas.attempt, other.attempt],
      question: "What is the total gold?",
    };
    const cited = await verifyGrounding({ ...input, cited: ["s1.pandas.a1:result"] });
    expect(cited.checks.map((c) => [c.status, c.supports])).toEqual([
      ["supported", ["s1.pandas.a1:result"]],
    ]);
    const last = await verifyGrounding(input);
    expect(last.checks.map((c) => [c.status, c.conflicts])).toEqual([
      ["conflicted", ["s2.sql.q1:result"]],
    ]);
  });
});

describe("looked up, and coincidence", () => {
  it("supports a lookup by the cell in the row the question names and the column it asks for, read by the code", async () => {
    const table = await medalsRef();
    const question = "What is the silver value for Japan?";
    const { attempt, evidence } = ranAttempt(
      "a1",
      "print(df[df.nation == 'Japan'])",
      "  nation  gold  silver\n2  Japan    27      14\n",
    );
    const { checks, cells } = await verifyGrounding({
      answer: "14",
      evidence,
      attempts: [attempt],
      tables: [table],
      question,
      now: NOW,
    });
    expect(checks.map((c) => [c.status, c.support, c.supports])).toEqual([
      ["supported", "looked-up", ["medals:r2:silver"]],
    ]);
    expect(cells.map((c) => [c.id, c.value])).toEqual([["medals:r2:silver", "14"]]);
    // No code read the cell (the answer came from elsewhere): no lookup.
    const unread = await verifyGrounding({
      answer: "14",
      evidence: [],
      attempts: [],
      tables: [table],
      question,
      now: NOW,
    });
    expect(unread.checks.map((c) => c.support)).toEqual(["coincidental"]);
  });

  it("never counts a cell that merely holds the value: another row, another column, another table's cell", async () => {
    const table = await medalsRef();
    const run = (answer: string, question: string) =>
      verifyGrounding({ answer, evidence: [], attempts: [], tables: [table], question, now: NOW });
    // Same column, another row.
    let { checks } = await run("32", "What is the silver value for Japan?");
    expect(checks.map((c) => [c.status, c.support])).toEqual([["unsupported", "coincidental"]]);
    expect(checks[0]?.note).toMatch(/merely occurs in medals:r1:silver/);
    // Same row, another column.
    ({ checks } = await run("27", "What is the silver value for Japan?"));
    expect(checks.map((c) => c.support)).toEqual(["coincidental"]);
    // An aggregate can only be derived: a cell never answers it.
    ({ checks } = await run("39", "Which value is the highest number of gold medals?"));
    expect(checks.map((c) => c.support)).toEqual(["coincidental"]);
    ({ checks } = await run("China", "Which nation won the most gold medals?"));
    expect(checks.map((c) => c.support)).toEqual(["coincidental"]);
  });

  it("does not let a matching cell hide a contradiction by the result", async () => {
    const table = await medalsRef();
    const { attempt, evidence } = ranAttempt("a1", "result = 99", "", [], codeResult([99]));
    const { checks } = await verifyGrounding({
      answer: "14",
      evidence,
      attempts: [attempt],
      tables: [table],
      question: "What is the silver value for Japan?",
    });
    expect(checks.map((c) => c.status)).toEqual(["conflicted"]);
  });

  it("passes nothing for the README's wrong answer: a sum answered by a cell that holds the same number", async () => {
    const table = await tableRef(
      "medals",
      "nation,gold,silver,bronze\nA,39,41,33\nB,38,14,18\nC,27,14,17",
      [
        { name: "nation", dtype: "object" },
        { name: "gold", dtype: "int64" },
        { name: "silver", dtype: "int64" },
        { name: "bronze", dtype: "int64" },
      ],
    );
    const { attempt, evidence } = ranAttempt("a1", "gold = df['gold']", "", [], null);
    const { checks } = await verifyGrounding({
      answer: "14",
      evidence,
      attempts: [attempt],
      tables: [table],
      question: "How many gold medals did these nations win in total?",
    });
    expect(groundingScore(checks)).toBe(0);
    expect(checks.map((c) => c.support)).toEqual(["coincidental"]);
  });

  it("knows which questions need a computation", () => {
    for (const q of [
      "Which nation won the most gold?",
      "What is the total revenue?",
      "How many nations won more than 10 gold medals?",
      "What is the average score?",
      "Is China's gold count higher than Japan's?",
      "What is the difference between the two?",
      "What percentage of medals were gold?",
    ]) {
      expect([q, needsDerivation(q)]).toEqual([q, true]);
    }
    for (const q of [
      "How many silver medals did Japan win?",
      "What is the capital of France?",
      "Who directed the film in 1999?",
    ]) {
      expect([q, needsDerivation(q)]).toEqual([q, q.startsWith("How many")]);
    }
  });
});

describe("claims, edges and the grounding score", () => {
  it("makes one claim per item with supports and conflicts edges and stable ids", async () => {
    const { attempt, evidence } = ranAttempt(
      "a1",
      "result = [203, 'Chile']",
      "",
      [],
      codeResult([203, "Chile"]),
    );
    const { checks } = await verifyGrounding({
      answer: "203, Chile",
      evidence,
      attempts: [attempt],
      question: "What is the total and who won?",
    });
    const { claims, edges } = claimsFrom("203, Chile", checks);
    expect(claims.map((c) => [c.text, c.status, c.evidence])).toEqual([
      ["203", "supported", ["a1:result"]],
      ["Chile", "supported", ["a1:result"]],
    ]);
    expect(edges.every((e) => e.kind === "supports" && e.from === "a1:result")).toBe(true);
    expect(claimsFrom("203, Chile", checks).claims.map((c) => c.id)).toEqual(
      claims.map((c) => c.id),
    );
    expect(claimsFrom("203, Chili", checks).claims[0]?.id).not.toBe(claims[0]?.id);
  });

  it("scores 2 only when every item is supported, 0 on a conflict or nothing supported", async () => {
    const question = "What is the total?";
    const run = async (answer: string, result: CodeResult) => {
      const { attempt, evidence } = ranAttempt("a1", "result = x", "", [], result);
      return (await verifyGrounding({ answer, evidence, attempts: [attempt], question })).checks;
    };
    expect(groundingScore(await run("203", codeResult([203])))).toBe(2);
    expect(groundingScore(await run("204", codeResult([203])))).toBe(0);
    expect(groundingScore(await run("203", codeResult([203], { derived: "no" })))).toBe(0);
    expect(groundingScore([])).toBe(0);
  });

  it("reads truth values from printed lines", () => {
    expect(printedBooleans("True")).toEqual([true]);
    expect(printedBooleans("exceeds: no")).toEqual([false]);
    expect(printedBooleans("[True, False]")).toEqual([true, false]);
    expect(printedBooleans("1,062 >= 1,000")).toEqual([true]);
    expect(printedBooleans("total: 203")).toEqual([]);
  });

  it("knows which questions ask for an order", () => {
    expect(asksForOrder("List the top 3 nations in descending order of gold")).toBe(true);
    expect(asksForOrder("Rank the teams from highest to lowest attendance")).toBe(true);
    expect(asksForOrder("Which nations won more than 10 gold medals?")).toBe(false);
    expect(asksForOrder("Which nation ranked 4th?")).toBe(false);
  });
});
