import { describe, expect, it } from "vitest";
import {
  asksForOrder,
  claimsFrom,
  groundingScore,
  numberCarried,
  parseNumber,
  verifyGrounding,
} from "../../blackboard/verify.js";
import { cell, ranAttempt } from "../support/evidence.js";

async function statuses(answer: string, code: string, stdout: string, ordered = false) {
  const { attempt, evidence } = ranAttempt("a1", code, stdout);
  const checks = await verifyGrounding({ answer, evidence, attempts: [attempt], ordered });
  return checks.map((c) => [c.item, c.status, [...c.supports, ...c.conflicts]]);
}

describe("parseNumber and numberCarried", () => {
  it("reads separators, currency, units, signs and percentages", () => {
    expect(parseNumber("1,062")).toEqual({ value: 1062, places: 0, percent: false });
    expect(parseNumber("$1,200.50")).toEqual({ value: 1200.5, places: 2, percent: false });
    expect(parseNumber("-3.25")).toEqual({ value: -3.25, places: 2, percent: false });
    expect(parseNumber("45%")).toEqual({ value: 45, places: 0, percent: true });
    expect(parseNumber("468.3 km")).toEqual({ value: 468.3, places: 1, percent: false });
    expect(parseNumber("Japan")).toBeNull();
    expect(parseNumber("1990 - 91")).toBeNull();
  });

  it("accepts rounding to the stated precision and fraction/percent forms, nothing looser", () => {
    const claim = (t: string) => parseNumber(t) ?? { value: Number.NaN, places: 0, percent: false };
    const found = (value: number, percent = false) => ({ value, places: 6, percent });
    expect(numberCarried(claim("10.6"), found(10.6000001))).toBe(true);
    expect(numberCarried(claim("10.6"), found(10.57))).toBe(true);
    expect(numberCarried(claim("11"), found(10.6))).toBe(true);
    expect(numberCarried(claim("10.57"), found(10.6))).toBe(false);
    expect(numberCarried(claim("10.7"), found(10.6))).toBe(false);
    expect(numberCarried(claim("45%"), found(0.45))).toBe(true);
    expect(numberCarried(claim("45.2%"), found(0.4523))).toBe(true);
    expect(numberCarried(claim("0.45"), found(45, true))).toBe(true);
    expect(numberCarried(claim("45"), found(0.45))).toBe(false);
    expect(numberCarried(claim("-5"), found(5))).toBe(false);
  });
});

describe("verifyGrounding", () => {
  const sumCode = 'total = df["gold"].sum()\nprint("nations:", 10)\nprint(total)';

  it("traces a number to the line that printed it", async () => {
    expect(await statuses("203", sumCode, "nations: 10\n203\n")).toEqual([
      ["203", "supported", ["a1:out2"]],
    ]);
  });

  it("traces a rounded number, a thousands separator and a percentage", async () => {
    const code = "print(avg)\nprint(total)\nprint(share)";
    const stdout = "10.6000000001\n1062\n0.4512\n";
    expect(await statuses("10.6", code, stdout)).toEqual([["10.6", "supported", ["a1:out1"]]]);
    expect(await statuses("1,062", code, stdout)).toEqual([["1,062", "supported", ["a1:out2"]]]);
    expect(await statuses("45.12%", code, stdout)).toEqual([["45.12%", "supported", ["a1:out3"]]]);
  });

  it("traces a number to a source cell", async () => {
    const { attempt, evidence } = ranAttempt("a1", "print(x)", "something else\n");
    const checks = await verifyGrounding({
      answer: "39",
      evidence: [...evidence, cell("medals", 0, "gold", "39")],
      attempts: [attempt],
    });
    expect(checks.map((c) => [c.status, c.supports])).toEqual([["supported", ["medals:r0:gold"]]]);
  });

  it("marks an answer that differs from the code's final value as a conflict", async () => {
    const checks = await statuses("205", sumCode, "nations: 10\n203\n");
    expect(checks).toEqual([["205", "conflicted", ["a1:out2"]]]);
  });

  it("takes list items in any order unless the question asks for one", async () => {
    const code = "print(top)";
    const stdout = "['Japan', 'China', 'United States']\n";
    expect(await statuses("United States, Japan, China", code, stdout)).toEqual([
      ["United States", "supported", ["a1:out1"]],
      ["Japan", "supported", ["a1:out1"]],
      ["China", "supported", ["a1:out1"]],
    ]);
    const ordered = await statuses("United States, Japan, China", code, stdout, true);
    expect(ordered.map((c) => c[1])).toEqual(["conflicted", "conflicted", "conflicted"]);
    const same = await statuses("Japan, China, United States", code, stdout, true);
    expect(same.map((c) => c[1])).toEqual(["supported", "supported", "supported"]);
  });

  it("checks yes/no against the printed truth value", async () => {
    const code = 'print("more gold than silver:", result)';
    expect(await statuses("Yes", code, "more gold than silver: True\n")).toEqual([
      ["Yes", "supported", ["a1:out1"]],
    ]);
    expect(await statuses("No", code, "more gold than silver: True\n")).toEqual([
      ["No", "conflicted", ["a1:out1"]],
    ]);
    expect(await statuses("Yes", "print(a)\nprint(b)", "12\n15\n")).toEqual([
      ["Yes", "unsupported", []],
    ]);
  });

  it("finds nothing for an answer without evidence", async () => {
    const checks = await verifyGrounding({ answer: "42", evidence: [], attempts: [] });
    expect(checks).toEqual([{ item: "42", status: "unsupported", supports: [], conflicts: [] }]);
    expect(groundingScore(checks)).toBe(0);
  });

  it("matches entities by whole words, ignoring case and accents", async () => {
    const code = "print(best)";
    expect(await statuses("sao paulo", code, "São Paulo\n")).toEqual([
      ["sao paulo", "supported", ["a1:out1"]],
    ]);
    expect(await statuses("Paul", code, "São Paulo\n")).toEqual([
      ["Paul", "conflicted", ["a1:out1"]],
    ]);
  });
});

describe("claims, edges and the grounding score", () => {
  it("makes one claim per item with supports and conflicts edges", async () => {
    const { attempt, evidence } = ranAttempt("a1", "print(a)\nprint(b)", "203\nJapan\n");
    const checks = await verifyGrounding({ answer: "203, Chile", evidence, attempts: [attempt] });
    const { claims, edges } = claimsFrom("203, Chile", checks);
    expect(claims.map((c) => [c.text, c.status])).toEqual([
      ["203", "supported"],
      ["Chile", "unsupported"],
    ]);
    expect(edges).toEqual([{ from: "a1:out1", to: claims[0]?.id, kind: "supports" }]);
    expect(groundingScore(checks)).toBe(1);
    expect(claimsFrom("203, Chile", checks).claims[0]?.id).toBe(claims[0]?.id);
  });

  it("knows which questions ask for an order", () => {
    expect(asksForOrder("List the top 3 nations in descending order of gold")).toBe(true);
    expect(asksForOrder("Which nations won more than 10 gold medals?")).toBe(false);
  });
});
