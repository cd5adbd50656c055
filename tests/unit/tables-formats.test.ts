import { readFileSync } from "node:fs";
import { CFB, utils, write } from "@e965/xlsx";
import { beforeAll, describe, expect, it } from "vitest";
import { withDuckDb } from "../../tables/duckdb-scan.js";
import { decodeTable, detectEncoding } from "../../tables/encoding.js";
import { type LoadedTable, loadTable, loadTables, TableLoadError } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

async function loadError(load: () => Promise<unknown>): Promise<TableLoadError> {
  const error = await load().then(
    () => new Error("expected a TableLoadError"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TableLoadError);
  return error as TableLoadError;
}

function workbook(sheets: Record<string, unknown[][]>, bookType: "xlsx" | "biff8" = "xlsx") {
  const book = utils.book_new();
  for (const [name, rows] of Object.entries(sheets)) {
    utils.book_append_sheet(book, utils.aoa_to_sheet(rows), name);
  }
  return write(book, { type: "buffer", bookType }) as Buffer;
}

const dtypes = (t: LoadedTable) => t.table.columns.map((c) => `${c.name}:${c.dtype}`);

describe("Excel workbooks", () => {
  it("gives one table per non-empty sheet, named <file>_<sheet>, with dates and booleans", async () => {
    const file = writeFixture(
      dir,
      "Sales 2024.xlsx",
      workbook({
        North: [
          ["city", "revenue", "day", "open"],
          ["Oslo", 709, new Date(Date.UTC(2024, 0, 31)), true],
          ["Bergen", 285.5, new Date(Date.UTC(2024, 1, 1, 12, 30)), false],
        ],
        Empty: [],
        "South & East": [
          ["id", "note"],
          [1, "x"],
        ],
      }),
    );
    const tables = await loadTables({ path: file });
    expect(tables.map((t) => t.table.name)).toEqual([
      "sales_2024_north",
      "sales_2024_south___east",
    ]);
    const [north, south] = tables;
    if (!north || !south) throw new Error("two tables expected");
    expect(dtypes(north)).toEqual([
      "city:object",
      "revenue:float64",
      "day:datetime64[ns]",
      "open:bool",
    ]);
    expect((await readTable(north.table)).rows).toEqual([
      // One of the dates has a time of day: every one is written with its time, as pandas does.
      ["Oslo", "709", "2024-01-31 00:00:00", "true"],
      ["Bergen", "285.5", "2024-02-01 12:30:00", "false"],
    ]);
    expect(dtypes(south)).toEqual(["id:int64", "note:object"]);
    const one = await loadError(() => loadTable({ path: file }));
    expect(one.problem).toContain("holds 2 tables (sales_2024_north, sales_2024_south___east)");
  });

  it("names the only sheet's table after the file, and reads old .xls workbooks", async () => {
    const rows = [
      ["k", "v"],
      ["a", 1],
    ];
    const xlsx = await loadTable({ path: writeFixture(dir, "one.xlsx", workbook({ S: rows })) });
    const xls = await loadTable({
      path: writeFixture(dir, "old.xls", workbook({ S: rows }, "biff8")),
    });
    expect(xlsx.table.name).toBe("one");
    expect(xls.table.name).toBe("old");
    expect(xls.table.sha256).toBe(xlsx.table.sha256);
  });

  it("rejects a corrupt workbook in one line naming the file", async () => {
    const good = workbook({ S: [["a"], [1]] });
    const file = writeFixture(dir, "cut.xlsx", good.subarray(0, Math.floor(good.length / 2)));
    const error = await loadError(() => loadTables({ path: file }));
    expect(error.file).toBe(file);
    expect(error.message).toMatch(/^cannot load table .*cut\.xlsx: not a readable Excel workbook/);
    expect(error.message).not.toContain("\n");
  });

  it("rejects a password-protected workbook (an OLE container with an encrypted package)", async () => {
    // The layout Excel gives an encrypted .xlsx; the payload is not a real encryption.
    const container = CFB.utils.cfb_new();
    CFB.utils.cfb_add(container, "/EncryptionInfo", Buffer.alloc(64, 4));
    CFB.utils.cfb_add(container, "/EncryptedPackage", Buffer.alloc(4096, 7));
    const file = writeFixture(
      dir,
      "locked.xlsx",
      CFB.write(container, { type: "buffer" }) as Buffer,
    );
    const error = await loadError(() => loadTables({ path: file }));
    expect(error.file).toBe(file);
    expect(error.problem).toMatch(/^the workbook is password-protected; /);
  });

  it("rejects a workbook without data", async () => {
    const file = writeFixture(dir, "blank.xlsx", workbook({ A: [], B: [] }));
    const error = await loadError(() => loadTables({ path: file }));
    expect(error.problem).toBe('the workbook has no data in any sheet ("A", "B")');
  });
});

describe("Parquet files", () => {
  let parquet: string;
  beforeAll(async () => {
    parquet = `${dir}/measures.parquet`;
    await withDuckDb(async (c) => {
      await c.run(
        "COPY (SELECT i AS id, i * 1.5 AS x, 'n' || i AS label, i % 2 = 0 AS even, " +
          `CASE WHEN i = 3 THEN NULL ELSE i END AS maybe FROM range(5) t(i)) TO '${parquet}' (FORMAT parquet)`,
      );
    });
  });

  it("loads through DuckDB into a CSV artifact with pandas' dtypes", async () => {
    const { table, warnings } = await loadTable({ path: parquet });
    expect(warnings).toEqual([]);
    expect(table.name).toBe("measures");
    expect(table.rows).toBe(5);
    expect(table.uri).toMatch(/\.csv$/);
    expect(dtypes({ table, warnings })).toEqual([
      "id:int64",
      "x:float64",
      "label:object",
      "even:bool",
      "maybe:float64",
    ]);
    expect((await readTable(table)).rows[3]).toEqual(["3", "4.5", "n3", "false", ""]);
  });

  it("keeps the empty values of a one-column Parquet file as rows", async () => {
    const file = `${dir}/single.parquet`;
    await withDuckDb((c) =>
      c.run(
        `COPY (SELECT * FROM (VALUES ('a'), (NULL), ('c')) t(v)) TO '${file}' (FORMAT parquet)`,
      ),
    );
    const { table } = await loadTable({ path: file });
    expect(table.rows).toBe(3);
    expect((await readTable(table)).rows).toEqual([["a"], [""], ["c"]]);
  });

  it("rejects a truncated Parquet file in one line naming the file", async () => {
    const bytes = readFileSync(parquet);
    const file = writeFixture(dir, "cut.parquet", bytes.subarray(0, bytes.length - 40));
    const error = await loadError(() => loadTables({ path: file }));
    expect(error.file).toBe(file);
    expect(error.problem).toMatch(/^not a readable Parquet file \(truncated or corrupt\?\): /);
    expect(error.message).not.toContain("\n");
  });
});

describe("encodings", () => {
  const text = "name,city\nJosé,München\nFrançois,Zürich\n";

  it("detects Latin-1 / Windows-1252 text and says so", async () => {
    const file = writeFixture(dir, "latin.csv", Buffer.from(text, "latin1"));
    const { table, warnings } = await loadTable({ path: file });
    expect((await readTable(table)).rows).toEqual([
      ["José", "München"],
      ["François", "Zürich"],
    ]);
    expect(warnings).toEqual([
      `${file}: read as windows-1252 text (detected: it is not UTF-8); if letters look wrong, name the encoding (--encoding)`,
    ]);
  });

  it("tells Windows-1252 from ISO-8859-1 by the bytes 0x80-0x9F", async () => {
    // A regional statistics export: an en dash in a name, the euro sign in a unit.
    const cp1252 = Buffer.from(
      "Kreis;Einnahmen\nBaden\x96Baden;12,5 \x80\nMannheim;9,1 \x80\n",
      "latin1",
    );
    const decoded = decodeTable(cp1252, "kreise.csv");
    expect(decoded.encoding).toBe("windows-1252");
    expect(decoded.text).toBe("Kreis;Einnahmen\nBaden–Baden;12,5 €\nMannheim;9,1 €\n");
    const file = writeFixture(dir, "kreise.csv", cp1252);
    const { table } = await loadTable({ path: file });
    expect((await readTable(table)).rows.map((row) => row[0])).toEqual(["Baden–Baden", "Mannheim"]);
    // A byte Windows-1252 leaves undefined says the file is Latin-1 proper (a C1 control).
    expect(decodeTable(Buffer.from("a,b\nx\x81y,1\n", "latin1"), "c1.csv").encoding).toBe(
      "iso-8859-1",
    );
    expect(decodeTable(cp1252, "named.csv", "latin1").text).toContain("Baden–Baden");
  });

  it("detects Shift-JIS", () => {
    const cities =
      "都市,人口,地方\n東京,13960,関東\n大阪,8840,近畿\n名古屋,2320,中部\n札幌,1970,北海道\n福岡,1610,九州\n";
    const sjis = Buffer.from(
      "93738e732c906c8cfb2c926e95fb0a938c8b9e2c31333936302c8ad6938c0a91e58de32c383834302c8bdf8b450a" +
        "96bc8cc389ae2c323332302c928695940a8e4496792c313937302c966b8a4393b90a959f89aa2c313631302c8be38f420a",
      "hex",
    );
    expect(detectEncoding(sjis)).toBe("shift_jis");
    expect(decodeTable(sjis, "x.csv").text).toBe(cities);
  });

  it("uses a named encoding without a warning, from the source or the options", async () => {
    const file = writeFixture(dir, "named.csv", Buffer.from(text, "latin1"));
    const named = await loadTable({ path: file, encoding: "latin1" });
    expect(named.warnings).toEqual([]);
    expect((await readTable(named.table)).rows[0]).toEqual(["José", "München"]);
    const utf16 = writeFixture(dir, "wide.csv", Buffer.from(text, "utf16le"));
    const wide = await loadTable({ path: utf16 }, { encoding: "UTF-16LE" });
    expect(wide.table.sha256).toBe(named.table.sha256);
  });

  it("rejects an unknown encoding name and bytes the named encoding cannot decode", async () => {
    const file = writeFixture(dir, "enc.csv", Buffer.from(text, "latin1"));
    const unknown = await loadError(() => loadTable({ path: file, encoding: "klingon" }));
    expect(unknown.file).toBe(file);
    expect(unknown.problem).toMatch(/^unknown encoding "klingon" \(use a name such as utf-8/);
    const wrong = await loadError(() => loadTable({ path: file, encoding: "utf-8" }));
    expect(wrong.problem).toBe(
      "not valid utf-8 text (first bad byte on line 2); check the encoding",
    );
  });
});

describe("separators", () => {
  it.each([
    ["semicolons", "semi.csv", "city;pop;note\nOslo;709;a,b\nBergen;285;c\n", "semicolon"],
    ["pipes", "pipe.csv", "city|pop|note\nOslo|709|a,b\nBergen|285|c\n", "pipe"],
  ])("reads a .csv separated by %s, commas in values kept", async (_what, name, content, sep) => {
    const file = writeFixture(dir, name, content);
    const { table, warnings } = await loadTable({ path: file });
    expect((await readTable(table)).rows).toEqual([
      ["Oslo", "709", "a,b"],
      ["Bergen", "285", "c"],
    ]);
    expect(dtypes({ table, warnings })).toEqual(["city:object", "pop:int64", "note:object"]);
    expect(warnings[0]).toContain(`read as ${sep}-separated`);
  });
});
