import { describe, expect, it } from "vitest";
import type { Evidence } from "../../blackboard/schemas.js";
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
import { cell, failedAttempt, ranAttempt } from "../support/evidence.js";
import { medalsRef, tableRef } from "../support/table-fixtures.js";

useTempHome();

const NOW = "2026-01-01T00:00:00Z";

/** [item, status, evidence ids] per item for an answer to one run of `code`. */
async function traced(
  answer: string,
  code: string,
  stdout: string,
  more: Partial<GroundingInput> = {},
) {
  const { attempt, evidence } = ranAttempt("a1", code, stdout);
  const { checks } = await verifyGrounding({
    answer,
    evidence,
    attempts: [attempt],
    now: NOW,
    ...more,
  });
  return checks.map((c) => [c.item, c.status, [...c.supports, ...c.conflicts]]);
}

const medalsTable = medalsRef;

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

describe("tracing numbers to printed output", () => {
  const sumCode = 'total = df["gold"].sum()\nprint("nations:", 10)\nprint(total)';

  it("traces a number to the line that printed it", async () => {
    expect(await traced("203", sumCode, "nations: 10\n203\n")).toEqual([
      ["203", "supported", ["a1:out2"]],
    ]);
  });

  it("traces rounded values, thousands separators, percentages, currency, units, signs", async () => {
    const code = "print(avg)\nprint(total)\nprint(share)\nprint(cost)\nprint(delta)";
    const stdout = "10.6000000001\n1,062\n0.4512\n1200000.0\n-3.25\n";
    const status = async (answer: string) => (await traced(answer, code, stdout))[0];
    expect(await status("10.6")).toEqual(["10.6", "supported", ["a1:out1"]]);
    expect(await status("11")).toEqual(["11", "supported", ["a1:out1"]]);
    expect(await status("1062")).toEqual(["1062", "supported", ["a1:out2"]]);
    expect(await status("45.12%")).toEqual(["45.12%", "supported", ["a1:out3"]]);
    expect(await status("45.1%")).toEqual(["45.1%", "supported", ["a1:out3"]]);
    expect(await status("$1.2 million")).toEqual(["$1.2 million", "supported", ["a1:out4"]]);
    expect(await status("$1,200,000")).toEqual(["$1,200,000", "supported", ["a1:out4"]]);
    expect(await status("-3.25")).toEqual(["-3.25", "supported", ["a1:out5"]]);
    expect(await status("-3.25 points")).toEqual(["-3.25 points", "supported", ["a1:out5"]]);
  });

  it("reads a percentage question's bare number as the percent of a printed fraction", async () => {
    const stdout = "share: 0.4512\n";
    const asked = "What percentage of the votes did the winner get?";
    expect(await traced("45.12", "print(share)", stdout, { question: asked })).toEqual([
      ["45.12", "supported", ["a1:out1"]],
    ]);
    const other = await traced("45.12", "print(share)", stdout, { question: "What is the share?" });
    expect(other[0]?.[1]).toBe("conflicted");
  });

  it("marks an answer that differs from the code's final value as a conflict, and says so", async () => {
    const { attempt, evidence } = ranAttempt("a1", sumCode, "nations: 10\n203\n");
    const { checks } = await verifyGrounding({ answer: "205", evidence, attempts: [attempt] });
    expect(checks).toEqual([
      {
        item: "205",
        kind: "number",
        status: "conflicted",
        supports: [],
        conflicts: ["a1:out2"],
        note: 'the answer "205" differs from a1:out2, the last value the code printed: "203"',
      },
    ]);
    const flipped = await traced("3.25", "print(delta)", "-3.25\n");
    expect(flipped).toEqual([["3.25", "conflicted", ["a1:out1"]]]);
  });

  it("does not take an intermediate printed value for a contradiction", async () => {
    // 10 was printed too: the answer may be wrong, but nothing printed contradicts it.
    expect(await traced("10", sumCode, "nations: 10\n203\n")).toEqual([
      ["10", "supported", ["a1:out1"]],
    ]);
  });

  it("does not read a final value from output the evidence cut short or a pandas footer", async () => {
    const many = Array.from({ length: 60 }, (_, i) => `${i}`).join("\n");
    expect(await traced("205", "print(rows)", `${many}\n`)).toEqual([["205", "unsupported", []]]);
    const series = "Japan    27\nName: gold, dtype: int64\n";
    expect(await traced("205", "print(s)", series)).toEqual([["205", "unsupported", []]]);
  });

  it("ignores what a failed attempt printed, and uses the newest successful one", async () => {
    const failed = failedAttempt("a1", "print(total)\nraise ValueError()", "42\n");
    const { checks } = await verifyGrounding({
      answer: "42",
      evidence: failed.evidence,
      attempts: [failed.attempt],
    });
    expect(checks.map((c) => [c.status, c.supports])).toEqual([["unsupported", []]]);

    const first = ranAttempt("a1", "print(total)", "205\n");
    const second = ranAttempt("a2", "print(total)", "203\n");
    const both = {
      evidence: [...first.evidence, ...second.evidence],
      attempts: [first.attempt, second.attempt],
    };
    const stale = await verifyGrounding({ answer: "205", ...both });
    expect(stale.checks.map((c) => [c.status, c.supports, c.conflicts])).toEqual([
      ["conflicted", ["a1:out1"], ["a2:out1"]],
    ]);
  });
});

