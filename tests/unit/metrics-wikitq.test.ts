import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import { parseWikiTQCsv } from "../../evals/datasets/wikitq.js";
import { pythonFloat, pythonInt } from "../../evals/metrics/python-numbers.js";
import { parseVerdict, tabfactScorer } from "../../evals/metrics/tabfact.js";
import {
  checkDenotation,
  normalizeWikiTQ,
  predictionItems,
  toValue,
  toValueList,
  tsvUnescapeList,
  wikitqScorer,
} from "../../evals/metrics/wikitq.js";
import { loadTable } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";

const ROOT = path.resolve(import.meta.dirname, "../fixtures/datasets/wikitq");

describe("Python's int() and float(), as the evaluator parses numbers", () => {
  it("accepts what Python accepts and JavaScript's Number() does not", () => {
    expect(pythonInt(" 12 ")).toBe(12n);
    expect(pythonInt("+5")).toBe(5n);
    expect(pythonInt("007")).toBe(7n);
    expect(pythonInt("1_000")).toBe(1000n);
    expect(pythonFloat("5.")).toBe(5);
    expect(pythonFloat(".5")).toBe(0.5);
    expect(pythonFloat("1e3")).toBe(1000);
    expect(pythonFloat("Infinity")).toBe(Number.POSITIVE_INFINITY);
    expect(Number.isNaN(pythonFloat("nan"))).toBe(true);
  });

  it("refuses what Python refuses and Number() accepts", () => {
    expect(pythonInt("")).toBeNull();
    expect(pythonFloat("")).toBeNull();
    expect(pythonFloat("0x10")).toBeNull();
    expect(pythonInt("1.0")).toBeNull();
    expect(pythonFloat("1,000")).toBeNull();
    expect(pythonFloat("1__0")).toBeNull();
    expect(pythonFloat("_1")).toBeNull();
    expect(pythonFloat("1e")).toBeNull();
  });

  // Each value below is what CPython 3.11 returns (or raises on: null).
  it("reads decimal digits of any script, as int() and float() do", () => {
    expect(pythonInt("١٢٣")).toBe(123n); // Arabic-Indic
    expect(pythonInt("５")).toBe(5n); // full-width
    expect(pythonInt("০১")).toBe(1n); // Bengali
    expect(pythonInt("𝟓")).toBe(5n); // mathematical bold, beyond the BMP
    expect(pythonInt("١_٢")).toBe(12n);
    expect(pythonFloat("٥.٥")).toBe(5.5);
    expect(pythonFloat("１e３")).toBe(1000);
    // Only digits and whitespace are read outside ASCII: not a full-width "e", nor ⑤ or ².
    expect(pythonFloat("1ｅ3")).toBeNull();
    expect(pythonInt("⑤")).toBeNull();
    expect(pythonInt("²")).toBeNull();
  });

  it("strips what int() and float() strip: Unicode spaces, but not U+001C-U+001F or U+FEFF", () => {
    expect(pythonInt("\u2028 7 \u2029")).toBe(7n);
    expect(pythonInt("\x855\xa0")).toBe(5n);
    expect(pythonInt("\x1c5\x1c")).toBeNull();
    expect(pythonFloat("5\x1f")).toBeNull();
    expect(pythonInt("\ufeff5")).toBeNull();
    expect(pythonInt("1\xa02")).toBeNull();
  });

  it("keeps integers exact at any size, up to CPython's 4300 digits", () => {
    expect(pythonInt("9007199254740993")).toBe(9007199254740993n);
    expect(pythonInt("1".repeat(4300))).toBe(BigInt("1".repeat(4300)));
    expect(pythonInt("1".repeat(4301))).toBeNull();
    expect(pythonInt(`${"1_".repeat(4299)}1`)).not.toBeNull(); // underscores do not count
  });
});

