import { mkdirSync, mkdtempSync, readFileSync, truncateSync } from "node:fs";
import { rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { TableRefSchema } from "../../blackboard/schemas.js";
import { inferDtype } from "../../tables/dtypes.js";
import { loadTable, MAX_TABLE_BYTES, TableLoadError } from "../../tables/load.js";
import { tableName, uniqueColumnNames } from "../../tables/names.js";
import { clearTableCache, readTable } from "../../tables/read.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

let home: string;
let dir: string;

beforeAll(() => {
  home = useTempHome();
  dir = fixtureDir();
});

function dtypes(columns: { name: string; dtype: string }[]): Record<string, string> {
  return Object.fromEntries(columns.map((c) => [c.name, c.dtype]));
}

/** Runs `load` and returns the TableLoadError it throws. */
async function loadError(load: () => Promise<unknown>): Promise<TableLoadError> {
  try {
    await load();
  } catch (error) {
    expect(error).toBeInstanceOf(TableLoadError);
    return error as TableLoadError;
  }
  throw new Error("expected a TableLoadError");
}

describe("loadTable: formats", () => {
  it("loads a CSV file into a stored canonical CSV and a valid TableRef", async () => {
    const file = writeFixture(
      dir,
      "Medals 2020.csv",
      "nation,gold,share\nJapan,27,0.5\nChina,38,\n",
    );
    const { table, warnings } = await loadTable({ path: file });
    expect(warnings).toEqual([]);
    expect(TableRefSchema.parse(table)).toEqual(table);
    expect(table.name).toBe("medals_2020");
    expect(table.id).toBe("table:medals_2020");
    expect(table.rows).toBe(2);
    expect(dtypes(table.columns)).toEqual({ nation: "object", gold: "int64", share: "float64" });
    expect(path.dirname(table.uri)).toBe(path.join(home, "artifacts"));
    expect(table.uri).toBe(path.join(home, "artifacts", `${table.sha256}.csv`));
    expect(readFileSync(table.uri, "utf8")).toBe("nation,gold,share\nJapan,27,0.5\nChina,38,\n");
  });

  it("loads a TSV file and reads quoted fields holding tabs", async () => {
    const file = writeFixture(dir, "elements.TSV", 'n\tsymbol\n1\tH\n2\t"He\tx"\n');
    const { table } = await loadTable({ path: file });
    expect(table.name).toBe("elements");
    expect(await readTable(table)).toEqual({
      columns: ["n", "symbol"],
      rows: [
        ["1", "H"],
        ["2", "He\tx"],
      ],
    });
  });

  it("loads JSON records, taking the union of keys in first-seen order", async () => {
    const file = writeFixture(
      dir,
      "people.json",
      JSON.stringify([
        { name: "Ada", born: 1815 },
        { name: "Alan", died: 1954, born: 1912, tags: ["math"], ok: true },
        { name: null },
      ]),
    );
    const { table } = await loadTable({ path: file });
    expect(table.columns.map((c) => c.name)).toEqual(["name", "born", "died", "tags", "ok"]);
    expect((await readTable(table)).rows).toEqual([
      ["Ada", "1815", "", "", ""],
      ["Alan", "1912", "1954", '["math"]', "true"],
      ["", "", "", "", ""],
    ]);
    expect(dtypes(table.columns)).toMatchObject({ born: "float64", died: "float64", ok: "object" });
  });

  it("loads JSON in {columns, data} form", async () => {
    const file = writeFixture(
      dir,
      "planets.json",
      JSON.stringify({
        columns: ["planet", "moons", "ringed"],
        data: [
          ["Earth", 1, false],
          ["Saturn", 146, true],
        ],
      }),
    );
    const { table } = await loadTable({ path: file });
    expect(table.rows).toBe(2);
    expect(dtypes(table.columns)).toEqual({ planet: "object", moons: "int64", ringed: "bool" });
    expect((await readTable(table)).rows[1]).toEqual(["Saturn", "146", "true"]);
  });

  it("loads inline rows, named from opts, the source, or `table`", async () => {
    const data = [["a", 1.5, null]];
    const columns = ["x", "y", "z"];
    const plain = await loadTable({ columns, data });
    expect(plain.table.name).toBe("table");
    expect((await readTable(plain.table)).rows).toEqual([["a", "1.5", ""]]);
    expect((await loadTable({ name: "Sales-Q1", columns, data })).table.name).toBe("sales_q1");
    const renamed = await loadTable({ name: "ignored", columns, data }, { name: "2024 sales" });
    expect(renamed.table.name).toBe("t_2024_sales");
    expect(renamed.table.id).toBe("table:t_2024_sales");
  });

  it("keeps commas, quotes and line breaks inside quoted fields, and CRLF line ends", async () => {
    const csv = 'city,note\r\n"Paris, FR","said ""hi""\r\nthen left"\r\nRome,plain\r\n';
    const file = writeFixture(dir, "quoted.csv", csv);
    const { table } = await loadTable({ path: file });
    const data = await readTable(table);
    expect(data.rows).toEqual([
      ["Paris, FR", 'said "hi"\r\nthen left'],
      ["Rome", "plain"],
    ]);
    expect(readFileSync(table.uri, "utf8")).toBe(
      'city,note\n"Paris, FR","said ""hi""\r\nthen left"\nRome,plain\n',
    );
  });

  it("strips a UTF-8 byte order mark", async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from("année,ok\n2020,1\n"),
    ]);
    const { table } = await loadTable({ path: writeFixture(dir, "bom.csv", bytes) });
    expect(table.columns[0]?.name).toBe("année");
  });

  it.each([
    [
      "little-endian",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("city,pop\nOslo,709\n", "utf16le")]),
    ],
    [
      "big-endian",
      Buffer.concat([
        Buffer.from([0xfe, 0xff]),
        Buffer.from("city,pop\nOslo,709\n", "utf16le").swap16(),
      ]),
    ],
  ])("reads UTF-16 %s text with a byte-order mark", async (endian, bytes) => {
    const { table, warnings } = await loadTable({
      path: writeFixture(dir, `utf16-${endian}.csv`, bytes),
    });
    expect(warnings).toEqual([]);
    expect(await readTable(table)).toEqual({ columns: ["city", "pop"], rows: [["Oslo", "709"]] });
  });

  it.each([
    ["semicolon", 'city;pop;note\nOslo;709;"a, b"\nBergen;291;\n'],
    ["tab", "city\tpop\tnote\nOslo\t709\ta, b\nBergen\t291\t\n"],
    ["pipe", "city|pop|note\nOslo|709|a, b\nBergen|291|\n"],
  ])("reads a .csv file separated by %ss, and says so", async (name, text) => {
    const file = writeFixture(dir, `${name}.csv`, text);
    const { table, warnings } = await loadTable({ path: file });
    expect(await readTable(table)).toEqual({
      columns: ["city", "pop", "note"],
      rows: [
        ["Oslo", "709", "a, b"],
        ["Bergen", "291", ""],
      ],
    });
    expect(warnings).toEqual([
      `${file}: read as ${name}-separated: a .csv file, but its lines split evenly on ${name}s, not commas`,
    ]);
  });

  it("keeps commas when they split the lines evenly, whatever else the values hold", async () => {
    const file = writeFixture(dir, "commas.csv", "name,motto\nA;B,x|y\nC;D,z|w\n");
    const { table, warnings } = await loadTable({ path: file });
    expect(warnings).toEqual([]);
    expect((await readTable(table)).columns).toEqual(["name", "motto"]);
  });

  it("warns loudly when a one-column table's name holds a separator", async () => {
    const file = writeFixture(dir, "uneven.csv", "city;pop\nOslo;709;x\nBergen\n");
    const { table, warnings } = await loadTable({ path: file });
    expect(table.columns.map((c) => c.name)).toEqual(["city;pop"]);
    expect(warnings).toEqual([
      `${file}: read as one column named "city;pop", which holds semicolons: its lines do not split evenly on any separator; check the file`,
    ]);
  });

  it("accepts a header with no rows as an empty table", async () => {
    const { table } = await loadTable({ path: writeFixture(dir, "empty-rows.csv", "a,b\n") });
    expect(table.rows).toBe(0);
    expect(dtypes(table.columns)).toEqual({ a: "object", b: "object" });
    expect(await readTable(table)).toEqual({ columns: ["a", "b"], rows: [] });
  });

  it("skips blank lines but keeps an empty value of a one-column table", async () => {
    const { table } = await loadTable({ columns: ["only"], data: [["x"], [""], [null]] });
    expect(table.rows).toBe(3);
    expect(readFileSync(table.uri, "utf8")).toBe('only\nx\n""\n""\n');
    clearTableCache();
    expect((await readTable(table)).rows).toEqual([["x"], [""], [""]]);
    const file = writeFixture(dir, "blank-lines.csv", "a,b\n\n1,2\n\n\n3,4");
    expect((await loadTable({ path: file })).table.rows).toBe(2);
  });
});