describe("tracing to tables", () => {
  it("traces a number or a name to a source cell and posts that cell as evidence", async () => {
    const medals = await medalsTable();
    const { attempt, evidence } = ranAttempt("a1", "print(n)", "4\n");
    const { checks, cells } = await verifyGrounding({
      answer: "Great Britain",
      evidence,
      attempts: [attempt],
      tables: [medals],
      now: NOW,
    });
    expect(checks.map((c) => [c.status, c.supports])).toEqual([
      ["supported", ["medals:r3:nation"]],
    ]);
    expect(cells).toEqual([
      {
        id: "medals:r3:nation",
        modality: "table",
        source: "checker",
        anchor: { kind: "cells", table: "medals", rows: [3], columns: ["nation"] },
        value: "Great Britain",
        time: NOW,
        provenance: { attempt: "source", parents: [] },
        confidence: 1,
      },
    ]);
  });

  it("does not let a matching cell hide a contradiction by the code's final value", async () => {
    const medals = await medalsTable();
    const { attempt, evidence } = ranAttempt("a1", "print(total)", "203\n");
    const { checks } = await verifyGrounding({
      answer: "39",
      evidence,
      attempts: [attempt],
      tables: [medals],
    });
    expect(checks.map((c) => [c.status, c.supports, c.conflicts])).toEqual([
      ["conflicted", ["medals:r0:gold"], ["a1:out1"]],
    ]);
  });

  it("takes letters glued to digits for a name, not a number with a unit", async () => {
    const models = await tableRef("models", "model,speed\nModel 8F,120\nModel 8B,110", [
      { name: "model", dtype: "object" },
      { name: "speed", dtype: "int64" },
    ]);
    const { checks } = await verifyGrounding({
      answer: "8F",
      evidence: [],
      attempts: [],
      tables: [models],
    });
    expect(checks.map((c) => [c.kind, c.status, c.supports])).toEqual([
      ["text", "supported", ["models:r0:model"]],
    ]);
  });

  it("holds source cells to their exact value, but lets computed tables round", async () => {
    const medals = await medalsTable();
    const noCode = { evidence: [], attempts: [], tables: [medals] };
    expect((await verifyGrounding({ answer: "39", ...noCode })).checks[0]?.supports).toEqual([
      "medals:r0:gold",
    ]);
    expect((await verifyGrounding({ answer: "38.6", ...noCode })).checks[0]?.status).toBe(
      "unsupported",
    );
    const averages = await tableRef("by_nation", "nation,avg\nJapan,19.3333333\nChina,29.3333", [
      { name: "nation", dtype: "object" },
      { name: "avg", dtype: "float64" },
    ]);
    const { attempt, evidence } = ranAttempt("a1", "by_nation = f(df)\nprint('done')", "done\n", [
      { variable: "by_nation", line: 1, table: averages, lineage: [] },
    ]);
    const { checks } = await verifyGrounding({ answer: "19.33", evidence, attempts: [attempt] });
    expect(checks.map((c) => [c.status, c.supports])).toEqual([["supported", ["a1:by_nation"]]]);
  });

  it("uses source cells the answerer already posted, and a column name for a column answer", async () => {
    const medals = await medalsTable();
    const posted: Evidence = cell("medals", 0, "gold", "39");
    const { checks, cells } = await verifyGrounding({
      answer: "39, silver",
      evidence: [posted],
      attempts: [],
      tables: [medals],
    });
    expect(checks.map((c) => [c.item, c.supports])).toEqual([
      ["39", ["medals:r0:gold"]],
      ["silver", ["medals:col:silver"]],
    ]);
    // The posted cell is not posted again.
    expect(cells.map((c) => c.id)).toEqual(["medals:col:silver"]);
  });

  it("keeps a name with 'and' whole when a cell holds it whole, else splits it", async () => {
    const caribbean = await tableRef(
      "caribbean",
      "country,gold\nTrinidad and Tobago,2\nJamaica,4",
      [
        { name: "country", dtype: "object" },
        { name: "gold", dtype: "int64" },
      ],
    );
    const run = async (answer: string) =>
      (
        await verifyGrounding({ answer, evidence: [], attempts: [], tables: [caribbean] })
      ).checks.map((c) => [c.item, c.status]);
    expect(await run("Trinidad and Tobago")).toEqual([["Trinidad and Tobago", "supported"]]);
    expect(await run("Jamaica and Trinidad and Tobago")).toEqual([
      ["Jamaica", "supported"],
      ["Trinidad", "supported"],
      ["Tobago", "supported"],
    ]);
    expect(await run("Jamaica, Trinidad and Tobago")).toEqual([
      ["Jamaica", "supported"],
      ["Trinidad and Tobago", "supported"],
    ]);
  });
});

