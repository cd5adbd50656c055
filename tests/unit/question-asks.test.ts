import { describe, expect, it } from "vitest";
import { bareCode, codeOperations } from "../../grounding/code-operations.js";
import { claimedDirection } from "../../grounding/direction.js";
import { normalizeText } from "../../grounding/matching.js";
import { numberCarried, parseNumber, scaleOfUnit } from "../../grounding/numbers.js";
import {
  askedColumns,
  askedCount,
  askedOperations,
  bestNamed,
  mentionedColumns,
  namedColumns,
  namedRowsBound,
  pickedRows,
  selectorsOf,
  touchesColumn,
} from "../../grounding/question-asks.js";
import type { PreparedTable } from "../../grounding/table-search.js";

/** A prepared table as table-search.ts makes one, from rows of text. */
function prepared(columns: string[], rows: (string | number)[][]): PreparedTable {
  const cells = rows.flatMap((row, r) =>
    row.map((value, c) => ({
      row: r,
      column: columns[c] ?? "",
      raw: String(value),
      norm: normalizeText(String(value)),
      number: parseNumber(String(value)),
    })),
  );
  return { columns: columns.map((name) => ({ name, norm: normalizeText(name) })), cells };
}

const MEDALS = prepared(
  ["nation", "gold", "silver", "year"],
  [
    ["Japan", 27, 14, 2020],
    ["Japan", 16, 12, 2016],
    ["France", 10, 12, 2020],
    ["Bulgaria", 5, 2, 2020],
    ["Kenya", 4, 4, 2016],
  ],
);

describe("what a question asks", () => {
  it("reads how many items it asks for, and not from an aggregate's scope", () => {
    expect(askedCount("Which two employees earn the most?")).toBe(2);
    expect(askedCount("List the top 3 cities by population")).toBe(3);
    expect(askedCount("What are the three largest lakes?")).toBe(3);
    expect(askedCount("Which employee earns the most?")).toBeNull();
  });

  it("reads the operation, with a column named 'average' left a column unless an operation precedes another column", () => {
    expect([...askedOperations("What is the median salary?", [])]).toEqual(["median"]);
    expect(askedOperations("What is the average of Team A?", ["average", "team"]).has("mean")).toBe(
      false,
    );
    expect(
      askedOperations("What is the average total points?", ["average", "total points"]).has("mean"),
    ).toBe(true);
    expect(askedOperations("Which city has at least 5 parks?", []).has("min")).toBe(false);
    expect(askedOperations("How many nations won gold?", []).has("count")).toBe(true);
  });

  it("picks rows by named cells, numbers of named columns, bounds and year ranges", () => {
    const rows = (question: string) => [...(pickedRows(selectorsOf(MEDALS, question)) ?? [])];
    expect(rows("How many gold medals did Japan win in 2020?")).toEqual([0]);
    expect(rows("Which nation won 5 gold medals and 2 silver medals?")).toEqual([3]);
    expect(rows("Which nations won more than 10 gold medals?")).toEqual([0, 1]);
    expect(rows("Which nations won 10 gold medals or more?")).toEqual([0, 1, 2]);
    expect(rows("What did Kenya win between 2015 and 2017?")).toEqual([4]);
    // A year next to range words bounds a range; it picks no rows alone.
    expect(selectorsOf(MEDALS, "How many golds were won after 2016?").map((s) => s.column)).toEqual(
      [],
    );
    expect(rows("How many medals were won in total?")).toEqual([]);
  });

  it("bounds the rows only when nothing reaches beyond the ones named", () => {
    const bound = (q: string) => namedRowsBound(q, selectorsOf(MEDALS, q));
    expect(bound("How many gold medals did Japan win in 2020?")).toBe(true);
    expect(bound("Which nations won more than 10 gold medals?")).toBe(true);
    expect(bound("Did Japan win more gold than France in 2020?")).toBe(false);
    expect(bound("What share of the gold medals did Japan win?")).toBe(false);
  });

  it("names columns by their name without units or counting words, the best covered first", () => {
    const columns = [
      { name: "population (2010 census)" },
      { name: "pop density (per km2)" },
      { name: "number of dances" },
      { name: "total" },
    ];
    expect(namedColumns("What is the total population of all districts?", columns)).toEqual([
      "population (2010 census)",
    ]);
    expect(mentionedColumns("Couples who performed more than 10 dances", columns)).toEqual([
      "number of dances",
    ]);
    const goals = [
      { name: "Total / Goals", path: ["Total", "Goals"] },
      { name: "League Cup / Goals", path: ["League Cup", "Goals"] },
    ];
    expect(
      bestNamed("the total number of goals", goals, ["Total / Goals", "League Cup / Goals"]),
    ).toEqual(["Total / Goals"]);
    expect(
      askedColumns("What is the average market value of banks?", [
        { name: "market value (billion)" },
        { name: "sales (billion)" },
      ]),
    ).toEqual([{ kind: "object", columns: ["market value (billion)"] }]);
    expect(
      askedColumns("In which season did the driver win 13 races?", [
        { name: "season" },
        { name: "wins" },
      ]),
    ).toEqual([{ kind: "target", columns: ["season"] }]);
  });
});