describe("loadTable: content addressing", () => {
  it("gives the same content the same sha256 and uri, whatever the source format", async () => {
    const csv = writeFixture(dir, "same.csv", "k,v\nx,1\ny,2\n");
    const tsv = writeFixture(dir, "same.tsv", "k\tv\r\nx\t1\r\ny\t2");
    const json = writeFixture(
      dir,
      "same.json",
      JSON.stringify([
        { k: "x", v: 1 },
        { k: "y", v: 2 },
      ]),
    );
    const inline = {
      columns: ["k", "v"],
      data: [
        ["x", 1],
        ["y", 2],
      ],
    };
    const refs = [];
    for (const file of [csv, tsv, json]) refs.push(await loadTable({ path: file }));
    refs.push(await loadTable(inline));
    const shas = new Set(refs.map((r) => r.table.sha256));
    const uris = new Set(refs.map((r) => r.table.uri));
    expect(shas.size).toBe(1);
    expect(uris.size).toBe(1);
    expect(readFileSync(refs[0]?.table.uri ?? "", "utf8")).toBe("k,v\nx,1\ny,2\n");
    const other = await loadTable({
      columns: ["k", "v"],
      data: [
        ["x", 1],
        ["y", 3],
      ],
    });
    expect(other.table.sha256).not.toBe(refs[0]?.table.sha256);
  });
});