describe("lists, names and yes/no", () => {
  it("takes list items in any order unless the question asks for one", async () => {
    const code = "print(top)";
    const stdout = "['Japan', 'China', 'United States']\n";
    expect(await traced("United States, Japan, China", code, stdout)).toEqual([
      ["United States", "supported", ["a1:out1"]],
      ["Japan", "supported", ["a1:out1"]],
      ["China", "supported", ["a1:out1"]],
    ]);
    const question = "List the top 3 nations in descending order of gold medals.";
    const ordered = await traced("United States, Japan, China", code, stdout, { question });
    expect(ordered.map((c) => c[1])).toEqual(["conflicted", "conflicted", "conflicted"]);
    const same = await traced("Japan, China, United States", code, stdout, { question });
    expect(same.map((c) => c[1])).toEqual(["supported", "supported", "supported"]);
  });

  it("matches names whatever their case, accents and spacing, and only as whole words", async () => {
    const code = "print(best)";
    expect(await traced("  sao   PAULO ", code, "São Paulo\n")).toEqual([
      ["sao   PAULO", "supported", ["a1:out1"]],
    ]);
    // Another name than the one the code printed last is a contradiction.
    expect(await traced("Paul", code, "São Paulo\n")).toEqual([
      ["Paul", "conflicted", ["a1:out1"]],
    ]);
  });

  it("checks yes/no against the printed truth value or comparison", async () => {
    const code = 'print("more gold than silver:", result)';
    expect(await traced("Yes", code, "more gold than silver: True\n")).toEqual([
      ["Yes", "supported", ["a1:out1"]],
    ]);
    expect(await traced("No", code, "more gold than silver: True\n")).toEqual([
      ["No", "conflicted", ["a1:out1"]],
    ]);
    expect(await traced("yes", "print(a > b)", "np.True_\n")).toEqual([
      ["yes", "supported", ["a1:out1"]],
    ]);
    expect(await traced("No", 'print(f"{a} > {b}")', "203 > 200\n")).toEqual([
      ["No", "conflicted", ["a1:out1"]],
    ]);
    expect(await traced("Yes", "print(a)\nprint(b)", "12\n15\n")).toEqual([
      ["Yes", "unsupported", []],
    ]);
  });

  it("takes the agreeing printed truth values when the last line states none", async () => {
    const code = "print(a > 1)\nprint(b > 1)\nprint('checked')";
    expect(await traced("Yes", code, "True\nTrue\nchecked\n")).toEqual([
      ["Yes", "supported", ["a1:out1", "a1:out2"]],
    ]);
    expect(await traced("Yes", code, "True\nFalse\nchecked\n")).toEqual([
      ["Yes", "unsupported", ["a1:out1", "a1:out2"]],
    ]);
  });

  it("reads truth values from printed lines", () => {
    expect(printedBooleans("True")).toEqual([true]);
    expect(printedBooleans("exceeds: no")).toEqual([false]);
    expect(printedBooleans("[True, False]")).toEqual([true, false]);
    expect(printedBooleans("1,062 >= 1,000")).toEqual([true]);
    expect(printedBooleans("total: 203")).toEqual([]);
  });

  it("traces the yes/no and the figures of an explained answer", async () => {
    const code = "print(corr)\nprint(corr > 0.5)";
    const checks = await traced(
      "Yes, a strong positive correlation (0.97)",
      code,
      "0.9731\nTrue\n",
    );
    expect(checks).toEqual([
      ["Yes", "supported", ["a1:out2"]],
      ["0.97", "supported", ["a1:out1"]],
    ]);
  });
});

