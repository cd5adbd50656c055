import { type CellObject, utils, write } from "@e965/xlsx";
import { describe, expect, it } from "vitest";
import { TableLoadError } from "../../tables/errors.js";
import { readStructure, type TableBlock } from "../../tables/structure.js";
import {
  gridsFromWorkbook,
  type RawWorkbookSheet,
  rawSheetsFromWorkbook,
} from "../../tables/xlsx.js";
import {
  dollars,
  FINANCE,
  FINANCE_COLUMNS,
  financeWorkbookBytes,
} from "../support/messy-workbook.js";

const UNLIMITED = { maxBytes: Number.POSITIVE_INFINITY, maxCells: Number.POSITIVE_INFINITY };

function sheetNamed(sheets: RawWorkbookSheet[], name: string): RawWorkbookSheet {
  const sheet = sheets.find((s) => s.sheet === name);
  if (!sheet) throw new Error(`no sheet ${name} in ${sheets.map((s) => s.sheet).join(", ")}`);
  return sheet;
}

function bookBytes(cells: (string | number | boolean | Date | CellObject | null)[][]): Buffer {
  const sheet = utils.aoa_to_sheet(cells, { cellDates: true });
  const book = utils.book_new();
  utils.book_append_sheet(book, sheet, "Data");
  return write(book, { type: "buffer", bookType: "xlsx" }) as Buffer;
}

describe("the finance workbook of issue 23, end to end", () => {
  const sheets = rawSheetsFromWorkbook(financeWorkbookBytes(), "finance.xlsx", UNLIMITED);
  const results = sheetNamed(sheets, FINANCE.sheet);
  const { raw } = results;
  const blocks = readStructure(raw);
  const block = blocks[0] as TableBlock;
  const at = (r: number, c: number) => raw.cells[r]?.[c]?.text ?? "";
  const address = (r: number, c: number) => `${raw.letters?.[c]}${raw.rowNumbers[r]}`;

  it("flags the hidden sheet and keeps the visible one visible", () => {
    expect(sheets.map((s) => [s.sheet, s.hidden])).toEqual([
      [FINANCE.sheet, false],
      [FINANCE.hiddenSheet, true],
    ]);
  });

  it("reads one table with its title", () => {
    expect(blocks).toHaveLength(1);
    expect(block.title).toEqual([FINANCE.title]);
  });

  it("flattens the merged two-row header into header paths", () => {
    expect(block.headerRows.map((r) => raw.rowNumbers[r])).toEqual([3, 4]);
    expect(block.headerPaths.map((path) => path.join(" / "))).toEqual(FINANCE_COLUMNS);
    expect(block.headerPaths[3]).toEqual(["Revenue", "Q3"]);
  });

  it("keeps the five visible regions as the data, in sheet rows", () => {
    expect(block.rows.map((r) => at(r, 0))).toEqual([...FINANCE.regions]);
    expect(block.rows.map((r) => raw.rowNumbers[r])).toEqual([5, 6, 7, 9, 10]);
    expect(at(block.rows[0] as number, 1)).toBe(dollars(1250400));
  });

  it("takes the Total row for a total and both footnotes for notes", () => {
    expect(block.totals.map((t) => [t.label, t.by, raw.rowNumbers[t.row]])).toEqual([
      ["Total", "label", 11],
    ]);
    expect(block.notes.map((n) => [n.text, raw.rowNumbers[n.row]])).toEqual([
      [FINANCE.notes[0], 13],
      [FINANCE.notes[1], 14],
    ]);
  });

  it("leaves the hidden row and the hidden column out, and says so", () => {
    expect(block.hiddenRows.map((r) => raw.rowNumbers[r])).toEqual([8]);
    expect(block.hiddenColumns.map((c) => raw.letters?.[c])).toEqual(["J"]);
    expect(block.rows.map((r) => at(r, 0))).not.toContain(FINANCE.hiddenRegion);
    expect(block.columns.map((c) => raw.letters?.[c])).toEqual([
      "A",
      "B",
      "C",
      "D",
      "E",
      "F",
      "G",
      "H",
      "I",
    ]);
  });

  it("keeps the hidden row and column when asked", () => {
    const all = readStructure(raw, { includeHidden: true })[0] as TableBlock;
    expect(all.rows.map((r) => at(r, 0))).toContain(FINANCE.hiddenRegion);
    expect(all.columns.map((c) => raw.letters?.[c])).toContain("J");
  });

  it("reads the formula cell's cached value and marks its column", () => {
    const formulaColumns = block.formulaColumns.map((c) => raw.letters?.[c]);
    expect(formulaColumns).toEqual(["I"]);
    const west = block.rows.find((r) => at(r, 0) === "West") as number;
    const cell = raw.cells[west]?.[block.formulaColumns[0] as number];
    expect(address(west, block.formulaColumns[0] as number)).toBe(FINANCE.formula.address);
    expect(cell).toMatchObject({ text: "502100", kind: "number", formula: true });
  });

  it("classifies amounts stored as text as number-like", () => {
    expect(raw.cells[block.rows[0] as number]?.[1]).toEqual({
      text: dollars(1250400),
      kind: "number",
    });
    expect(raw.cells[block.rows[0] as number]?.[0]?.kind).toBe("text");
  });

  it("records the merges over the cells' indexes", () => {
    expect(raw.merges).toContainEqual({ row0: 2, col0: 1, row1: 2, col1: 4 });
    expect(raw.merges).toContainEqual({ row0: 2, col0: 0, row1: 3, col1: 0 });
  });

  it("still reads the same workbook with gridsFromWorkbook", () => {
    const grids = gridsFromWorkbook(financeWorkbookBytes(), "finance.xlsx", UNLIMITED);
    expect(grids.map((g) => g.sheet)).toEqual([FINANCE.sheet, FINANCE.hiddenSheet]);
  });
});