describe("loadTable: dtype inference", () => {
  const rows = (values: string[]) => values.map((v) => [v]);
  it.each([
    [["1", "-2", "+3"], "int64"],
    [["1", "", "3"], "float64"],
    [["1", "NA", "3"], "float64"],
    [["1.5", "2", "1e3", ".5", "-inf"], "float64"],
    [["", ""], "float64"],
    [["True", "false", "TRUE"], "bool"],
    [["True", ""], "object"],
    [["true", "1"], "object"],
    [["1", "x"], "object"],
    [["1,000"], "object"],
    [["9223372036854775807"], "int64"],
    [["9223372036854775808"], "uint64"],
    [["-9223372036854775809"], "object"],
  ])("%j -> %s", (values, dtype) => {
    expect(inferDtype(rows(values), 0)).toBe(dtype);
  });
  it("is object for every column of a table with no rows", () => {
    expect(inferDtype([], 0)).toBe("object");
  });
});

describe("loadTable: column and table names", () => {
  it("renames empty and repeated column names, with a warning naming the file", async () => {
    const file = writeFixture(dir, "dupes.csv", "year,,year,year_2,year, \n1,2,3,4,5,6\n");
    const { table, warnings } = await loadTable({ path: file });
    expect(table.columns.map((c) => c.name)).toEqual([
      "year",
      "column_2",
      "year_3",
      "year_2",
      "year_4",
      "column_6",
    ]);
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toBe(`${file}: column 2 has no name; named it "column_2"`);
    expect(warnings[1]).toBe(
      `${file}: column 3 repeats the name "year" of column 1; renamed it "year_3"`,
    );
    expect((await readTable(table)).columns).toEqual(table.columns.map((c) => c.name));
  });

  it("never names an unnamed column like an existing one", () => {
    expect(uniqueColumnNames(["", "column_1"]).names).toEqual(["column_1_2", "column_1"]);
  });

  it.each([
    ["Sales Q1", "sales_q1"],
    ["2020-medals", "t_2020_medals"],
    ["pd", "pd_table"],
    ["class", "class_table"],
    ["---", "table"],
    ["Éte", "_te"],
  ])("table name %j -> %j", (raw, name) => {
    expect(tableName(raw)).toBe(name);
  });
});

