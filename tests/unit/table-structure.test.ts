import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  cellKindOfText,
  plainNumber,
  type RawSheet,
  rawSheetFromRows,
  readStructure,
  type Span,
  type StructureOptions,
  type TableBlock,
} from "../../tables/structure.js";

/** A sheet from rows of text (the first row at index 0), with merges and hidden parts. */
function sheetOf(rows: string[][], extra: Partial<RawSheet> = {}): RawSheet {
  const [header = [], ...data] = rows;
  return { ...rawSheetFromRows(header, data), ...extra };
}

function only(rows: string[][], options?: StructureOptions, extra?: Partial<RawSheet>): TableBlock {
  const blocks = readStructure(sheetOf(rows, extra), options);
  expect(blocks).toHaveLength(1);
  return blocks[0] as TableBlock;
}

/** The first text of each data row: which rows were kept. */
function labels(rows: string[][], block: TableBlock): string[] {
  return block.rows.map((r) => rows[r]?.[0] ?? "");
}

function span(row0: number, col0: number, row1: number, col1: number): Span {
  return { row0, col0, row1, col1 };
}

describe("cellKindOfText", () => {
  it.each([
    "1,250",
    "$3.5",
    "12%",
    "(40)",
    "-7",
    "$1,250,400",
    "1.250,40",
    "500,00",
    "1 250 400",
    "€ 12",
    "-$3.5",
    "3e5",
    "0.5",
  ])("%s is number-like", (text) => {
    expect(cellKindOfText(text)).toBe("number");
  });

  it.each([
    "2024-03-01",
    "2024-03-01 12:30:00",
    "01.03.2024",
    "3/1/2024",
    "2024/03/01",
    "Mar 1, 2024",
    "1 March 2024",
    "March 2024",
  ])("%s is date-like", (text) => {
    expect(cellKindOfText(text)).toBe("date");
  });

  it.each([
    "1990–91",
    "Q1",
    "-",
    "Total",
    "12 apples",
    "1.2.3.4",
    "$",
    "1,25,0",
    "Marble 2024",
    "2004-05 season",
  ])("%s is text", (text) => {
    expect(cellKindOfText(text)).toBe("text");
  });

  it("reads booleans and blanks", () => {
    expect(cellKindOfText("TRUE")).toBe("bool");
    expect(cellKindOfText("false")).toBe("bool");
    expect(cellKindOfText("")).toBe("empty");
    expect(cellKindOfText("   ")).toBe("empty");
  });
});

describe("plainNumber", () => {
  it("reads plain amounts with currency, thousands commas, signs and parentheses", () => {
    expect(plainNumber("$1,250,400")).toBe(1250400);
    expect(plainNumber("(40)")).toBe(-40);
    expect(plainNumber("-$3.5")).toBe(-3.5);
    expect(plainNumber(" 12 ")).toBe(12);
  });

  it("leaves locales, percents and words to values.ts", () => {
    for (const text of ["12%", "1.250,40", "1,25", "abc", "", "$"]) {
      expect(plainNumber(text)).toBeNull();
    }
  });
});

describe("rawSheetFromRows", () => {
  it("pads rows to one width, classifies cells and keeps the file's lines", () => {
    const sheet = rawSheetFromRows(["a", "b"], [["1", "x", "extra"], ["2"]], {
      header: 3,
      rows: [4, 7],
    });
    expect(sheet.cells.map((row) => row.length)).toEqual([3, 3, 3]);
    expect(sheet.cells[1]?.map((cell) => cell.kind)).toEqual(["number", "text", "text"]);
    expect(sheet.cells[2]?.[1]).toEqual({ text: "", kind: "empty" });
    expect(sheet.rowNumbers).toEqual([3, 4, 7]);
    expect(sheet.merges).toEqual([]);
  });

  it("numbers rows from 1 without lines", () => {
    expect(rawSheetFromRows(["a"], [["1"], ["2"]]).rowNumbers).toEqual([1, 2, 3]);
  });
});

describe("readStructure: plain tables stay plain", () => {
  it("keeps the header of a table whose first data row is numeric", () => {
    const rows = [
      ["year", "sales"],
      ["2019", "100"],
      ["2020", "120"],
      ["2021", "130"],
    ];
    const block = only(rows);
    expect(block.title).toEqual([]);
    expect(block.headerRows).toEqual([0]);
    expect(block.headerPaths).toEqual([["year"], ["sales"]]);
    expect(block.rows).toEqual([1, 2, 3]);
    expect(block.totals).toEqual([]);
    expect(block.notes).toEqual([]);
    expect(block.rowGroups).toBeUndefined();
  });

  it("keeps a header of year numbers as the header", () => {
    const block = only([
      ["country", "2019", "2020"],
      ["France", "1", "2"],
      ["Spain", "3", "4"],
    ]);
    expect(block.headerPaths).toEqual([["country"], ["2019"], ["2020"]]);
    expect(block.rows).toEqual([1, 2]);
  });

  it("does not take a big last row for a total", () => {
    const block = only([
      ["name", "score", "bonus"],
      ["a", "10", "1"],
      ["b", "20", "2"],
      ["c", "95", "9"],
    ]);
    expect(block.totals).toEqual([]);
    expect(block.rows).toEqual([1, 2, 3]);
  });

  it("does not take a row one off the sum of whole numbers for a total", () => {
    const block = only([
      ["name", "score", "bonus"],
      ["a", "10", "1"],
      ["b", "20", "2"],
      ["c", "31", "3"],
    ]);
    expect(block.totals).toEqual([]);
  });

  it("does not take a one-column coincidence (1, 2, 3) for a total", () => {
    const block = only([
      ["name", "n"],
      ["a", "1"],
      ["b", "2"],
      ["c", "3"],
    ]);
    expect(block.totals).toEqual([]);
  });

  it("keeps a row with missing values as data, not as a section or a note", () => {
    const rows = [
      ["name", "age", "city"],
      ["Bob", "31", "Paris"],
      ["Ann", "", ""],
      ["Eve", "22", "Rome"],
      ["Zoe", "", ""],
    ];
    const block = only(rows);
    expect(labels(rows, block)).toEqual(["Bob", "Ann", "Eve", "Zoe"]);
    expect(block.notes).toEqual([]);
    expect(block.rowGroups).toBeUndefined();
  });

  it("does not take a row named like a film ('Total Recall') for a total", () => {
    const block = only([
      ["title", "year", "gross"],
      ["Heat", "1995", "187"],
      ["Total Recall", "1990", "261"],
    ]);
    expect(block.totals).toEqual([]);
  });

  it("keeps a lone header name over an unnamed index column (',value')", () => {
    const rows = [
      ["", "value"],
      ["a", "1"],
      ["b", "2"],
    ];
    const block = only(rows);
    expect(block.title).toEqual([]);
    expect(block.headerRows).toEqual([0]);
    expect(block.headerPaths).toEqual([[], ["value"]]);
    expect(block.rows).toEqual([1, 2]);
  });

  it("reads a one-column list as it is", () => {
    const rows = [
      ["name"],
      ["Ann"],
      ["Bob, who came late and left early, was there too"],
      ["Note"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0]);
    expect(block.rows).toEqual([1, 2, 3]);
    expect(block.notes).toEqual([]);
  });

  it("does not stack an all-text table's first row onto its header", () => {
    const block = only([
      ["name", "tag", "tag"],
      ["a", "x", "y"],
      ["b", "z", "w"],
    ]);
    expect(block.headerRows).toEqual([0]);
    expect(block.headerPaths).toEqual([["name"], ["tag"], ["tag"]]);
  });

  it("does not stack a data row with numbers under repeated names", () => {
    const block = only([
      ["Line", "Terminals", "Terminals", "Length km"],
      ["1", "Weijianian", "Science City", "40.99"],
      ["2", "Xipu", "Longquanyi", "42.32"],
    ]);
    expect(block.headerRows).toEqual([0]);
    expect(block.rows).toEqual([1, 2]);
  });
});

