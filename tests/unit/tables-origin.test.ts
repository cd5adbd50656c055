import { utils, write } from "@e965/xlsx";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_ROW_RUNS, type TableRef, TableRefSchema } from "../../blackboard/schemas.js";
import {
  cellAddress,
  cellsAddress,
  columnAddress,
  headerAddress,
  rowAddress,
  rowPlacesText,
  sheetReference,
} from "../../tables/cell-address.js";
import { parseDelimited } from "../../tables/csv.js";
import { withDuckDb } from "../../tables/duckdb-scan.js";
import { RecordLines } from "../../tables/fast-csv.js";
import { loadTable, loadTables } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import { placeOf, rowPlaces } from "../../tables/row-places.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

/** Loads one table and checks that its reference, origin included, is valid. */
async function load(file: string, opts: Parameters<typeof loadTable>[1] = {}): Promise<TableRef> {
  const { table } = await loadTable({ path: file }, opts);
  expect(TableRefSchema.parse(table)).toEqual(table);
  return table;
}

describe("origin: text files", () => {
  it("records the header line and the line of every CSV row, across a quoted line break and a blank line", async () => {
    const file = writeFixture(
      dir,
      "medals.csv",
      'nation,gold,note\nUnited States,39,"won\nthe most"\n\nChina,38,x\nJapan,27,y\n',
    );
    const table = await load(file);
    expect(table.origin).toEqual({
      format: "csv",
      file: "medals.csv",
      header: 1,
      // Row 0 spans lines 2-3, line 4 is blank: rows 1 and 2 are on lines 5 and 6.
      lines: {
        runs: [
          [0, 2],
          [1, 5],
        ],
      },
    });
    expect(rowAddress(table, 0)).toBe("medals.csv line 2");
    expect(cellAddress(table, 1, "gold")).toBe("medals.csv line 5, column gold");
    expect(cellAddress(table, 2, "gold")).toBe("medals.csv line 6, column gold");
    expect(headerAddress(table, "gold")).toBe("medals.csv line 1, column gold");
    expect(columnAddress(table, "gold")).toBe("column gold of medals.csv");
    expect(cellsAddress(table, [0, 1, 2], "gold")).toBe("medals.csv lines 2, 5-6, column gold");
  });

  it("keeps one run when every row is one line, with blank lines above the header", async () => {
    const table = await load(writeFixture(dir, "plain.csv", "\n\na,b\n1,2\n3,4\n5,6\n"));
    expect(table.origin).toEqual({
      format: "csv",
      file: "plain.csv",
      header: 3,
      lines: { runs: [[0, 4]] },
    });
    expect(cellAddress(table, 2, "b")).toBe("plain.csv line 6, column b");
  });

  it("records TSV lines, CRLF line ends counted once", async () => {
    const table = await load(
      writeFixture(dir, "elements.tsv", 'n\tsymbol\r\n1\t"H\r\nx"\r\n2\tHe\r\n'),
    );
    expect(table.origin).toEqual({
      format: "tsv",
      file: "elements.tsv",
      header: 1,
      lines: {
        runs: [
          [0, 2],
          [1, 4],
        ],
      },
    });
    expect(cellAddress(table, 1, "symbol")).toBe("elements.tsv line 4, column symbol");
  });

  it("records lines on the large-CSV path as the full reader does", async () => {
    const text = 'id,name\n1,"a\nb"\n\n2,"say ""hi""\r\n"\r\n3,c\n';
    const file = writeFixture(dir, "fast.csv", text);
    const fast = await load(file, { fastCsvBytes: 0 });
    const slow = await load(writeFixture(dir, "slow.csv", text), { fastCsvBytes: 1e9 });
    expect(fast.origin).toEqual({ ...slow.origin, file: "fast.csv" });
    expect(rowAddress(fast, 2)).toBe("fast.csv line 7");
  });

  it("follows records chunk by chunk exactly as parseDelimited reads them", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ["a", ",", '"', "\n", "\r", "\r\n"];
    let compared = 0;
    for (let t = 0; t < 3000; t++) {
      const text = Array.from({ length: random(16) }, () => alphabet[random(6)]).join("");
      let records: ReturnType<typeof parseDelimited>;
      try {
        records = parseDelimited(text, ",");
      } catch {
        continue;
      }
      const bytes = Buffer.from(text);
      const followed = new RecordLines();
      for (let at = 0; at < bytes.length; ) {
        const next = at + 1 + random(3);
        followed.feed(bytes.subarray(at, next));
        at = next;
      }
      const places = followed.rows.places();
      const lines = Array.from({ length: followed.rows.count }, (_, r) => placeOf(places, r));
      expect(lines, JSON.stringify(text)).toEqual(records.slice(1).map((r) => r.line));
      if (records[0]) expect(followed.header).toBe(records[0].line);
      compared++;
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it("keeps at most MAX_ROW_RUNS runs; rows past them are addressed as data rows", async () => {
    const rows = Array.from({ length: MAX_ROW_RUNS + 20 }, (_, i) => `${i},"x\ny"`);
    const table = await load(writeFixture(dir, "wrapped.csv", `id,text\n${rows.join("\n")}\n`));
    const origin = table.origin;
    if (origin?.format !== "csv" || !origin.lines) throw new Error("csv lines expected");
    expect(origin.lines.runs).toHaveLength(MAX_ROW_RUNS);
    expect(origin.lines.known).toBe(MAX_ROW_RUNS);
    expect(rowAddress(table, MAX_ROW_RUNS - 1)).toBe(`wrapped.csv line ${2 * MAX_ROW_RUNS}`);
    expect(cellAddress(table, MAX_ROW_RUNS + 3, "id")).toBe(
      `wrapped.csv data row ${MAX_ROW_RUNS + 4}, column id`,
    );
  });

  it("names JSON records and {columns, data} rows, with the array's pointer", async () => {
    const records = await load(
      writeFixture(
        dir,
        "planets.json",
        JSON.stringify([
          { name: "Mercury", mass: 0.33 },
          { name: "Venus", mass: 4.87 },
          { name: "Earth", mass: 5.97 },
        ]),
      ),
    );
    expect(records.origin).toEqual({
      format: "json",
      file: "planets.json",
      pointer: "",
      shape: "records",
    });
    expect(cellAddress(records, 2, "mass")).toBe("planets.json record 3, field mass");
    expect(rowAddress(records, 0)).toBe("planets.json record 1");
    const rows = await load(
      writeFixture(dir, "grid.json", JSON.stringify({ columns: ["k", "v"], data: [["a", 1]] })),
    );
    expect(rows.origin).toEqual({
      format: "json",
      file: "grid.json",
      pointer: "/data",
      shape: "rows",
    });
    expect(cellAddress(rows, 0, "v")).toBe("grid.json record 1, column v");
  });

  it("numbers inline rows and Parquet rows from 1", async () => {
    const { table } = await loadTable({
      name: "t",
      columns: ["a", "b"],
      data: [
        [1, 2],
        [3, 4],
      ],
    });
    expect(table.origin).toEqual({ format: "inline" });
    expect(rowAddress(table, 1)).toBe("row 2 of table t");
    expect(cellAddress(table, 1, "b")).toBe("row 2 of table t, column b");
    const parquet = `${dir}/measures.parquet`;
    await withDuckDb((c) =>
      c.run(`COPY (SELECT i AS id FROM range(5) t(i)) TO '${parquet}' (FORMAT parquet)`),
    );
    const fromParquet = await load(parquet);
    expect(fromParquet.origin).toEqual({ format: "parquet", file: "measures.parquet" });
    expect(cellAddress(fromParquet, 3, "id")).toBe("measures.parquet row 4, column id");
  });

  it("names the file it was loaded from when another file with the same content was loaded first", async () => {
    const text = "a,b\n1,2\n";
    await load(writeFixture(dir, "first.csv", text), { name: "same" });
    const second = await load(writeFixture(dir, "second.csv", text), { name: "same" });
    expect(rowAddress(second, 0)).toBe("second.csv line 2");
  });

  it("addresses a table without an origin (one the code produced) by its name", () => {
    const produced = {
      id: "a1:top",
      name: "top",
      uri: "/x.csv",
      sha256: "0".repeat(64),
      rows: 3,
      columns: [{ name: "gold", dtype: "int64" }],
    };
    expect(cellAddress(produced, 0, "gold")).toBe("row 1 of table top, column gold");
  });
});

function workbook(sheets: Record<string, { rows: unknown[][]; at?: string }>): Buffer {
  const book = utils.book_new();
  for (const [name, { rows, at }] of Object.entries(sheets)) {
    const sheet = at
      ? utils.sheet_add_aoa(utils.aoa_to_sheet([]), rows, { origin: at })
      : utils.aoa_to_sheet(rows);
    // aoa_to_sheet stretches the used range to A1; Excel's starts at the first used cell.
    if (at) {
      const range = utils.decode_range(sheet["!ref"] ?? "A1");
      range.s = utils.decode_cell(at);
      sheet["!ref"] = utils.encode_range(range);
    }
    utils.book_append_sheet(book, sheet, name);
  }
  return write(book, { type: "buffer", bookType: "xlsx" }) as Buffer;
}

describe("origin: workbooks", () => {
  it("gives A1 addresses past title rows, blank rows and the used range's offset, per sheet", async () => {
    const file = writeFixture(
      dir,
      "report.xlsx",
      workbook({
        "P&L FY2024": {
          rows: [
            ["P&L FY2024"],
            ["in thousands of euros"],
            [],
            [null, "line", 2023, 2024],
            [null, "Revenue", 910, 1020],
            [],
            [null, "Costs", 600, 640],
            [null, "Profit", 310, 380],
          ],
        },
        Sheet2: {
          rows: [
            ["city", "people"],
            ["Oslo", 709],
            ["Bergen", 285],
          ],
          at: "C5",
        },
      }),
    );
    const tables = await loadTables({ path: file });
    const [pnl, cities] = tables.map((t) => t.table);
    if (!pnl || !cities) throw new Error("two tables expected");
    expect(pnl.reading?.title).toEqual(["P&L FY2024", "in thousands of euros"]);
    expect(pnl.columns.map((c) => c.name)).toEqual(["line", "2023", "2024"]);
    expect((await readTable(pnl)).rows[0]).toEqual(["Revenue", "910", "1020"]);
    expect(pnl.origin).toEqual({
      format: "xlsx",
      file: "report.xlsx",
      sheet: "P&L FY2024",
      header: 4,
      rows: {
        runs: [
          [0, 5],
          [1, 7],
        ],
      },
      columns: ["B", "C", "D"],
    });
    expect(cellAddress(pnl, 0, "2024")).toBe("'P&L FY2024'!D5");
    expect(cellAddress(pnl, 2, "2023")).toBe("'P&L FY2024'!C8");
    expect(rowAddress(pnl, 1)).toBe("'P&L FY2024'!B7:D7");
    expect(headerAddress(pnl, "2024")).toBe("'P&L FY2024'!D4");
    expect(columnAddress(pnl, "line")).toBe("'P&L FY2024'!B:B");
    expect(cellsAddress(pnl, [2, 0, 1], "2024")).toBe("'P&L FY2024'!D5, D7:D8");
    expect(rowPlacesText(pnl, [0, 1, 2])).toBe("sheet rows 5, 7-8");
    expect(rowPlacesText(pnl, [0, 1, 2], 2)).toBe("sheet rows 5, 7 and 1 more");

    expect(cities.origin).toMatchObject({ sheet: "Sheet2", header: 5, columns: ["C", "D"] });
    expect(cellAddress(cities, 1, "people")).toBe("Sheet2!D7");
    expect(rowAddress(cities, 0)).toBe("Sheet2!C6:D6");
  });

  it("keeps a numeric first row as data: no title is skipped above a row of numbers", async () => {
    const file = writeFixture(
      dir,
      "numbers.xlsx",
      workbook({
        Data: {
          rows: [
            ["id", null],
            [1, 2],
            [3, 4],
          ],
        },
      }),
    );
    const table = await load(file);
    expect(table.columns.map((c) => c.name)).toEqual(["id", "column_2"]);
    expect(cellAddress(table, 0, "id")).toBe("Data!A2");
  });

  it("quotes sheet names as Excel does", () => {
    expect(sheetReference("Sheet1")).toBe("Sheet1");
    expect(sheetReference("Data_2024.v2")).toBe("Data_2024.v2");
    expect(sheetReference("P&L FY2024")).toBe("'P&L FY2024'");
    expect(sheetReference("Bob's")).toBe("'Bob''s'");
    expect(sheetReference("2024")).toBe("'2024'");
    expect(sheetReference("Q1")).toBe("'Q1'");
    expect(sheetReference("R1C1")).toBe("'R1C1'");
  });
});

describe("row places", () => {
  it("stores runs and finds each row's place", () => {
    const places = rowPlaces([2, 3, 4, 7, 8, 12]);
    expect(places).toEqual({
      runs: [
        [0, 2],
        [3, 7],
        [5, 12],
      ],
    });
    expect([0, 1, 2, 3, 4, 5].map((r) => placeOf(places, r))).toEqual([2, 3, 4, 7, 8, 12]);
    expect(placeOf(places, -1)).toBeNull();
    expect(rowPlaces([1, 5, 9], 2)).toEqual({
      runs: [
        [0, 1],
        [1, 5],
      ],
      known: 2,
    });
  });
});
