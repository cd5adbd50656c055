import { describe, expect, it } from "vitest";
import {
  columnScore,
  matchCell,
  normalizeText,
  questionTerms,
  stem,
} from "../../tables/context-keywords.js";

const texts = (question: string) => questionTerms(question).cellKeywords.map((k) => k.text);

describe("question terms", () => {
  it("read quoted strings, n-grams between stop words, numbers and dates", () => {
    const terms = questionTerms(
      'How many gold medals did "Great Britain" win in New York City on 2020-01-05, out of 1,062?',
    );
    const keywords = terms.cellKeywords.map((k) => [k.text, k.kind]);
    expect(keywords[0]).toEqual(["great britain", "quoted"]);
    expect(keywords).toContainEqual(["new york city", "phrase"]);
    expect(keywords).toContainEqual(["new york", "phrase"]);
    expect(keywords).toContainEqual(["2020-01-05", "date"]);
    expect(keywords).toContainEqual(["1062", "number"]);
    expect(keywords).toContainEqual(["gold medals", "phrase"]);
    // Stop words are never keywords; quoted text is not split into words again.
    for (const word of ["how", "many", "did", "in", "out", "of", "great", "britain"]) {
      expect(texts('How many gold medals did "Great Britain" win?')).not.toContain(word);
    }
    expect(terms.columnQueries).toEqual(expect.arrayContaining(["gold", "medal", "york"]));
  });

  it("keep analysis words for columns but never as cell keywords alone", () => {
    const terms = questionTerms("What is the average total of tropical cyclones per season?");
    expect(terms.columnQueries).toEqual(
      expect.arrayContaining(["average", "total", "tropical", "cyclone", "season"]),
    );
    expect(texts("What is the average total of tropical cyclones per season?")).not.toContain(
      "average",
    );
    expect(texts("What is the average total?")).toEqual([]);
  });

  it("are deterministic, ordered by kind, and capped", () => {
    const question = "Which players from Spain scored 12 goals for Real Madrid in 2011?";
    expect(questionTerms(question)).toEqual(questionTerms(question));
    const kinds = questionTerms(question).cellKeywords.map((k) => `${k.kind}:${k.words}`);
    expect(kinds.indexOf("phrase:2")).toBeLessThan(kinds.indexOf("number:1"));
    expect(kinds.indexOf("number:1")).toBeLessThan(kinds.indexOf("phrase:1"));
    expect(questionTerms(question, 3).cellKeywords).toHaveLength(3);
  });

  it("read numbers as values: separators, percents, signs", () => {
    const numbers = questionTerms("Rows where x is 1,234.5 or -7 or 12%").cellKeywords.filter(
      (k) => k.kind === "number",
    );
    expect(numbers.map((k) => k.number)).toEqual([1234.5, -7, 12]);
  });
});

describe("cell matching", () => {
  const [japan] = questionTerms("Japan").cellKeywords;
  const [year] = questionTerms("in 2010").cellKeywords;
  const [newYork] = questionTerms("New York").cellKeywords;

  it("tells exact from whole-word matches and ignores parts of words", () => {
    if (!japan || !year || !newYork) throw new Error("no keywords");
    expect(matchCell(japan, normalizeText("  JAPAN "))).toBe("exact");
    expect(matchCell(japan, normalizeText("Japan (JPN)"))).toBe("partial");
    expect(matchCell(japan, normalizeText("Japanese"))).toBeNull();
    expect(matchCell(newYork, normalizeText("New  York Knicks"))).toBe("partial");
    expect(matchCell(year, "2010")).toBe("exact");
    expect(matchCell(year, "2010.0")).toBe("exact");
    expect(matchCell(year, "2,010")).toBe("exact");
    expect(matchCell(year, "20100")).toBeNull();
    expect(matchCell(year, "2010 - 11")).toBe("partial");
    expect(matchCell(year, "")).toBeNull();
  });

  it("scores column names by the share of their words the question asks for", () => {
    const { columnQueries } = questionTerms("How many gold medals did Japan win?");
    expect(columnScore("gold", columnQueries)).toBe(1);
    expect(columnScore("Gold_Medals", columnQueries)).toBe(1);
    expect(columnScore("gold total", columnQueries)).toBe(0.5);
    expect(columnScore("silver", columnQueries)).toBe(0);
    expect(stem("countries")).toBe("country");
    expect(stem("class")).toBe("class");
  });
});