describe("readStructure: titles and notes", () => {
  it("takes lines above the header for the title, a blank row apart or not", () => {
    const rows = [
      ["Sales report 2024", "", ""],
      ["", "", ""],
      ["by region", "", ""],
      ["Region", "Q1", "Q2"],
      ["North", "1", "2"],
      ["South", "3", "4"],
    ];
    const block = only(rows);
    expect(block.title).toEqual(["Sales report 2024", "by region"]);
    expect(block.headerRows).toEqual([3]);
    expect(block.headerPaths).toEqual([["Region"], ["Q1"], ["Q2"]]);
    expect(labels(rows, block)).toEqual(["North", "South"]);
  });

  it("takes a title merged across the width, whatever its length", () => {
    const block = only(
      [
        ["Results", "", ""],
        ["Region", "Q1", "Q2"],
        ["North", "1", "2"],
      ],
      {},
      { merges: [span(0, 0, 0, 2)] },
    );
    expect(block.title).toEqual(["Results"]);
    expect(block.headerRows).toEqual([1]);
  });

  it("takes marked lines and lines set apart below the data for notes", () => {
    const rows = [
      ["Region", "Q1", "Q2"],
      ["North", "1", "2"],
      ["South", "3", "4"],
      ["* provisional figures", "", ""],
      ["", "", ""],
      ["Compiled by the finance team", "", ""],
    ];
    const block = only(rows);
    expect(block.notes).toEqual([
      { row: 3, text: "* provisional figures" },
      { row: 5, text: "Compiled by the finance team" },
    ]);
    expect(labels(rows, block)).toEqual(["North", "South"]);
  });

  it("takes a line right under the Total row for a note", () => {
    const block = only([
      ["Region", "Q1"],
      ["North", "1"],
      ["South", "3"],
      ["Total", "4"],
      ["Amounts in dollars", ""],
    ]);
    expect(block.totals.map((t) => t.row)).toEqual([3]);
    expect(block.notes).toEqual([{ row: 4, text: "Amounts in dollars" }]);
    expect(block.rows).toEqual([1, 2]);
  });

  it.each([
    "Note: amounts in thousands",
    "Source: national statistics office",
    "1) restated",
    "a/ estimate",
    "(2) excluding overseas",
  ])("takes %j under the data for a note", (text) => {
    const block = only([
      ["Region", "Q1"],
      ["North", "1"],
      ["South", "3"],
      [text, ""],
    ]);
    expect(block.notes).toEqual([{ row: 3, text }]);
    expect(block.rows).toEqual([1, 2]);
  });

  it("takes a source repeated across every cell (a merge spread out) for a note", () => {
    const source = "Sources: Atlantic Hurricane Best Track File";
    const block = only([
      ["Name", "Season", "Winds"],
      ["Ella", "1978", "120"],
      ["Greta", "1978", "115"],
      [source, source, source],
    ]);
    expect(block.notes).toEqual([{ row: 3, text: source }]);
  });

  it("takes an unnamed column of a few words right of an empty column for notes beside", () => {
    const rows = [
      ["Region", "Q1", "Q2", "", ""],
      ["North", "1", "2", "", "restated"],
      ["South", "3", "4", "", ""],
      ["East", "5", "6", "", ""],
    ];
    const block = only(rows);
    expect(block.columns).toEqual([0, 1, 2]);
    expect(block.notes).toEqual([{ row: 1, text: "restated" }]);
    expect(block.rows).toEqual([1, 2, 3]);
  });
});

