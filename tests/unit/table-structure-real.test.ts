import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readStructure, type TableBlock } from "../../tables/structure.js";
import { rawSheetsFromWorkbook } from "../../tables/xlsx.js";

/**
 * The structure reader on public spreadsheets no one here wrote (tests/fixtures/messy, their
 * origin in SOURCES.md; the expected rows are questions.json's `expect` blocks), in sheet rows.
 */
const MESSY = path.resolve(import.meta.dirname, "../fixtures/messy");

function readSheet(file: string, sheet: string) {
  const found = rawSheetsFromWorkbook(readFileSync(path.join(MESSY, file)), file).find(
    (s) => s.sheet === sheet,
  );
  if (!found) throw new Error(`no sheet ${sheet} in ${file}`);
  const { raw } = found;
  const place = (r: number) => raw.rowNumbers[r] as number;
  const blocks = readStructure(raw);
  return {
    blocks,
    block: blocks[0] as TableBlock,
    rowsOf: (b: TableBlock) => ({
      header: b.headerRows.map(place),
      rows: b.rows.map(place),
      totals: b.totals.map((t) => place(t.row)),
      notes: b.notes.map((n) => place(n.row)),
    }),
  };
}

const joined = (b: TableBlock) => b.headerPaths.map((p) => p.join(" / "));

describe("readStructure on real spreadsheets", () => {
  it.each(["arts", "other"])(
    "deaths.xlsx %s: notes above and below, the header right above the data",
    (sheet) => {
      const { block, rowsOf } = readSheet("deaths.xlsx", sheet);
      const rows = rowsOf(block);
      expect(rows.header).toEqual([5]);
      expect(joined(block)).toEqual([
        "Name",
        "Profession",
        "Age",
        "Has kids",
        "Date of birth",
        "Date of death",
      ]);
      expect(block.title).toEqual([]);
      expect(rows.notes).toEqual([1, 2, 3, 4, 16, 17, 18, 19]);
      expect(rows.rows).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    },
  );

  it("PhD_major-field.xlsx: the grand total and the 8 subtotals above their detailed fields", () => {
    const { block, rowsOf } = readSheet("PhD_major-field.xlsx", "Table 12");
    expect(rowsOf(block).totals).toEqual([6, 7, 11, 15, 18, 25, 35, 41, 46]);
    expect(block.rowGroups?.values.slice(0, 3)).toEqual([
      "Life sciences",
      "Life sciences",
      "Life sciences",
    ]);
  });

  it("purpose.xlsx: a pivot export's two header rows and the legend below", () => {
    const { block, rowsOf } = readSheet("purpose.xlsx", "NZ.Stat export");
    const rows = rowsOf(block);
    expect(rows.header).toEqual([3, 4]);
    expect(joined(block)).toEqual([
      "Sex",
      "Age group (Life-stages)",
      "Highest qualification",
      "Sense of purpose / 0 - 6",
      "Sense of purpose / 7 - 10",
    ]);
    expect(rows.notes).toEqual([45, 46, 47, 48]);
    expect(rows.rows.at(-1)).toBe(44);
  });

  it("ott.xls: the title, four header rows and the period totals", () => {
    const { block, rowsOf } = readSheet("ott.xls", "Table 1");
    const rows = rowsOf(block);
    expect(block.title[0]).toContain("Overseas residents' visits to the UK by month");
    expect(rows.header).toEqual([3, 4, 5, 6]);
    expect(joined(block)).toContain("Area of residence / of which / European Union / NSA");
    expect(rows.totals).toEqual([50, 53, 56]);
    expect(rows.notes).toHaveLength(14);
  });

  it("environmental-economic-accounts.xlsx: 'All industries' in the middle and the total", () => {
    const { block, rowsOf } = readSheet("environmental-economic-accounts.xlsx", "Table 6.2");
    expect(rowsOf(block).totals).toEqual([11, 13]);
  });

  it("australian-industry.xlsx: the units row and the total block under its own heading", () => {
    const { block, rowsOf } = readSheet("australian-industry.xlsx", "Table_1");
    const rows = rowsOf(block);
    expect(rows.header).toEqual([5, 6]);
    expect(joined(block)[1]).toBe("Employment at end of June");
    expect(block.units?.slice(1, 3)).toEqual(["'000", "$m"]);
    expect(rows.totals).toEqual([224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234]);
    expect(rows.rows[0]).toBe(8);
  });

  it("newresconst.xlsx: annual and year-to-date totals of table 1b", () => {
    const { blocks, rowsOf } = readSheet("newresconst.xlsx", "Table 1 - Permits");
    expect(blocks).toHaveLength(2);
    expect(rowsOf(blocks[1] as TableBlock).totals).toEqual([36, 37, 40, 41]);
  });

  it("worked-examples.xlsx: headers repeated under titles, and small tables side by side", () => {
    const stacked = readSheet("worked-examples.xlsx", "pivot-header-within-data");
    expect(stacked.blocks.map((b) => b.title)).toEqual([
      ["Classics"],
      ["History"],
      ["Music"],
      ["Drama"],
    ]);
    expect(stacked.blocks.map((b) => stacked.rowsOf(b).header)).toEqual([[3], [9], [15], [21]]);
    const side = readSheet("worked-examples.xlsx", "small-multiples");
    expect(side.blocks.map((b) => b.title)).toEqual([
      ["Classics"],
      ["History"],
      ["Music"],
      ["Drama"],
    ]);
    expect(side.blocks.map(joined)).toEqual(Array(4).fill(["Name", "Score", "Grade"]));
  });
});
