import { describe, expect, it } from "vitest";
import {
  type CheckerCase,
  casesOf,
  formatDecimal,
  generateCases,
  type Instance,
  instanceOf,
  isWrongAnswer,
  METADATA_CODE,
  parseDecimal,
  profileTable,
  type RawTable,
  type Template,
  VARIANTS,
} from "../../bench/support/checker-cases.js";

/** Six cities; sums and means worked out by hand below. */
const CITIES: RawTable = {
  id: "cities",
  source: { name: "table", columns: [], data: [] },
  columns: ["city", "population", "area", "region"],
  rows: [
    ["Alpha", "120", "2.5", "north"],
    ["Beta", "340", "1.25", "south"],
    ["Gamma", "95", "4", "north"],
    ["Delta", "210", "0.75", "east"],
    ["Epsilon", "55", "3", "west"],
    ["Zeta", "181", "2", "south"],
  ],
};

const first = () => 0;
const last = () => 0.99;

function profile(table: RawTable = CITIES) {
  const p = profileTable(table);
  if (!p) throw new Error("the table should qualify");
  return p;
}

function instance(template: Template, random: () => number): Instance {
  const made = instanceOf(profile(), template, random);
  if (!made) throw new Error(`no ${template} instance`);
  return made;
}

describe("exact decimals", () => {
  it("parses plain numerals and writes them back in their shortest form", () => {
    expect(formatDecimal(parseDecimal("0.330") ?? { n: 0n, scale: 0 })).toBe("0.33");
    expect(formatDecimal(parseDecimal("007") ?? { n: 0n, scale: 0 })).toBe("7");
    expect(formatDecimal(parseDecimal("-0.0") ?? { n: 1n, scale: 0 })).toBe("0");
    expect(formatDecimal(parseDecimal("-12.50") ?? { n: 0n, scale: 0 })).toBe("-12.5");
    expect(parseDecimal("1,234")).toBeNull();
    expect(parseDecimal("1e5")).toBeNull();
    expect(parseDecimal("12 %")).toBeNull();
  });
});

describe("which tables qualify", () => {
  it("takes the first unique text column as labels and the clean numeric columns", () => {
    const p = profile();
    expect(p.label).toBe(0);
    expect([...p.numeric.keys()]).toEqual([1, 2]);
  });

  it("refuses repeated labels and leaves out columns with separators or gaps", () => {
    const repeated = structuredClone(CITIES);
    for (const row of repeated.rows) row[3] = "north";
    (repeated.rows[1] as string[])[0] = "Alpha";
    expect(profileTable(repeated)).toBeNull();
    const messy = structuredClone(CITIES);
    (messy.rows[0] as string[])[1] = "1,120";
    (messy.rows[2] as string[])[2] = "";
    expect(profileTable(messy)).toBeNull();
    (messy.rows[2] as string[])[2] = "4";
    expect([...(profileTable(messy)?.numeric.keys() ?? [])]).toEqual([2]);
  });

  it("refuses a table with a row that sums up the others", () => {
    const totals = structuredClone(CITIES);
    totals.rows.push(["Total", "1001", "13.5", "all"]);
    expect(profileTable(totals)).toBeNull();
  });
});