describe("readStructure: multi-row headers", () => {
  it("reads names repeated over adjacent columns as a two-row header", () => {
    const block = only([
      ["Club", "Season", "League", "League", "Cup", "Cup"],
      ["Club", "Season", "Apps", "Goals", "Apps", "Goals"],
      ["Liverpool", "1990–91", "2", "0", "1", "0"],
      ["Liverpool", "1991–92", "30", "5", "8", "3"],
    ]);
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths).toEqual([
      ["Club"],
      ["Season"],
      ["League", "Apps"],
      ["League", "Goals"],
      ["Cup", "Apps"],
      ["Cup", "Goals"],
    ]);
    expect(block.rows).toEqual([2, 3]);
  });

  it("does not stack rows for names repeated apart ('Year', '-', 'Year', '-')", () => {
    const block = only([
      ["Year", "-", "Year", "-"],
      ["1820", "8,385", "1885", "395,346"],
      ["1825", "10,199", "1890", "455,302"],
    ]);
    expect(block.headerRows).toEqual([0]);
    expect(block.headerPaths).toEqual([["Year"], ["-"], ["Year"], ["-"]]);
  });

  it("reads a label with blanks right of it as spanning them", () => {
    const block = only([
      ["", "Revenue", "", "Costs", ""],
      ["Region", "Q1", "Q2", "Q1", "Q2"],
      ["North", "10", "20", "5", "6"],
      ["South", "30", "40", "7", "8"],
    ]);
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths).toEqual([
      ["Region"],
      ["Revenue", "Q1"],
      ["Revenue", "Q2"],
      ["Costs", "Q1"],
      ["Costs", "Q2"],
    ]);
  });

  it("reads merged header cells: across the quarters and down over two rows", () => {
    const block = only(
      [
        ["Region", "Revenue", "", "Costs", ""],
        ["", "Q1", "Q2", "Q1", "Q2"],
        ["North", "10", "20", "5", "6"],
      ],
      {},
      { merges: [span(0, 0, 1, 0), span(0, 1, 0, 2), span(0, 3, 0, 4)] },
    );
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths).toEqual([
      ["Region"],
      ["Revenue", "Q1"],
      ["Revenue", "Q2"],
      ["Costs", "Q1"],
      ["Costs", "Q2"],
    ]);
    expect(block.rows).toEqual([2]);
  });

  it("does not stack an all-text data row under a header cell merged for width", () => {
    const block = only(
      [
        ["Name", "Address", ""],
        ["Bob", "Main St", "Paris"],
        ["Ann", "High St", "Leeds"],
      ],
      {},
      { merges: [span(0, 1, 0, 2)] },
    );
    expect(block.headerRows).toEqual([0]);
    expect(block.rows).toEqual([1, 2]);
  });
});