describe("columns a question speaks of", () => {
  it("touches a column by any word of its name or unit that is not a stop word", () => {
    const q = "How many tries did Llandeilo RFC score in the season?";
    expect(touchesColumn(q, { name: "tries for" })).toBe(true);
    expect(touchesColumn(q, { name: "points for" })).toBe(false);
    expect(touchesColumn("the maximum pressure (in bar)", { name: "p max ( bar )" })).toBe(true);
    expect(touchesColumn("the maximum pressure (in bar)", { name: "f bolt ( kgf )" })).toBe(false);
  });
});

describe("what code does, read from its text", () => {
  it("ignores words inside strings and comments", () => {
    expect(bareCode("x = df['mean'].sum()  # the mean")).toBe('x = df[""].sum()  ');
    const ops = codeOperations("result = df['median'].sum() / len(df)");
    expect([...ops.aggregates].sort()).toEqual(["count", "sum"]);
    expect(ops.divides).toBe(true);
    expect(ops.strings).toEqual(["median"]);
  });

  it("tells a share made a percentage from a percentage made a share", () => {
    expect(codeOperations("r = a / b * 100").hundred).toBe(true);
    expect(codeOperations("r = a / b").hundred).toBe(false);
    expect(codeOperations("r = p / 100").perHundred).toBe(true);
  });
});

describe("numbers after their scale", () => {
  const carried = (claim: string, found: number, more = {}) =>
    numberCarried(
      parseNumber(claim) as never,
      { value: found, places: 0, percent: false, scale: 1 },
      {
        rounding: true,
        ...more,
      },
    );

  it("reads k, M and B after a number as scales, and a lower-case m as metres", () => {
    expect(parseNumber("$74.9k")).toMatchObject({ value: 74.9, scale: 1e3 });
    expect(parseNumber("3.1M")).toMatchObject({ value: 3.1, scale: 1e6 });
    expect(parseNumber("2bn")).toMatchObject({ value: 2, scale: 1e9 });
    expect(parseNumber("5 m")).toMatchObject({ value: 5, scale: 1 });
  });

  it("compares a number after its scale", () => {
    expect(carried("$74.9k", 74886)).toBe(true);
    expect(carried("$74,886 thousand", 74886)).toBe(false);
    expect(carried("$74.9 million", 74886)).toBe(false);
    expect(carried("$74.9 million", 74886, { scales: [1e3] })).toBe(true);
  });

  it("never reads a fraction as its own percentage", () => {
    expect(carried("0.24%", 0.2368)).toBe(true);
    expect(carried("0.24%", 0.2368, { fraction: true })).toBe(false);
    expect(carried("23.68%", 0.2368, { fraction: true })).toBe(true);
  });

  it("reads the scale a unit states", () => {
    expect(scaleOfUnit("USD m")).toBe(1e6);
    expect(scaleOfUnit("in thousands")).toBe(1e3);
    expect(scaleOfUnit("'000")).toBe(1e3);
    expect(scaleOfUnit("km")).toBeNull();
  });
});

describe("directions claimed in words", () => {
  it("reads a trend's direction and a correlation's sign, and none where both or neither are said", () => {
    expect(claimedDirection("There is a strong positive correlation between the two")).toBe(1);
    expect(claimedDirection("The trend is decreasing over the years")).toBe(-1);
    expect(claimedDirection("There is no clear correlation")).toBe(0);
    expect(claimedDirection("Sales increased while costs decreased over the trend")).toBeNull();
    expect(claimedDirection("Japan is positive about it")).toBeNull();
  });
});