describe("rawSheetsFromWorkbook", () => {
  it("gives each cell a kind from its type, dates as dateText, the displayed number aside", () => {
    const percent: CellObject = { t: "n", v: 0.125, z: "0.0%" };
    const bytes = bookBytes([
      ["when", "ok", "share", "n", "label"],
      [new Date(Date.UTC(2024, 2, 1)), true, percent, 7, "12%"],
    ]);
    const [sheet] = rawSheetsFromWorkbook(bytes, "kinds.xlsx", UNLIMITED);
    const row = sheet?.raw.cells[1] ?? [];
    expect(row[0]).toEqual({ text: "2024-03-01", kind: "date" });
    expect(row[1]).toEqual({ text: "true", kind: "bool" });
    expect(row[2]).toEqual({ text: "0.125", kind: "number", shown: "12.5%" });
    expect(row[3]).toEqual({ text: "7", kind: "number" });
    expect(row[4]).toEqual({ text: "12%", kind: "number" });
  });

  it("covers the filled rectangle only, with the sheet's rows and letters", () => {
    const sheet = utils.aoa_to_sheet([[]]);
    utils.sheet_add_aoa(
      sheet,
      [
        ["a", "b"],
        [1, 2],
      ],
      { origin: "C4" },
    );
    const book = utils.book_new();
    utils.book_append_sheet(book, sheet, "Offset");
    const bytes = write(book, { type: "buffer", bookType: "xlsx" }) as Buffer;
    const [raw] = rawSheetsFromWorkbook(bytes, "offset.xlsx", UNLIMITED);
    expect(raw?.raw.letters).toEqual(["C", "D"]);
    expect(raw?.raw.rowNumbers).toEqual([4, 5]);
  });

  it("flags very hidden sheets", () => {
    const book = utils.book_new();
    utils.book_append_sheet(book, utils.aoa_to_sheet([["a"], [1]]), "Shown");
    utils.book_append_sheet(book, utils.aoa_to_sheet([["b"], [2]]), "Secret");
    book.Workbook = { Sheets: [{ name: "Shown" }, { name: "Secret", Hidden: 2 }] };
    const bytes = write(book, { type: "buffer", bookType: "xlsx" }) as Buffer;
    const sheets = rawSheetsFromWorkbook(bytes, "secret.xlsx", UNLIMITED);
    expect(sheets.map((s) => [s.sheet, s.hidden])).toEqual([
      ["Shown", false],
      ["Secret", true],
    ]);
  });

  it("refuses a corrupt workbook, naming the file", () => {
    const bytes = financeWorkbookBytes().subarray(0, 300);
    expect(() => rawSheetsFromWorkbook(bytes, "broken.xlsx", UNLIMITED)).toThrow(TableLoadError);
    expect(() => rawSheetsFromWorkbook(bytes, "broken.xlsx", UNLIMITED)).toThrow(
      /broken\.xlsx: not a readable Excel workbook/,
    );
  });

  it("keeps the limits on cells", () => {
    const limits = { maxBytes: Number.POSITIVE_INFINITY, maxCells: 20 };
    expect(() => rawSheetsFromWorkbook(financeWorkbookBytes(), "finance.xlsx", limits)).toThrow(
      /refused: .*cells/,
    );
  });

  it("refuses a workbook with no data", () => {
    const book = utils.book_new();
    utils.book_append_sheet(book, utils.aoa_to_sheet([]), "Empty");
    const bytes = write(book, { type: "buffer", bookType: "xlsx" }) as Buffer;
    expect(() => rawSheetsFromWorkbook(bytes, "empty.xlsx", UNLIMITED)).toThrow(
      /no data in any sheet \("Empty"\)/,
    );
  });
});