describe("readStructure: totals", () => {
  it.each([
    "Total",
    "TOTAL",
    "Grand total",
    "Subtotal",
    "Sum",
    "Summe",
    "Gesamt",
    "Totaal",
    "Career totals",
    "Total:",
  ])("takes a row labelled %j for a total", (label) => {
    const rows = [
      ["Region", "Q1"],
      ["North", "10"],
      ["South", "30"],
      [label, "77"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([{ row: 3, label, by: "label" }]);
    expect(block.rows).toEqual([1, 2]);
  });

  it("finds the label of a subtotal in a later column ('Liverpool', 'Liverpool Total')", () => {
    const rows = [
      ["Club", "Season", "Apps"],
      ["Liverpool", "1990–91", "2"],
      ["Liverpool", "1991–92", "30"],
      ["Liverpool", "Liverpool Total", "32"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([{ row: 3, label: "Liverpool Total", by: "label" }]);
  });

  it("takes 'All ...' for a total at the top or the bottom only", () => {
    const top = only([
      ["Age", "People"],
      ["All ages", "60"],
      ["Under 18", "20"],
      ["18 and over", "40"],
    ]);
    expect(top.totals).toEqual([{ row: 1, label: "All ages", by: "label" }]);
    const middle = only([
      ["Team", "Points"],
      ["Arsenal", "60"],
      ["All Saints", "20"],
      ["Burnley", "40"],
    ]);
    expect(middle.totals).toEqual([]);
  });

  it("takes an unlabelled row that adds up the rows above for a total", () => {
    const rows = [
      ["Region", "Q1", "Q2"],
      ["North", "10", "20"],
      ["South", "30", "40.5"],
      ["East", "5", "6"],
      ["", "45", "66.5"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([{ row: 4, label: "", by: "arithmetic" }]);
    expect(labels(rows, block)).toEqual(["North", "South", "East"]);
  });

  it("allows rounding of decimal parts, not a miss", () => {
    const rounded = only([
      ["Group", "Share"],
      ["a", "33.3"],
      ["b", "33.3"],
      ["c", "33.3"],
      ["", "100.0"],
    ]);
    expect(rounded.totals.map((t) => t.by)).toEqual(["arithmetic"]);
    const missed = only([
      ["Group", "Share"],
      ["a", "33.3"],
      ["b", "33.3"],
      ["c", "33.3"],
      ["", "101.0"],
    ]);
    expect(missed.totals).toEqual([]);
  });

  it("groups rows under section rows and finds subtotals and the grand total by arithmetic", () => {
    const rows = [
      ["Region", "Q1", "Q2"],
      ["Europe", "", ""],
      ["France", "10", "1"],
      ["Spain", "20", "2"],
      ["", "30", "3"],
      ["Asia", "", ""],
      ["Japan", "5", "1"],
      ["China", "7", "2"],
      ["", "12", "3"],
      ["", "42", "6"],
    ];
    const block = only(rows);
    expect(labels(rows, block)).toEqual(["France", "Spain", "Japan", "China"]);
    expect(block.rowGroups).toEqual({
      name: "group",
      values: ["Europe", "Europe", "Asia", "Asia"],
    });
    expect(block.totals.map((t) => [t.row, t.by])).toEqual([
      [4, "arithmetic"],
      [8, "arithmetic"],
      [9, "arithmetic"],
    ]);
  });

  it("groups indented labels under their parent, a parent that sums them a subtotal", () => {
    const rows = [
      ["Item", "Amount"],
      ["Revenue", "300"],
      ["  Products", "200"],
      ["  Services", "100"],
      ["Costs", "120"],
      ["  Staff", "80"],
      ["  Rent", "40"],
    ];
    const block = only(rows);
    expect(labels(rows, block)).toEqual(["  Products", "  Services", "  Staff", "  Rent"]);
    expect(block.rowGroups?.values).toEqual(["Revenue", "Revenue", "Costs", "Costs"]);
    expect(block.totals).toEqual([
      { row: 1, label: "Revenue", by: "arithmetic" },
      { row: 4, label: "Costs", by: "arithmetic" },
    ]);
  });

  it("sums with the caller's number parser (European amounts)", () => {
    const rows = [
      ["Region", "Betrag"],
      ["Nord", "1.250,50"],
      ["Süd", "2.000,25"],
      ["Ost", "10,00"],
      ["", "3.260,75"],
    ];
    expect(only(rows).totals).toEqual([]);
    const numberOf = (text: string) => {
      const value = Number(text.replaceAll(".", "").replace(",", "."));
      return Number.isNaN(value) ? null : value;
    };
    expect(only(rows, { numberOf }).totals).toEqual([{ row: 4, label: "", by: "arithmetic" }]);
  });
});

describe("readStructure: several tables, hidden parts, formulas, overrides", () => {
  it("splits tables set apart by blank rows with their own title and header", () => {
    const rows = [
      ["Revenue", "", ""],
      ["Region", "Q1", "Q2"],
      ["North", "1", "2"],
      ["South", "3", "4"],
      ["", "", ""],
      ["Headcount", "", ""],
      ["Team", "FY2023", "FY2024"],
      ["Sales", "10", "12"],
      ["Support", "5", "6"],
    ];
    const blocks = readStructure(sheetOf(rows));
    expect(blocks.map((b) => b.title)).toEqual([["Revenue"], ["Headcount"]]);
    expect(blocks.map((b) => b.headerRows)).toEqual([[1], [6]]);
    expect(blocks.map((b) => b.rows)).toEqual([
      [2, 3],
      [7, 8],
    ]);
  });

  it("keeps a section after a blank row in the table", () => {
    const rows = [
      ["Region", "Q1", "Q2"],
      ["Europe", "", ""],
      ["France", "10", "1"],
      ["", "", ""],
      ["Asia", "", ""],
      ["Japan", "5", "1"],
    ];
    const block = only(rows);
    expect(labels(rows, block)).toEqual(["France", "Japan"]);
    expect(block.rowGroups?.values).toEqual(["Europe", "Asia"]);
  });

  it("splits at a repeated header after a blank row", () => {
    const rows = [
      ["name", "city"],
      ["Ann", "Paris"],
      ["", ""],
      ["name", "city"],
      ["Bob", "Rome"],
    ];
    expect(readStructure(sheetOf(rows)).map((b) => b.rows)).toEqual([[1], [4]]);
  });

  it("keeps one table across a blank row when the rows after it are data", () => {
    const rows = [
      ["Region", "Q1"],
      ["North", "1"],
      ["", ""],
      ["South", "3"],
      ["East", "4"],
    ];
    const block = only(rows);
    expect(labels(rows, block)).toEqual(["North", "South", "East"]);
    const words = [
      ["name", "city"],
      ["Ann", "Paris"],
      ["", ""],
      ["Bob", "Rome"],
      ["Eve", "Oslo"],
    ];
    expect(labels(words, only(words))).toEqual(["Ann", "Bob", "Eve"]);
  });

  it("leaves hidden rows and columns out, and keeps them when asked", () => {
    const rows = [
      ["Region", "Code", "Q1"],
      ["North", "n", "1"],
      ["Test", "t", "9"],
      ["South", "s", "3"],
    ];
    const hidden = { hiddenRows: [2], hiddenColumns: [1] };
    const block = only(rows, {}, hidden);
    expect(block.columns).toEqual([0, 2]);
    expect(block.headerPaths).toEqual([["Region"], ["Q1"]]);
    expect(block.rows).toEqual([1, 3]);
    expect(block.hiddenRows).toEqual([2]);
    expect(block.hiddenColumns).toEqual([1]);
    const all = only(rows, { includeHidden: true }, hidden);
    expect(all.columns).toEqual([0, 1, 2]);
    expect(all.rows).toEqual([1, 2, 3]);
    expect(all.hiddenRows).toEqual([2]);
  });

  it("marks the columns holding formula cells", () => {
    const sheet = sheetOf([
      ["Region", "Q1", "Q2"],
      ["North", "1", "2"],
      ["South", "3", "4"],
    ]);
    const row = sheet.cells[2];
    if (row?.[2]) row[2] = { ...row[2], formula: true };
    expect(readStructure(sheet)[0]?.formulaColumns).toEqual([2]);
  });

  it("drops empty columns, a title's included", () => {
    const block = only([
      ["", "Region", "", "Q1"],
      ["", "North", "", "1"],
      ["", "South", "", "2"],
    ]);
    expect(block.columns).toEqual([1, 3]);
  });

  it("forces the header's height and the rows to skip", () => {
    const rows = [
      ["Club", "League", "League"],
      ["Club", "Apps", "Goals"],
      ["Liverpool", "2", "0"],
    ];
    expect(only(rows, { headerRows: 1 }).headerPaths).toEqual([["Club"], ["League"], ["League"]]);
    const plain = [
      ["junk line", "", ""],
      ["more junk", "x", ""],
      ["Region", "Q1", "Q2"],
      ["North", "1", "2"],
    ];
    const skipped = only(plain, { skipRows: 2 });
    expect(skipped.skipped).toEqual([0, 1]);
    expect(skipped.title).toEqual([]);
    expect(skipped.headerRows).toEqual([2]);
    expect(skipped.rows).toEqual([3]);
    const two = only(
      [
        ["Region", "Sales", ""],
        ["", "Q1", "Q2"],
        ["North", "1", "2"],
      ],
      { headerRows: 2 },
    );
    expect(two.headerPaths).toEqual([["Region"], ["Sales", "Q1"], ["Sales", "Q2"]]);
  });

  it("with skipRows 0 looks for no title", () => {
    const rows = [
      ["Report", "", ""],
      ["Region", "Q1", "Q2"],
      ["North", "1", "2"],
    ];
    expect(only(rows).title).toEqual(["Report"]);
    const forced = only(rows, { skipRows: 0 });
    expect(forced.title).toEqual([]);
    expect(forced.headerRows).toEqual([0]);
  });
});

describe("readStructure on TableBench", () => {
  it("reads the first test table with duplicate header names as a two-row header", () => {
    const file = path.resolve(
      import.meta.dirname,
      "../fixtures/datasets/tablebench/tablebench_two_row_header.jsonl",
    );
    const tables = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map(
        (line) => (JSON.parse(line) as { table: { columns: string[]; data: unknown[][] } }).table,
      );
    const table = tables.find((t) => new Set(t.columns).size < t.columns.length);
    if (!table) throw new Error(`no table with duplicate header names in ${file}`);
    const data = table.data.map((row) => row.map((v) => (v === null ? "" : String(v))));
    const rows = [table.columns, ...data];
    const block = only(rows);
    expect(block.headerRows).toEqual([0, 1]);
    const paths = block.headerPaths.map((path) => path.join(" / "));
    expect(paths.slice(0, 5)).toEqual([
      "Club",
      "Season",
      "League / Division",
      "League / Apps",
      "League / Goals",
    ]);
    expect(paths).toContain("Total / Goals");
    expect(new Set(paths).size).toBe(paths.length);
    // Per-club subtotals and the career total are left out of the seasons.
    expect(block.totals.map((t) => t.label)).toEqual([
      "Liverpool Total",
      "Real Madrid Total",
      "Manchester City Total",
      "Career Total",
    ]);
    expect(block.totals.every((t) => t.by === "label")).toBe(true);
    const seasons = block.rows.map((r) => rows[r]?.[1] ?? "");
    expect(seasons).toHaveLength(15);
    expect(seasons.every((season) => /^\d{4}–\d{2,4}$/.test(season))).toBe(true);
  });
});

describe("readStructure: the header is the row of words right above the data", () => {
  const notesAbove = [
    ["Lots of people", "", "", "", ""],
    ["simply write", "", "", "", "some notes"],
    ["at", "the", "top", "", "of them"],
    ["or", "merge", "", "", "cells"],
    ["Name", "Job", "Age", "Kids", "Born"],
    ["Ann", "actor", "60", "true", "1956-10-21"],
    ["Bob", "singer", "69", "false", "1947-01-08"],
    ["Eve", "author", "89", "true", "1926-04-28"],
  ];

  it("takes notes spread over cells above a table for notes, not for a title and a header", () => {
    const block = only(notesAbove, {}, { merges: [span(3, 1, 3, 3)] });
    expect(block.headerRows).toEqual([4]);
    expect(block.headerPaths).toEqual([["Name"], ["Job"], ["Age"], ["Kids"], ["Born"]]);
    expect(block.title).toEqual([]);
    expect(block.notes.map((n) => n.row)).toEqual([0, 1, 2, 3]);
    expect(block.notes[2]?.text).toBe("at the top of them");
    expect(labels(notesAbove, block)).toEqual(["Ann", "Bob", "Eve"]);
  });

  it("takes words below the data where it has numbers and dates for notes", () => {
    const rows = [...notesAbove.slice(4), ["Some", "", "", "", ""], ["", "", "at the", "end", ""]];
    const block = only(rows);
    expect(block.notes.map((n) => n.row)).toEqual([4, 5]);
    expect(labels(rows, block)).toEqual(["Ann", "Bob", "Eve"]);
  });

  it("keeps a last data row of words in the text columns as data", () => {
    const rows = [
      ["Name", "City", "Age"],
      ["Ann", "Paris", "31"],
      ["Bob", "Rome", "45"],
      ["Zoe", "Oslo", ""],
    ];
    const block = only(rows);
    expect(block.notes).toEqual([]);
    expect(labels(rows, block)).toEqual(["Ann", "Bob", "Zoe"]);
  });

  it("keeps a header over an unnamed index when the first data row is words", () => {
    const rows = [
      ["", "value"],
      ["a", "x"],
      ["b", "1"],
      ["c", "2"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0]);
    expect(block.notes).toEqual([]);
    expect(labels(rows, block)).toEqual(["a", "b", "c"]);
  });

  it("keeps the header over metadata rows that hold values (a time-series workbook)", () => {
    const rows = [
      ["", "Index ; Sydney", "Index ; Perth"],
      ["Unit", "Index Numbers", "Percent"],
      ["Series Start", "1948-09-01", "1948-09-01"],
      ["No. Obs", "282", "282"],
      ["Series ID", "A2325806K", "A2325811C"],
      ["1948-09-01", "3.9", "3.8"],
      ["1948-12-01", "4", "3.9"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0]);
    expect(block.notes).toEqual([]);
  });

  it("keeps a text column of notes beside the data out of the header", () => {
    const rows = [
      ["Name", "Score", "Notes"],
      ["Ann", "12", "came late and left early"],
      ["Bob", "15", ""],
      ["Eve", "9", "see the appendix"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0]);
    expect(block.headerPaths).toEqual([["Name"], ["Score"], ["Notes"]]);
    expect(labels(rows, block)).toEqual(["Ann", "Bob", "Eve"]);
  });

  it("takes a numbered caption and a unit line above a header of merged groups for the title", () => {
    const rows = [
      ["1", "Visits by month", "", "", ""],
      ["", "", "", "", "thousands"],
      ["", "", "All", "Area", ""],
      ["", "", "", "Europe", "Other"],
      ["", "", "NSA", "SA", "NSA"],
      ["2012", "Jan", "2245", "1704", "348"],
      ["", "Feb", "1736", "1369", "212"],
    ];
    const block = only(rows, {}, { merges: [span(2, 3, 2, 4)] });
    expect(block.title).toEqual(["1 Visits by month", "thousands"]);
    expect(block.headerRows).toEqual([2, 3, 4]);
    expect(block.headerPaths).toEqual([
      [],
      [],
      ["All", "NSA"],
      ["Area", "Europe", "SA"],
      ["Area", "Other", "NSA"],
    ]);
    expect(block.rows).toEqual([5, 6]);
  });
});

describe("readStructure: header rows", () => {
  it("reads a row of words repeating a name over adjacent columns as a second header row", () => {
    const block = only([
      ["Staple", "Maize", "Rice", "Wheat"],
      ["Component (per 100 g)", "Amount", "Amount", "Amount"],
      ["Water (g)", "10", "12", "13"],
      ["Energy (kJ)", "1528", "1528", "1369"],
    ]);
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths).toEqual([
      ["Staple", "Component (per 100 g)"],
      ["Maize", "Amount"],
      ["Rice", "Amount"],
      ["Wheat", "Amount"],
    ]);
  });

  it("does not take one text spread across a row under the header for a header row", () => {
    const block = only([
      ["Year", "Race", "Place", "Notes"],
      ["Representing Ireland", "Representing Ireland", "Representing Ireland", "-"],
      ["1978", "Marathon", "Gold", "2:23:19"],
      ["1980", "Marathon", "Gold", "2:16:14"],
    ]);
    expect(block.headerRows).toEqual([0]);
  });

  it("reads a row of units under the names as the header's units, not as data", () => {
    const rows = [
      ["", "Employment", "Wages"],
      ["", "'000", "$m"],
      ["MINING", "", ""],
      ["2015–16", "163", "25150"],
      ["2016–17", "157", "23166"],
      ["RETAIL", "", ""],
      ["2016–17", "1292", "41076"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths).toEqual([[], ["Employment"], ["Wages"]]);
    expect(block.units).toEqual(["", "'000", "$m"]);
    expect(labels(rows, block)).toEqual(["2015–16", "2016–17", "2016–17"]);
  });

  it("does not take a first data row of words for units", () => {
    const block = only([
      ["Name", "Code", "Size"],
      ["Ann", "x", "y"],
      ["Bob", "1", "2"],
    ]);
    expect(block.headerRows).toEqual([0]);
    expect(block.units).toBeUndefined();
  });

  it("reads a pivot export's header: the dimension named left of its values", () => {
    const rows = [
      ["Sense of purpose", "", "", "0 - 6", "7 - 10"],
      ["Sex", "Age", "Qualification", "", ""],
      ["Male", "15 - 24", "None", "12000", "37000"],
      ["", "", "Diploma", "9000", "11000"],
    ];
    const block = only(rows, {}, { merges: [span(0, 0, 0, 2)] });
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths).toEqual([
      ["Sex"],
      ["Age"],
      ["Qualification"],
      ["Sense of purpose", "0 - 6"],
      ["Sense of purpose", "7 - 10"],
    ]);
    expect(block.rows).toEqual([2, 3]);
  });

  it("does not read a caption over a header of row names as a pivot without a merge", () => {
    const rows = [
      ["Sense of purpose", "", "", "0 - 6", "7 - 10"],
      ["Sex", "Age", "Qualification", "", ""],
      ["Male", "15 - 24", "None", "12000", "37000"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0]);
  });

  it("moves upper names shifted against the blocks of names below onto them", () => {
    const block = only([
      ["-", "-", "Regular", "Regular", "Playoffs", "Playoffs", "-", "-"],
      ["Season", "Team", "-", "GP", "G", "-", "GP", "G"],
      ["2004", "KalPa", "-", "1", "0", "-", "—", "—"],
      ["2005", "KalPa", "-", "29", "9", "-", "5", "0"],
    ]);
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.headerPaths.map((p) => p.join(" / "))).toEqual([
      "Season",
      "Team",
      "-",
      "Regular / GP",
      "Regular / G",
      "-",
      "Playoffs / GP",
      "Playoffs / G",
    ]);
  });

  it("leaves upper names standing over their blocks where they are", () => {
    const block = only([
      ["Club", "-", "League", "League", "-", "Cup", "Cup"],
      ["Club", "-", "Apps", "Goals", "-", "Apps", "Goals"],
      ["Liverpool", "-", "2", "0", "-", "1", "0"],
    ]);
    expect(block.headerPaths.map((p) => p.join(" / "))).toEqual([
      "Club",
      "-",
      "League / Apps",
      "League / Goals",
      "-",
      "Cup / Apps",
      "Cup / Goals",
    ]);
  });

  it("puts each of several '%' columns under the column left of it", () => {
    const block = only([
      ["Age", "Both", "%", "Male", "%"],
      ["Under 1", "1053", "3.24", "531", "3.24"],
      ["1 - 2", "1281", "3.94", "654", "3.99"],
    ]);
    expect(block.headerPaths).toEqual([["Age"], ["Both"], ["Both", "%"], ["Male"], ["Male", "%"]]);
  });

  it("keeps a single '%' column's name", () => {
    const block = only([
      ["Party", "Votes", "%"],
      ["Left", "100", "40"],
      ["Right", "150", "60"],
    ]);
    expect(block.headerPaths).toEqual([["Party"], ["Votes"], ["%"]]);
  });
});

describe("readStructure: separator rows and sections", () => {
  it("reads a row of dashes as a blank row: the total it sets apart adds up (means aside)", () => {
    const rows = [
      ["Rank", "Region", "GDP", "Share", "Per capita"],
      ["1", "Attica", "85.285", "47.3", "22,700"],
      ["2", "Macedonia", "24.953", "13.8", "13,300"],
      ["3", "Thessaly", "9.437", "5.2", "13,000"],
      ["-", "-", "-", "-", "-"],
      ["–", "Greece", "119.675", "66.3", "16,800"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([{ row: 5, label: "–", by: "arithmetic" }]);
    expect(block.rows).toEqual([1, 2, 3]);
  });

  it("does not take a last row for a total when a value lies outside its column's range", () => {
    const rows = [
      ["Rank", "Region", "GDP", "Share", "Per capita"],
      ["1", "Attica", "85.285", "47.3", "22,700"],
      ["2", "Macedonia", "24.953", "13.8", "13,300"],
      ["3", "Thessaly", "9.437", "5.2", "13,000"],
      ["", "", "", "", ""],
      ["4", "Greece", "119.675", "66.3", "96,800"],
    ];
    expect(only(rows).totals).toEqual([]);
  });

  it("does not take a last row set apart that sums one column only", () => {
    const rows = [
      ["Name", "Points", "Age"],
      ["Ann", "10", "30"],
      ["Bob", "20", "40"],
      ["Eve", "5", "35"],
      ["", "", ""],
      ["Max", "35", "33"],
    ];
    expect(only(rows).totals).toEqual([]);
  });

  it("keeps a row with a label and dashes as data", () => {
    const rows = [
      ["Tax", "2015", "2016"],
      ["Fuel", "10", "12"],
      ["Waste", "na", "na"],
      ["Carbon", "5", "-"],
    ];
    expect(labels(rows, only(rows))).toEqual(["Fuel", "Waste", "Carbon"]);
  });

  it("reads one text spread across a row as a section, and a '-' labelled row adding up as a total", () => {
    const rows = [
      ["Hluttaw", "MPs", "Military"],
      ["State", "State", "State"],
      ["Chin", "18", "6"],
      ["Kachin", "36", "13"],
      ["Region", "Region", "Region"],
      ["Bago", "56", "19"],
      ["Yangon", "90", "31"],
      ["-", "200", "69"],
    ];
    const block = only(rows);
    expect(block.rowGroups?.values).toEqual(["State", "State", "Region", "Region"]);
    expect(block.totals).toEqual([{ row: 7, label: "-", by: "arithmetic" }]);
    expect(labels(rows, block)).toEqual(["Chin", "Kachin", "Bago", "Yangon"]);
  });

  it("does not take a label with placeholders for a section", () => {
    const rows = [
      ["Tax", "2015", "2016"],
      ["Energy", "-", "-"],
      ["Fuel", "10", "12"],
      ["Transport", "n/a", "n/a"],
      ["Cars", "5", "6"],
    ];
    const block = only(rows);
    expect(block.rowGroups).toBeUndefined();
    expect(labels(rows, block)).toEqual(["Energy", "Fuel", "Transport", "Cars"]);
  });
});

describe("readStructure: more totals", () => {
  it("takes rows labelled with the period they add up for totals, in a block of them", () => {
    const rows = [
      ["Period", "Total", "1 unit"],
      ["2017 Annual . . . . . .", "1282", "820"],
      ["2018 Annual . . . . . .", "1317.9", "852.9"],
      ["RSE (%)", "1", "2"],
      ["", "", ""],
      ["2018 Year to date", "305.4", "199.9"],
      ["2019 Year to date", "288.9", "184.4"],
      ["March", "117.6", "75.8"],
      ["April", "119.9", "79.1"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([
      { row: 1, label: "2017 Annual", by: "label" },
      { row: 2, label: "2018 Annual", by: "label" },
      { row: 5, label: "2018 Year to date", by: "label" },
      { row: 6, label: "2019 Year to date", by: "label" },
    ]);
    expect(labels(rows, block)).toEqual(["RSE (%)", "March", "April"]);
  });

  it("does not take a single 'Annual' row in the middle for a total", () => {
    const rows = [
      ["Frequency", "Series", "Points"],
      ["Monthly", "12", "340"],
      ["Annual", "3", "40"],
      ["Weekly", "9", "800"],
    ];
    expect(only(rows).totals).toEqual([]);
  });

  it("takes 'Total ...' that outgrows every row above for a total", () => {
    const rows = [
      ["Country", "Primary", "Schools"],
      ["United States", "500", "1,725"],
      ["Canada", "82", "366"],
      ["Australia", "119", "176"],
      ["Total Schools Globally", "1,375", "4,460"],
      ["Countries", "104", "151"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([{ row: 4, label: "Total Schools Globally", by: "label" }]);
  });

  it("does not take 'total ...' rows that do not outgrow the rows above for totals", () => {
    const rows = [
      ["Indicator", "Rank", "Out of"],
      ["tractors", "22", "190"],
      ["irrigated land", "14", "173"],
      ["total land", "15", "199"],
      ["total land per capita", "57", "199"],
      ["permanent crops", "18", "181"],
    ];
    expect(only(rows).totals).toEqual([]);
  });

  it("takes 'All ...' in the middle for a subtotal when it adds up the rows above", () => {
    const rows = [
      ["Payer", "2003", "2004"],
      ["Mining", "1205.4", "1298.9"],
      ["Farming", "912.4", "971.7"],
      ["Other", "6573", "6989.7"],
      ["All industries", "8690.8", "9260.3"],
      ["Households", "9360.4", "9478.4"],
      ["Total", "18051.2", "18738.7"],
    ];
    const block = only(rows);
    expect(block.totals.map((t) => [t.row, t.by])).toEqual([
      [4, "arithmetic"],
      [6, "label"],
    ]);
    expect(labels(rows, block)).toEqual(["Mining", "Farming", "Other", "Households"]);
  });

  it("takes the rows of a section named as a total that add up the other sections for totals", () => {
    const rows = [
      ["", "Jobs", "Wages"],
      ["MINING", "", ""],
      ["2016", "117", "11827"],
      ["2017", "128", "13288"],
      ["FARMING", "", ""],
      ["2016", "485", "5843"],
      ["2017", "493", "6039"],
      ["TOTAL SELECTED INDUSTRIES", "", ""],
      ["2016", "602", "17671"],
      ["2017", "622", "19326"],
    ];
    const block = only(rows);
    expect(block.totals.map((t) => [t.row, t.label])).toEqual([
      [8, "TOTAL SELECTED INDUSTRIES 2016"],
      [9, "TOTAL SELECTED INDUSTRIES 2017"],
    ]);
    expect(block.rows).toEqual([2, 3, 5, 6]);
  });

  it("does not take the rows of a section named as a total that do not add up", () => {
    const rows = [
      ["", "Jobs", "Wages"],
      ["MINING", "", ""],
      ["2016", "117", "11827"],
      ["FARMING", "", ""],
      ["2016", "485", "5843"],
      ["Total expenses", "", ""],
      ["2016", "40", "900"],
    ];
    const block = only(rows);
    expect(block.totals).toEqual([]);
    expect(block.rows).toEqual([2, 4, 6]);
  });

  const fields = [
    ["Field", "1987", "1987 %", "2017", "2017 %"],
    ["All fields", "9200", "100", "9400", "100"],
    ["Life sciences", "5783", "62.9", "6000", "63.8"],
    ["Agriculture", "1144", "12.4", "1200", "12.8"],
    ["Biology", "3839", "41.7", "4000", "42.6"],
    ["Health", "800", "8.7", "800", "8.5"],
    ["Physics", "3417", "37.1", "3400", "36.2"],
    ["Chemistry", "1975", "21.5", "2000", "21.3"],
    ["Astronomy", "1442", "15.7", "1400", "14.9"],
    ["Unknown", "0", "*", "0", "0"],
  ];

  it("takes rows above the rows they add up for subtotals when nothing indents them", () => {
    const block = only(fields);
    expect(block.totals.map((t) => [t.row, t.label, t.by])).toEqual([
      [1, "All fields", "label"],
      [2, "Life sciences", "arithmetic"],
      [6, "Physics", "arithmetic"],
    ]);
    expect(labels(fields, block)).toEqual([
      "Agriculture",
      "Biology",
      "Health",
      "Chemistry",
      "Astronomy",
      "Unknown",
    ]);
    expect(block.rowGroups?.values).toEqual([
      "Life sciences",
      "Life sciences",
      "Life sciences",
      "Physics",
      "Physics",
      "Physics",
    ]);
  });

  it("does not take a row that equals the rows under it for a parent when the rest does not split so", () => {
    const rows = fields.map((row) => [...row]);
    rows[7] = ["Chemistry", "1975", "21.5", "2001", "21.3"];
    expect(only(rows).totals.map((t) => t.row)).toEqual([1]);
  });

  it("does not take a row equal to the sum of the rows above in one column only for a total", () => {
    const rows = [
      ["Name", "Goals", "Games"],
      ["Ann", "3", "10"],
      ["Bob", "4", "12"],
      ["Eve", "7", "9"],
      ["Max", "2", "11"],
    ];
    expect(only(rows).totals).toEqual([]);
  });

  it("reads the workbook's indent levels as it reads leading spaces", () => {
    const rows = [
      ["Item", "Amount"],
      ["Revenue", "300"],
      ["Products", "200"],
      ["Services", "100"],
      ["Costs", "120"],
      ["Staff", "80"],
      ["Rent", "40"],
    ];
    const sheet = sheetOf(rows);
    for (const r of [2, 3, 5, 6]) {
      const row = sheet.cells[r];
      if (row?.[0]) row[0] = { ...row[0], indent: 1 };
    }
    const block = readStructure(sheet)[0] as TableBlock;
    expect(block.totals.map((t) => t.row)).toEqual([1, 4]);
    expect(block.rowGroups?.values).toEqual(["Revenue", "Revenue", "Costs", "Costs"]);
  });

  it("takes a row repeating, over each header group, the sum of the group in the row above", () => {
    const rows = [
      ["Round", "Klaus", "Klaus", "Moserová", "Moserová", "Zeman", "Zeman"],
      ["Round", "Deputies", "Senators", "Deputies", "Senators", "Deputies", "Senators"],
      ["1st", "89", "32", "25", "43", "78", "5"],
      ["1st", "121", "121", "68", "68", "83", "83"],
      ["2nd", "85", "33", "32", "42", "-", "-"],
      ["2nd", "118", "118", "74", "74", "-", "-"],
    ];
    const block = only(rows);
    expect(block.headerRows).toEqual([0, 1]);
    expect(block.totals.map((t) => t.row)).toEqual([3, 5]);
    expect(block.rows).toEqual([2, 4]);
  });

  it("does not take a row repeating a value over a group for a total when it is not the sum", () => {
    const rows = [
      ["Round", "Klaus", "Klaus", "Moserová", "Moserová", "Zeman", "Zeman"],
      ["Round", "Deputies", "Senators", "Deputies", "Senators", "Deputies", "Senators"],
      ["1st", "89", "32", "25", "43", "78", "5"],
      ["2nd", "120", "120", "68", "68", "80", "80"],
    ];
    expect(only(rows).totals).toEqual([]);
  });
});

describe("readStructure: headers repeated and tables side by side", () => {
  it("splits at a header repeated under a title of its own, without blank rows", () => {
    const rows = [
      ["", "Classics", "", ""],
      ["", "Term 1", "Term 2", "Term 3"],
      ["Ann", "4", "0", "7"],
      ["Bob", "4", "6", "2"],
      ["", "History", "", ""],
      ["", "Term 1", "Term 2", "Term 3"],
      ["Ann", "0", "4", "2"],
      ["Bob", "2", "5", "2"],
    ];
    const blocks = readStructure(sheetOf(rows));
    expect(blocks.map((b) => b.title)).toEqual([["Classics"], ["History"]]);
    expect(blocks.map((b) => b.headerRows)).toEqual([[1], [5]]);
    expect(blocks.map((b) => b.rows)).toEqual([
      [2, 3],
      [6, 7],
    ]);
  });

  it("leaves a header repeated inside the data without a title out of the rows", () => {
    const rows = [
      ["club", "played", "points"],
      ["club", "played", "points"],
      ["Maesteg", "22", "92"],
      ["Kidwelly", "22", "64"],
      ["-", "played", "points"],
      ["Dunvant", "22", "20"],
    ];
    const block = only(rows);
    expect(block.repeatedHeaders).toEqual([1, 4]);
    expect(labels(rows, block)).toEqual(["Maesteg", "Kidwelly", "Dunvant"]);
  });

  it("keeps a data row sharing one word with the header as data", () => {
    const rows = [
      ["name", "role", "city"],
      ["Ann", "role", "Paris"],
      ["Bob", "lead", "Rome"],
    ];
    const block = only(rows);
    expect(block.repeatedHeaders).toBeUndefined();
    expect(labels(rows, block)).toEqual(["Ann", "Bob"]);
  });

  it("splits tables side by side with an empty column between and the same names", () => {
    const rows = [
      ["Classics", "", "", "", "History", "", ""],
      ["Name", "Score", "Grade", "", "Name", "Score", "Grade"],
      ["Ann", "1", "F", "", "Ann", "3", "D"],
      ["Bob", "2", "D", "", "Bob", "4", "C"],
      ["", "", "", "", "", "", ""],
      ["Music", "", "", "", "Drama", "", ""],
      ["Name", "Score", "Grade", "", "Name", "Score", "Grade"],
      ["Ann", "5", "B", "", "Ann", "7", "A"],
    ];
    const blocks = readStructure(sheetOf(rows));
    expect(blocks.map((b) => b.title)).toEqual([["Classics"], ["History"], ["Music"], ["Drama"]]);
    expect(blocks.map((b) => b.columns)).toEqual([
      [0, 1, 2],
      [4, 5, 6],
      [0, 1, 2],
      [4, 5, 6],
    ]);
    expect(blocks.map((b) => b.rows)).toEqual([[2, 3], [2, 3], [7], [7]]);
  });

  it("keeps one table across empty spacer columns", () => {
    const rows = [
      ["Year", "Month", "", "NSA", "", "SA"],
      ["2012", "Jan", "", "2245", "", "2660"],
      ["", "Feb", "", "1736", "", "2470"],
    ];
    const block = only(rows);
    expect(block.columns).toEqual([0, 1, 3, 5]);
    expect(block.rows).toEqual([1, 2]);
  });
});
