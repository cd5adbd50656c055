import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ObviousFileSchema,
  obviousCode,
  parseEntry,
  resolveColumn,
  sameAnswer,
} from "../../bench/support/obvious-coder.js";
import {
  dataTables,
  pathsFound,
  rowsScore,
  titleFound,
} from "../../bench/support/reading-score.js";
import type { TableRef } from "../../blackboard/schemas.js";

const MESSY = path.join(import.meta.dirname, "../fixtures/messy");
const json = (file: string): unknown => JSON.parse(readFileSync(path.join(MESSY, file), "utf8"));

function table(
  name: string,
  columns: { name: string; path?: string[] }[],
  reading?: TableRef["reading"],
): TableRef {
  const ref: TableRef = {
    id: `table:${name}`,
    name,
    uri: `/nowhere/${name}.csv`,
    sha256: "0".repeat(64),
    rows: 0,
    columns: columns.map((c) => ({ ...c, dtype: "object" })),
  };
  if (reading) ref.reading = reading;
  return ref;
}

describe("the scripted coder of the messy-table bench", () => {
  it("resolves a header path to the shown name with the most words in common", () => {
    const flattened = ["Field of study", "2017 / Number", "2017 / Percent"];
    expect(resolveColumn(["2017", "Number"], flattened)).toBe("2017 / Number");
    // A literal reading of the same sheet shows no such name: the coder falls back to the first.
    expect(resolveColumn(["2017", "Number"], ["Table 12", "column_2", "column_3"])).toBe(
      "Table 12",
    );
    // Among names with as many words in common, the one with fewest other words.
    expect(resolveColumn(["points"], ["points for", "points against", "points"])).toBe("points");
    expect(
      resolveColumn(["Party list votes", "%"], ["Party list votes / #", "Party list votes / %"]),
    ).toBe("Party list votes / %");
  });

  it("writes the obvious pandas: filters, then the operation over the resolved column", () => {
    const names = ["Club", "League / Division", "Total / Apps", "Total / Goals"];
    const code = obviousCode(
      {
        op: "max",
        column: ["Total", "Goals"],
        label: ["Club"],
        filter: [
          { column: ["League", "Division"], equals: "Premier League" },
          { column: ["Total", "Apps"], equals: 40 },
        ],
      },
      names,
    );
    expect(code.split("\n")).toEqual([
      "import pandas as pd",
      "d = df",
      'd = d[d["League / Division"].astype(str).str.strip().str.lower() == "premier league"]',
      'd = d[pd.to_numeric(d["Total / Apps"], errors="coerce") == 40]',
      'v = pd.to_numeric(d["Total / Goals"], errors="coerce")',
      'print(d["Club"].loc[v.idxmax()])',
    ]);
    expect(obviousCode({ op: "count" }, names)).toMatch(/print\(len\(d\)\)$/);
    expect(obviousCode({ op: "lookup", column: ["Club"] }, names)).toMatch(
      /print\(d\["Club"\]\.iloc\[0\]\)$/,
    );
  });

  it("takes a printed answer within 1e-6, a stated tolerance, or the places the answer is written to", () => {
    expect(sameAnswer("54664.0", 54664)).toBe(true);
    expect(sameAnswer("109328.0", 54664)).toBe(false);
    expect(sameAnswer("444.38261075049843", 444, 0.5)).toBe(true);
    expect(sameAnswer("444.38261075049843", 444)).toBe(false);
    expect(sameAnswer("10.6432", "10.6")).toBe(true);
    expect(sameAnswer("10.66", "10.6")).toBe(false);
    expect(sameAnswer(" Other Motor Vehicle Taxes ", "Other motor vehicle taxes")).toBe(true);
    expect(sameAnswer("", 0)).toBe(false);
  });

  it("has one entry, a spec or a reason, for every question of both corpora", () => {
    const obvious = ObviousFileSchema.parse(json("obvious.json"));
    const questions = (json("questions.json") as { questions: { question: string }[] }).questions;
    const annotated = json("tablebench-multirow.json") as {
      tables: { questions: { id: string }[] }[];
    };
    const ids = annotated.tables.flatMap((t) => t.questions.map((q) => q.id));
    expect(obvious.spreadsheets.map((e) => e.question)).toEqual(questions.map((q) => q.question));
    expect(obvious.tablebench.map((e) => e.id)).toEqual(ids);
    const entries = [...obvious.spreadsheets, ...obvious.tablebench].map(parseEntry);
    expect(entries.filter((e) => !("skip" in e)).length).toBeGreaterThanOrEqual(40);
    expect(() => parseEntry({ id: "x", op: "sum" })).toThrow(/needs a column/);
  });
});

describe("scoring a reading of a messy table", () => {
  it("finds header paths as joined names, column paths, renamed repeats and titled tables", () => {
    const literal = table("t", [{ name: "Club" }, { name: "League" }, { name: "League_2" }]);
    const read = table("t", [
      { name: "Club" },
      { name: "League / Apps", path: ["League", "Apps"] },
      { name: "League / Goals", path: ["League", "Goals"] },
    ]);
    const paths = [["Club"], ["League", "Apps"], ["League", "Goals"]];
    expect(pathsFound(paths, [literal])).toBe(1);
    expect(pathsFound(paths, [read])).toBe(3);
    // Judged on the upper level only, each of the two League columns counts once.
    expect(pathsFound(paths, [literal], true)).toBe(3);
    expect(
      pathsFound([["Year"], ["Year"]], [table("s", [{ name: "Year" }, { name: "Year_2" }])]),
    ).toBe(2);
    const music = table("m", [{ name: "Term 2" }], { title: ["Music"] });
    expect(pathsFound([["Music", "Term 2"]], [music])).toBe(1);
    expect(titleFound("Music", [music])).toBe(true);
    expect(titleFound("Drama", [music])).toBe(false);
  });

  it("counts total rows found and taken wrongly, and leaves the totals tables out of the data", () => {
    expect(rowsScore([6, 7, 11], [6, 50])).toEqual({ expected: 3, found: 1, wrong: 1 });
    const sales = table("sales", [{ name: "x" }], {
      totals: { rows: [6], labels: ["Total"], table: "sales_totals" },
    });
    const totals = table("sales_totals", [{ name: "x" }]);
    expect(dataTables([sales, totals]).map((t) => t.name)).toEqual(["sales"]);
  });
});