describe("right answers, by hand", () => {
  it("totals and averages", () => {
    // 120 + 340 + 95 + 210 + 55 + 181 = 1001; 1001 / 6 = 166.833...
    expect(instance("sum", first)).toMatchObject({
      question: "What is the total population?",
      lines: ['result = df["population"].sum()'],
      gold: "1001",
    });
    expect(instance("mean", first).gold).toBe("166.83");
    // 2.5 + 1.25 + 4 + 0.75 + 3 + 2 = 13.5; / 6 = 2.25
    expect(instance("sum", last).gold).toBe("13.5");
    expect(instance("mean", last)).toMatchObject({
      question: "What is the average area?",
      gold: "2.25",
    });
  });

  it("extremes and the rows that hold them", () => {
    expect(instance("max", first)).toMatchObject({ gold: "340", focusRow: 1 });
    expect(instance("min", last)).toMatchObject({
      question: "What is the minimum value of area?",
      gold: "0.75",
      focusRow: 3,
    });
    expect(instance("argmax", first)).toMatchObject({
      question: "Which city has the highest population?",
      lines: ['result = df.loc[df["population"].idxmax(), "city"]'],
      gold: "Beta",
      goldLiteral: '"Beta"',
      answerColumn: 0,
    });
    expect(instance("argmin", last).gold).toBe("Delta");
  });

  it("a lookup, a count, a comparison and a difference", () => {
    expect(instance("lookup", first)).toMatchObject({
      question: "What is the population of Alpha?",
      lines: ['result = df.loc[df["city"] == "Alpha", "population"].iloc[0]'],
      gold: "120",
      computed: false,
    });
    // Above 55: every city but Epsilon.
    expect(instance("count", first)).toMatchObject({
      question: "How many rows have population greater than 55?",
      gold: "5",
    });
    // Area above 3: only Gamma (4).
    expect(instance("count", last).gold).toBe("1");
    // Alpha 120 against Beta 340.
    const compare = instance("compare", first);
    expect(compare.question).toBe("Does Alpha have a higher population than Beta?");
    expect(compare.gold).toBe("No");
    expect(compare.lines.at(-1)).toBe('result = "Yes" if a > b else "No"');
    // The larger first: Beta 340 - Alpha 120.
    expect(instance("difference", first)).toMatchObject({
      question: "What is the difference in population between Beta and Alpha?",
      gold: "220",
      expr: "a - b",
    });
  });
});