describe("loadTable: bad input", () => {
  it.each([
    ["a missing file", () => path.join(dir, "nope.csv"), "no such file"],
    [
      "a directory",
      () => {
        const sub = path.join(dir, "folder.csv");
        mkdirSync(sub, { recursive: true });
        return sub;
      },
      "it is a directory, not a file",
    ],
    ["an empty file", () => writeFixture(dir, "zero.csv", ""), "the file is empty (0 bytes)"],
    [
      "a file of whitespace",
      () => writeFixture(dir, "blank.json", " \n\t\n"),
      "the file is empty (only whitespace)",
    ],
    [
      "an unsupported extension",
      () => writeFixture(dir, "sheet.ODS", "PK"),
      "unsupported format .ods (supported: .csv, .tsv, .json, .xlsx, .xlsm, .xls, .parquet)",
    ],
    [
      "a file without extension",
      () => writeFixture(dir, "README", "a,b"),
      "unsupported format (no file extension) (supported: .csv, .tsv, .json, .xlsx, .xlsm, .xls, .parquet)",
    ],
    [
      "a row longer than the header",
      () => writeFixture(dir, "ragged.csv", 'a,b,c\n1,2,3\n"x\ny",2,3\n\n4,5,6,7\n'),
      "ragged rows: line 6 has 4 fields, the header has 3",
    ],
    [
      "a row shorter than the header",
      () => writeFixture(dir, "short.tsv", "a\tb\tc\r\n1\t2\t3\r\n4\r\n"),
      "ragged rows: line 3 has 1 field, the header has 3",
    ],
    [
      "an unclosed quote",
      () => writeFixture(dir, "unclosed.csv", 'a,b\n1,2\n3,"open\n4,5\n'),
      "a quoted field opened on line 3 is never closed",
    ],
    [
      "UTF-8 with a broken byte (no legacy encoding is guessed for it)",
      () =>
        writeFixture(
          dir,
          "broken-utf8.csv",
          Buffer.concat([
            Buffer.from("a\ncafé\nnaïve\nZürich\nœuvre\n"),
            Buffer.from([0xff, 0x0a]),
          ]),
        ),
      "not valid UTF-8 text (first bad byte on line 6) and no other encoding fits; save the file as UTF-8 or name its encoding (--encoding)",
    ],
    [
      "a binary file (an Excel workbook named .csv)",
      () => writeFixture(dir, "book.csv", Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06])),
      "this looks like a ZIP archive (an Excel .xlsx workbook is one), not a text table (it starts with bytes 50 4b 03 04); give a CSV, TSV or JSON file, or name the file by its format (.xlsx, .parquet)",
    ],
    [
      "bytes with NULs in them",
      () =>
        writeFixture(
          dir,
          "blob.csv",
          Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0x00, 0x01, 0x02, 0xff]),
        ),
      "this looks like a binary file, not a text table (it starts with bytes 61 2c 62 0a); give a CSV, TSV or JSON file, or name the file by its format (.xlsx, .parquet)",
    ],
    [
      "UTF-16 without a byte-order mark",
      () => writeFixture(dir, "wide.csv", Buffer.from("a,b\n1,2\n", "utf16le")),
      "UTF-16 text without a byte-order mark; save the file as UTF-8 (or as UTF-16 with a BOM)",
    ],
    [
      "a JSON scalar",
      () => writeFixture(dir, "scalar.json", "42"),
      'unusable JSON shape: expected a list of records or an object with "columns" and "data", got a number',
    ],
    [
      "a JSON object of another shape",
      () => writeFixture(dir, "other.json", '{"rows": []}'),
      'unusable JSON shape: expected a list of records or an object with "columns" and "data", got an object with keys rows',
    ],
    [
      "a JSON list of non-records",
      () => writeFixture(dir, "list.json", '[{"a": 1}, [1, 2]]'),
      "unusable JSON shape: item 2 of the array is a list, not a record (an object)",
    ],
    [
      "an empty JSON list",
      () => writeFixture(dir, "nothing.json", "[]"),
      "unusable JSON shape: the array has no records",
    ],
    [
      "ragged {columns, data} JSON",
      () => writeFixture(dir, "ragged.json", '{"columns": ["a", "b"], "data": [[1, 2], [3]]}'),
      "ragged rows: data row 2 has 1 value, there are 2 columns",
    ],
    [
      "JSON data that is not a list of rows",
      () => writeFixture(dir, "rows.json", '{"columns": ["a"], "data": [{"a": 1}]}'),
      'unusable JSON shape: "data" row 1 is an object, not a list',
    ],
  ])("rejects %s", async (_what, makeFile, problem) => {
    const file = makeFile();
    const error = await loadError(() => loadTable({ path: file }));
    expect(error.file).toBe(file);
    expect(error.problem).toBe(problem);
    expect(error.message).toBe(`cannot load table ${file}: ${problem}`);
  });

  it("rejects files above the size limit before reading them", async () => {
    const file = writeFixture(dir, "huge.csv", "a,b\n");
    truncateSync(file, MAX_TABLE_BYTES + 1); // sparse: no real 200 MB written
    const error = await loadError(() => loadTable({ path: file }));
    expect(error.file).toBe(file);
    expect(error.problem).toMatch(/^the file is 200\.0 MB; files above 200 MB are read only as /);
    expect(error.problem).toContain("clean comma-separated UTF-8 CSV or as Parquet");
  });

  it("rejects invalid JSON with the parser's message", async () => {
    const file = writeFixture(dir, "broken.json", '{"columns": ["a"], "data": [[1]');
    const error = await loadError(() => loadTable({ path: file }));
    expect(error.file).toBe(file);
    expect(error.problem).toMatch(/^invalid JSON: .+/);
    expect(error.problem.length).toBeGreaterThan("invalid JSON: ".length + 5);
  });

  it("rejects bad inline tables as <inline>", async () => {
    const ragged = await loadError(() => loadTable({ columns: ["a", "b"], data: [[1, 2, 3]] }));
    expect(ragged.file).toBe("<inline>");
    expect(ragged.problem).toBe("ragged rows: data row 1 has 3 values, there are 2 columns");
    expect(ragged.message).toBe(
      "cannot load table <inline>: ragged rows: data row 1 has 3 values, there are 2 columns",
    );
    const empty = await loadError(() => loadTable({ columns: [], data: [] }));
    expect(empty.problem).toBe('"columns" is empty, so the table has no columns');
  });
});