describe("no evidence, claims, edges and the grounding score", () => {
  it("finds nothing for an answer without evidence", async () => {
    const { checks, cells } = await verifyGrounding({ answer: "42", evidence: [], attempts: [] });
    expect(checks).toEqual([
      { item: "42", kind: "number", status: "unsupported", supports: [], conflicts: [] },
    ]);
    expect(cells).toEqual([]);
    expect(groundingScore(checks)).toBe(0);
  });

  it("makes one claim per item with supports and conflicts edges and stable ids", async () => {
    const { attempt, evidence } = ranAttempt("a1", "print(a)\nprint(b)", "203\nJapan\n");
    const { checks } = await verifyGrounding({
      answer: "203, Chile",
      evidence,
      attempts: [attempt],
    });
    const { claims, edges } = claimsFrom("203, Chile", checks);
    expect(claims.map((c) => [c.text, c.status, c.evidence])).toEqual([
      ["203", "supported", ["a1:out1"]],
      ["Chile", "unsupported", []],
    ]);
    expect(claims[0]?.id).toMatch(/^claim:[0-9a-f]{8}:1$/);
    expect(edges).toEqual([{ from: "a1:out1", to: claims[0]?.id, kind: "supports" }]);
    expect(groundingScore(checks)).toBe(1);
    expect(claimsFrom("203, Chile", checks).claims.map((c) => c.id)).toEqual(
      claims.map((c) => c.id),
    );
    expect(claimsFrom("203, Chili", checks).claims[0]?.id).not.toBe(claims[0]?.id);

    const conflicted = await verifyGrounding({ answer: "Chile", evidence, attempts: [attempt] });
    const graph = claimsFrom("Chile", conflicted.checks);
    expect(graph.edges).toEqual([{ from: "a1:out2", to: graph.claims[0]?.id, kind: "conflicts" }]);
    expect(groundingScore(conflicted.checks)).toBe(0);
  });

  it("traces the figures of a sentence, and leaves a sentence without any to the model", async () => {
    const code = "print(top)\nprint(share)";
    const sentence = "Japan leads the ranking because it holds 45% of all the gold medals listed";
    expect(await traced(sentence, code, "Japan\n0.45\n")).toEqual([
      ["45%", "supported", ["a1:out2"]],
    ]);
    const { checks } = await verifyGrounding({
      answer: "The table lists the medal counts of ten nations at the games.",
      evidence: [],
      attempts: [],
    });
    expect(checks.map((c) => [c.kind, c.status])).toEqual([["prose", "unsupported"]]);
    expect(groundingScore(checks)).toBe(1);
  });

  it("knows which questions ask for an order", () => {
    expect(asksForOrder("List the top 3 nations in descending order of gold")).toBe(true);
    expect(asksForOrder("Rank the teams from highest to lowest attendance")).toBe(true);
    expect(asksForOrder("Which nations won more than 10 gold medals?")).toBe(false);
    expect(asksForOrder("Which nation ranked 4th?")).toBe(false);
  });
});