describe("the WikiTQ evaluator", () => {
  it("normalizes strings as the evaluator does", () => {
    expect(normalizeWikiTQ("Café")).toBe("cafe");
    expect(normalizeWikiTQ("“Quoted”")).toBe("quoted");
    expect(normalizeWikiTQ("1982–1985")).toBe("1982-1985");
    expect(normalizeWikiTQ("Italy[3]")).toBe("italy");
    expect(normalizeWikiTQ("Smith (politician)")).toBe("smith");
    expect(normalizeWikiTQ("(only parentheses)")).toBe("(only parentheses)");
    expect(normalizeWikiTQ("Done.")).toBe("done");
    expect(normalizeWikiTQ("  New   York ")).toBe("new york");
    expect(normalizeWikiTQ("Ace†")).toBe("ace");
  });

  it("reads numbers first, then dates (a bare year is a number), else strings", () => {
    expect(toValue("17")).toMatchObject({ kind: "number", amount: 17n });
    expect(toValue("100,000", "100000.0")).toMatchObject({ kind: "number", amount: 100000n });
    expect(toValue("2.5")).toMatchObject({ kind: "number", amount: 2.5 });
    expect(toValue("January 26, 1995", "1995-01-26")).toMatchObject({
      kind: "date",
      ymd: [1995n, 1, 26],
    });
    expect(toValue("2000", "2000-xx-xx")).toMatchObject({ kind: "number", amount: 2000n });
    expect(toValue("March", "xx-03-xx")).toMatchObject({ kind: "date", ymd: [-1n, 3, -1] });
    expect(toValue("xx-13-xx")).toMatchObject({ kind: "string" });
    expect(toValue("Italy")).toMatchObject({ kind: "string", normalized: "italy" });
  });

  it("checks a denotation: same number of values, each target matched", () => {
    const targets = toValueList(["2004", "2005", "2006"]);
    expect(checkDenotation(targets, toValueList(["2006", "2004", "2005"]))).toBe(true);
    expect(checkDenotation(targets, toValueList(["2004", "2005"]))).toBe(false);
    expect(checkDenotation(toValueList(["17"]), toValueList(["17.0000001"]))).toBe(true);
    expect(checkDenotation(toValueList(["17"]), toValueList(["17.01"]))).toBe(false);
    expect(checkDenotation(toValueList(["100,000"], ["100000.0"]), toValueList(["100000"]))).toBe(
      true,
    );
    // Without its canonical form "100,000" is a string, and "100000" does not match it.
    expect(checkDenotation(toValueList(["100,000"]), toValueList(["100000"]))).toBe(false);
    expect(checkDenotation(toValueList(["Italy"]), toValueList(["italy."]))).toBe(true);
  });

  it("deduplicates values as Python's set() does: numbers by amount, dates by day, strings by text", () => {
    expect(toValueList(["2", "2.0"])).toHaveLength(1);
    expect(toValueList(["2001-05-03", "2001-5-3"])).toHaveLength(1);
    expect(toValueList(["Italy", "italy."])).toHaveLength(1);
    expect(toValueList(["2", "two"])).toHaveLength(2);
    // So a repeated answer still matches a single target.
    expect(checkDenotation(toValueList(["2"]), toValueList(["2", "2.0"]))).toBe(true);
  });

  // Each verdict below is what the official evaluator gives under CPython 3.
  it("compares integers exactly, as Python's ints are, beyond 2^53", () => {
    const check = (target: string, predicted: string) =>
      checkDenotation(toValueList([target]), toValueList([predicted]));
    expect(check("9007199254740993", "9007199254740992")).toBe(false);
    expect(check("100000000000000000000000000001", "100000000000000000000000000000")).toBe(false);
    expect(toValueList(["9007199254740993", "9007199254740992"])).toHaveLength(2);
    // A float within 1e-6 of an integer becomes int(amount): exact, and truncated.
    expect(check("9007199254740993", "9007199254740993.0")).toBe(false);
    expect(check("1e20", "100000000000000000000")).toBe(true);
    expect(check("3", "3.0000001")).toBe(true);
    expect(check("3", "2.9999999")).toBe(false); // int(2.9999999) is 2
    expect(check("١٢٣", "123")).toBe(true);
    expect(check("１２", "12.0")).toBe(true);
  });

  it("keeps the first of equal values, as Python's set() does", () => {
    const first = toValueList(["2 (two)", "2nd"], ["2", "2.0"]);
    expect(checkDenotation(first, toValueList(["2nd"]))).toBe(false);
    const reversed = toValueList(["2nd", "2 (two)"], ["2.0", "2"]);
    expect(checkDenotation(reversed, toValueList(["2nd"]))).toBe(true);
  });

  it("strips and collapses whitespace as Python's strip() and \\s do", () => {
    expect(normalizeWikiTQ("\x1cItaly\x1f")).toBe("italy");
    expect(normalizeWikiTQ("a\x1c\x1db")).toBe("a b");
    expect(normalizeWikiTQ("\ufeffx")).toBe("\ufeffx");
    expect(normalizeWikiTQ("Italy[١]")).toBe("italy"); // \d is any decimal digit
  });

  it("matches on the normalized text first, as Value.match does, then on the number", () => {
    // A target whose canonical form reads as another number still matches its own text.
    expect(checkDenotation(toValueList(["3"], ["4.0"]), toValueList(["3"]))).toBe(true);
    expect(checkDenotation(toValueList(["3"], ["4.0"]), toValueList(["4"]))).toBe(true);
    expect(checkDenotation(toValueList(["3"], ["4.0"]), toValueList(["5"]))).toBe(false);
  });

  it("unescapes TSV fields and splits a prediction into values", () => {
    expect(tsvUnescapeList("a\\pb|c\\nd|e\\\\f")).toEqual(["a|b", "c\nd", "e\\f"]);
    expect(predictionItems("2004, 2005, 2006")).toEqual(["2004", "2005", "2006"]);
    expect(predictionItems("100,000")).toEqual(["100,000"]);
    expect(predictionItems("a|b")).toEqual(["a", "b"]);
    expect(parseWikiTQCsv('"A","B\nC"\n"5h 29\' 10\\"","x\\\\y"\n')).toEqual({
      columns: ["A", "B\nC"],
      data: [["5h 29' 10\"", "x\\y"]],
    });
  });

  it("scores the gold answers of the real 15-question fixture at 100%", async () => {
    const examples = await loadDataset("wikitq", { path: ROOT });
    expect(examples).toHaveLength(15);
    expect(examples[1]?.goldCanonical).toEqual(["100000.0"]);
    const scores = await Promise.all(
      examples.map((e) =>
        wikitqScorer.score(e, `Final Answer: ${tsvUnescapeList(e.gold).join(", ")}`),
      ),
    );
    expect(wikitqScorer.summarize(examples, scores).overall).toBe(100);
    const [first] = examples;
    if (!first) throw new Error("empty fixture");
    const wrong = await wikitqScorer.score(first, "Final Answer: France");
    expect(wrong.score).toBe(0);
  });

  it("loads the fixture's tables through the table loader", async () => {
    useTempHome();
    const examples = await loadDataset("wikitq", { path: ROOT });
    for (const e of examples) {
      const source = e.tables[0];
      if (!source || "path" in source) throw new Error("expected an inline table");
      const { table } = await loadTable(source);
      expect(table.rows).toBeGreaterThan(0);
    }
  });
});