describe("readTable", () => {
  it("round-trips awkward values through the artifact, also past the cache", async () => {
    const columns = ["text", "n"];
    const data = [
      ['comma, "quote"', "1"],
      ["line\nbreak", ""],
      ["  spaced  ", "-0"],
      ["pipe | and ümlaut 🙂", "3"],
    ];
    const { table } = await loadTable({ columns, data });
    expect(await readTable(table)).toEqual({ columns, rows: data });
    clearTableCache();
    expect(await readTable(table)).toEqual({ columns, rows: data });
  });

  it("refuses an artifact whose bytes do not match the sha256", async () => {
    const { table } = await loadTable({ columns: ["a"], data: [["unique-for-hash-test"]] });
    const forged = { ...table, sha256: "0".repeat(64) };
    const error = await loadError(() => readTable(forged));
    expect(error.file).toBe(table.uri);
    expect(error.problem).toContain("does not match sha256");
  });

  it("says when the artifact is gone", async () => {
    clearTableCache();
    const { table } = await loadTable({ columns: ["a"], data: [["x"]] });
    const gone = { ...table, uri: path.join(home, "artifacts", "missing.csv") };
    const error = await loadError(() => readTable(gone));
    expect(error.problem).toBe("artifact missing or unreadable: no such file");
  });
});

describe("loadTable reuse", () => {
  it("reuses an unchanged file's load and reloads after the file changes", async () => {
    useTempHome();
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "tm-reuse-")), "t.csv");
    await writeFile(file, "a,b\n1,2\n");
    const first = await loadTable({ path: file });
    const second = await loadTable({ path: file });
    expect(second.table).toBe(first.table);
    await writeFile(file, "a,b\n1,2\n3,4\n");
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    const changed = await loadTable({ path: file });
    expect(changed.table.rows).toBe(2);
    await rm(changed.table.uri);
    const recreated = await loadTable({ path: file });
    expect(recreated.table.uri).toBe(changed.table.uri);
    expect(recreated.table).not.toBe(changed.table);
  });
});