describe("variants and labels", () => {
  const byVariant = (cases: CheckerCase[]) => new Map(cases.map((c) => [c.variant, c]));

  it("a lookup: wrong cells around the right one; the right cell without code is right by lookup", () => {
    const lookup = instance("lookup", first);
    const cases = byVariant(casesOf("cities", profile(), lookup, first));
    expect([...cases.keys()]).toEqual(VARIANTS);
    expect(cases.get("right-result")).toMatchObject({ answer: "120", right: true });
    expect(cases.get("right-print")).toMatchObject({
      code: 'print(df.loc[df["city"] == "Alpha", "population"].iloc[0])',
      answer: "120",
      right: true,
      support: "derived",
    });
    // Population of another city; the area of Alpha; the area of another city.
    expect(cases.get("cell-same-column")).toMatchObject({ answer: "340", right: false });
    expect(cases.get("cell-same-row")).toMatchObject({ answer: "2.5", right: false });
    expect(cases.get("cell-other-column")).toMatchObject({ answer: "1.25", right: false });
    // Not derived, but the cell the question identifies holds it: supported by lookup.
    expect(cases.get("metadata")).toMatchObject({
      code: METADATA_CODE,
      answer: "120",
      right: true,
      support: "looked-up",
    });
    expect(cases.get("literal-result")).toMatchObject({
      code: "result = 120",
      right: true,
      support: "looked-up",
    });
    expect(cases.get("cell-same-row")?.support).toBeNull();
    expect(cases.get("contradicts-result")).toMatchObject({
      code: 'result = df.loc[df["city"] == "Alpha", "population"].iloc[0]',
      answer: "2.5",
      right: false,
    });
  });

  it("a computed question: a right answer on metadata or a literal is not derived", () => {
    const sum = instance("sum", first);
    const cases = byVariant(casesOf("cities", profile(), sum, first));
    expect(cases.get("right-result")).toMatchObject({ answer: "1001", right: true });
    for (const variant of ["metadata", "literal-result", "literal-print"] as const) {
      expect(cases.get(variant)).toMatchObject({ answer: "1001", right: false, support: null });
    }
    expect(cases.get("literal-print")?.code).toBe("print(1001)");
  });

  it("a which question: the row's other names are not taken as wrong answers", () => {
    const argmax = instance("argmax", first);
    const cases = byVariant(casesOf("cities", profile(), argmax, first));
    expect(cases.get("cell-same-column")).toMatchObject({ answer: "Alpha", right: false });
    // Beta's own row: a number of it, never its region (which could name it too).
    expect(cases.get("cell-same-row")?.answer).toBe("340");
    expect(cases.get("literal-result")).toMatchObject({ code: 'result = "Beta"', right: false });
  });

  it("never answers a which question with another name of the right row", () => {
    // "ALP" is Alpha's code: another name of the row with the highest population, not a wrong
    // answer. Cells are taken in row order, so it would come first.
    const coded: RawTable = {
      ...CITIES,
      columns: ["city", "code", "population"],
      rows: CITIES.rows.map((r) => [
        r[0] ?? "",
        (r[0] ?? "").slice(0, 3).toUpperCase(),
        r[1] ?? "",
      ]),
    };
    (coded.rows[0] as string[])[2] = "500";
    const p = profileTable(coded);
    if (!p) throw new Error("the table should qualify");
    const argmax = instanceOf(p, "argmax", first);
    expect(argmax).toMatchObject({ gold: "Alpha", focusRow: 0 });
    const cases = byVariant(casesOf("coded", p, argmax as Instance, first));
    expect(cases.get("contradicts-result")?.answer).toBe("Beta");
    expect(cases.get("cell-same-row")?.answer).toBe("500");
  });

  it("a yes/no question is contradicted by the other truth value", () => {
    const compare = instance("compare", first);
    const cases = byVariant(casesOf("cities", profile(), compare, first));
    expect(cases.get("contradicts-result")).toMatchObject({ answer: "Yes", right: false });
    expect(cases.get("literal-print")).toMatchObject({ code: 'print("No")', right: false });
  });

  it("never calls a wrong answer what is the right one in other words", () => {
    expect(isWrongAnswer("1,001", "1001")).toBe(false);
    expect(isWrongAnswer("1001.0", "1001")).toBe(false);
    expect(isWrongAnswer("166.833", "166.83")).toBe(false);
    expect(isWrongAnswer(" beta ", "Beta")).toBe(false);
    expect(isWrongAnswer("yes", "No")).toBe(false);
    expect(isWrongAnswer("NaN", "3")).toBe(false);
    expect(isWrongAnswer("340", "1001")).toBe(true);
    expect(isWrongAnswer("Gamma", "Beta")).toBe(true);
  });
});

describe("the case file", () => {
  const generate = (seed: number) =>
    generateCases([CITIES], [], { seed, tableBench: 0, perTable: 10 });

  it("is the same for the same seed", () => {
    expect(generate(7)).toEqual(generate(7));
    expect(generate(7)).not.toEqual(generate(8));
  });

  it("labels right only the right answer on code that derives it, or a lookup's cell", () => {
    const { cases } = generate(7);
    expect(new Set(cases.map((c) => c.template)).size).toBe(10);
    for (const c of cases) {
      const derived = c.variant === "right-result" || c.variant === "right-print";
      const lookedUp = !derived && c.template === "lookup" && c.answer === c.gold;
      expect(c.right, c.id).toBe(derived || lookedUp);
      expect(c.support, c.id).toBe(derived ? "derived" : lookedUp ? "looked-up" : null);
      if (c.template === "compare" && c.variant === "contradicts-result") {
        expect(c.answer).toBe(c.gold === "Yes" ? "No" : "Yes");
      } else if (!c.right && c.answer !== c.gold) {
        expect(isWrongAnswer(c.answer, c.gold), c.id).toBe(true);
      }
      if (c.variant === "right-result") expect(c.code).toMatch(/(^|\n)result = /);
      if (c.variant === "right-print") expect(c.code).not.toMatch(/result =/);
    }
  });
});