describe("TabFact", () => {
  it("reads verdicts and scores accuracy against labels 1 and 0", async () => {
    expect(parseVerdict("Yes")).toBe(1);
    expect(parseVerdict("**entailed**")).toBe(1);
    expect(parseVerdict("refuted.")).toBe(0);
    expect(parseVerdict("False")).toBe(0);
    expect(parseVerdict("maybe")).toBeNull();
    const example = {
      id: "t1",
      dataset: "tabfact",
      question: "s",
      tables: [{ columns: ["a"], data: [[1]] }],
      gold: "0",
    };
    expect((await tabfactScorer.score(example, "Final Answer: refuted")).score).toBe(1);
    expect((await tabfactScorer.score(example, "Final Answer: yes")).score).toBe(0);
    const unparsed = await tabfactScorer.score(example, "Final Answer: unclear");
    expect(unparsed).toMatchObject({ score: 0, parsed: false });
    expect(tabfactScorer.summarize([example], [unparsed])).toMatchObject({
      overall: 0,
      parseRate: 0,
      n: 1,
    });
  });
});

describe("the TabFact loader", () => {
  const TABFACT = path.resolve(import.meta.dirname, "../fixtures/datasets/tabfact");

  it("reads upstream's test statements and '#'-separated tables", async () => {
    const examples = await loadDataset("tabfact", { path: TABFACT });
    expect(examples).toHaveLength(30);
    expect(examples[0]).toMatchObject({
      id: "2-1570274-4.html.csv#0",
      gold: "1",
      dataset: "tabfact",
    });
    expect(examples[5]?.gold).toBe("0");
    expect(examples[0]?.question).toContain('the table "tony lema"');
    const table = examples[0]?.tables[0];
    expect(table && "columns" in table ? table.columns : []).toEqual([
      "tournament",
      "wins",
      "top - 5",
      "top - 10",
      "top - 25",
      "events",
      "cuts made",
    ]);
  });

  it("scores gold verdicts at 100% and flipped ones at 0%", async () => {
    const examples = await loadDataset("tabfact", { path: TABFACT });
    const say = (yes: boolean) => `Final Answer: ${yes ? "yes" : "no"}`;
    const right = await Promise.all(
      examples.map((e) => tabfactScorer.score(e, say(e.gold === "1"))),
    );
    const wrong = await Promise.all(
      examples.map((e) => tabfactScorer.score(e, say(e.gold !== "1"))),
    );
    expect(tabfactScorer.summarize(examples, right).overall).toBe(100);
    expect(tabfactScorer.summarize(examples, wrong).overall).toBe(0);
  });
});

describe("the FinQA loader", () => {
  it("reads records in upstream's format: text as context, the first row as header, exe_ans as gold", async () => {
    const file = path.resolve(import.meta.dirname, "../fixtures/datasets/finqa/dataset/test.json");
    const examples = await loadDataset("finqa", { path: file });
    expect(examples.slice(0, 3).map((e) => e.gold)).toEqual(["0.06757", "0.01714", "65"]);
    expect(examples[0]?.question).toMatch(
      /^what was the percentage change in total rental expense .*\?\n\nThe table comes from/,
    );
    const table = examples[0]?.tables[0];
    expect(table && "columns" in table ? table.columns : []).toEqual(["column 1", "amount"]);
  });
});
