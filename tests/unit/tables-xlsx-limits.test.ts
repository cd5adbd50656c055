import { crc32, deflateRawSync } from "node:zlib";
import { CFB, utils, type WorkBook, write } from "@e965/xlsx";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadTables, TableLoadError } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import {
  CellTagCounter,
  checkSheetRanges,
  checkWorkbookZip,
  DEFAULT_XLSX_MAX_BYTES,
  DEFAULT_XLSX_MAX_CELLS,
  workbookLimits,
} from "../../tables/xlsx-limits.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";
import { MAIN, SHEET_PART, WORKBOOK_SKELETON } from "../support/workbook-xml.js";

// --- a small zip writer, to make workbooks whose parts and headers say what a test needs -----

interface Part {
  name: string;
  content: string | Buffer;
  /** 8 (deflate, the default) or 0 (stored). */
  method?: 0 | 8;
  /** The unzipped size the headers claim, when it is to be a lie. */
  claimedSize?: number;
  /** The compressed bytes, when they are to be something else than `content` deflated. */
  compressed?: Buffer;
  /** Sizes after the data (flag 8, as streaming writers do) rather than in the local header. */
  descriptor?: boolean;
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function zip(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const content = Buffer.from(part.content);
    const method = part.method ?? 8;
    const data = part.compressed ?? (method === 8 ? deflateRawSync(content) : content);
    const size = part.claimedSize ?? content.length;
    const crc = crc32(content);
    const name = Buffer.from(part.name);
    const flags = part.descriptor ? 8 : 0;
    const sizes = [u32(crc), u32(data.length), u32(size)];
    const local = Buffer.concat([
      u32(0x04034b50),
      u16(20),
      u16(flags),
      u16(method),
      u32(0),
      ...(part.descriptor ? [u32(0), u32(0), u32(0)] : sizes),
      u16(name.length),
      u16(0),
      name,
    ]);
    const after = part.descriptor ? Buffer.concat([u32(0x08074b50), ...sizes]) : Buffer.alloc(0);
    central.push(
      Buffer.concat([
        u32(0x02014b50),
        u16(20),
        u16(20),
        u16(flags),
        u16(method),
        u32(0),
        ...sizes,
        u16(name.length),
        u16(0),
        u16(0),
        u16(0),
        u16(0),
        u32(0),
        u32(offset),
        name,
      ]),
    );
    chunks.push(local, data, after);
    offset += local.length + data.length + after.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.concat([
    u32(0x06054b50),
    u16(0),
    u16(0),
    u16(parts.length),
    u16(parts.length),
    u32(directory.length),
    u32(offset),
    u16(0),
  ]);
  return Buffer.concat([...chunks, directory, end]);
}

/** The parts of a one-sheet workbook ("Data"), the sheet's part first changed by `sheet`. */
function workbookParts(sheetXml: string, sheet: Partial<Part> = {}): Part[] {
  return [
    ...WORKBOOK_SKELETON.map(({ name, xml }) => ({ name, content: xml })),
    { name: SHEET_PART, content: sheetXml, ...sheet },
  ];
}

const text = (ref: string, value: string) =>
  `<c r="${ref}" t="inlineStr"><is><t>${value}</t></is></c>`;

/** A sheet of `city, n` and two rows; `tail` goes after the sheet data, `head` before it. */
function citySheet({ head = "", tail = "" } = {}): string {
  const rows = [
    `<row r="1">${text("A1", "city")}${text("B1", "n")}</row>`,
    `<row r="2">${text("A2", "Oslo")}<c r="B2"><v>1</v></c></row>`,
    `<row r="3">${text("A3", "Bergen")}<c r="B3"><v>2</v></c></row>`,
  ];
  return `<worksheet xmlns="${MAIN}">${head}<sheetData>${rows.join("")}</sheetData>${tail}</worksheet>`;
}

/** A sheet of `rows` rows of `columns` numeric cells each, without addresses. */
function gridSheet(rows: number, columns: number): string {
  const row = `<row>${"<c><v>1</v></c>".repeat(columns)}</row>`;
  return `<worksheet xmlns="${MAIN}"><sheetData>${row.repeat(rows)}</sheetData></worksheet>`;
}

/** About `bytes` of XML comment: padding a reader must still unzip and look through. */
const padding = (bytes: number) => `<!--${"x".repeat(bytes)}-->`;

// --- the tests ---------------------------------------------------------------------------

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

async function refusal(file: string): Promise<TableLoadError> {
  const error = await loadTables({ path: file }).then(
    () => new Error("expected a TableLoadError"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TableLoadError);
  expect((error as TableLoadError).file).toBe(file);
  expect((error as Error).message).not.toContain("\n");
  return error as TableLoadError;
}

async function rowsOf(file: string): Promise<string[][]> {
  const [loaded] = await loadTables({ path: file });
  if (!loaded) throw new Error("no table");
  return (await readTable(loaded.table)).rows;
}

describe("workbooks that unzip to too much", () => {
  it("refuses one over TABLEMINDS_XLSX_MAX_BYTES in one line naming the file, reads it under", async () => {
    const bytes = zip(workbookParts(citySheet({ tail: padding(300_000) })));
    expect(bytes.length).toBeLessThan(5_000); // 300 KB of XML in a few KB of zip
    const bomb = writeFixture(dir, "padded.xlsx", bytes);
    vi.stubEnv("TABLEMINDS_XLSX_MAX_BYTES", String(200 * 1024));
    const error = await refusal(bomb);
    expect(error.message).toBe(
      `cannot load table ${bomb}: refused: it expands to more than 200 KB when unzipped ` +
        "(passed in xl/worksheets/sheet1.xml; a zip bomb?); raise TABLEMINDS_XLSX_MAX_BYTES to read it",
    );
    // The same bytes under a name not loaded before, with the limit raised: read as ever.
    vi.stubEnv("TABLEMINDS_XLSX_MAX_BYTES", String(400 * 1024));
    expect(await rowsOf(writeFixture(dir, "padded-allowed.xlsx", bytes))).toEqual([
      ["Oslo", "1"],
      ["Bergen", "2"],
    ]);
  });

  it("counts the bytes a part really inflates to when its headers claim fewer", async () => {
    const parts = workbookParts(citySheet({ tail: padding(300_000) }), { claimedSize: 1_000 });
    const bomb = writeFixture(dir, "understated.xlsx", zip(parts));
    vi.stubEnv("TABLEMINDS_XLSX_MAX_BYTES", String(200 * 1024));
    expect((await refusal(bomb)).problem).toMatch(/^refused: it expands to more than 200 KB /);
  });

  it("counts the size a part's headers claim when it is more than the part holds", async () => {
    // SheetJS allocates what the headers claim before inflating.
    const parts = workbookParts(citySheet(), { claimedSize: 3 * 1024 * 1024 });
    const bomb = writeFixture(dir, "overstated.xlsx", zip(parts));
    vi.stubEnv("TABLEMINDS_XLSX_MAX_BYTES", String(2 * 1024 * 1024));
    expect((await refusal(bomb)).problem).toMatch(
      /^refused: it expands to more than 2 MB when unzipped \(passed in xl\/worksheets\/sheet1\.xml;/,
    );
  });

  it("follows parts whose sizes come after their data, and stored parts", () => {
    const limits = { maxBytes: 200 * 1024, maxCells: DEFAULT_XLSX_MAX_CELLS };
    const sheet = citySheet({ tail: padding(300_000) });
    for (const form of [{ descriptor: true }, { method: 0 as const }]) {
      const padded = zip(workbookParts(sheet, form));
      expect(() => checkWorkbookZip(padded, "p.xlsx", limits)).toThrow(
        /^cannot load table p\.xlsx: refused: it expands to more than 200 KB/,
      );
      const small = zip(workbookParts(citySheet(), form));
      expect(() => checkWorkbookZip(small, "s.xlsx", limits)).not.toThrow();
    }
  });

  it("counts a workbook's unzipped bytes exactly", () => {
    type Entry = { type: number; name: string; size?: number };
    const book = utils.book_new();
    const rows = Array.from({ length: 500 }, (_, i) => [`row ${i}`, i, i * 1.5]);
    utils.book_append_sheet(book, utils.aoa_to_sheet([["name", "i", "x"], ...rows]), "S");
    const bytes = write(book, { type: "buffer", bookType: "xlsx", compression: true }) as Buffer;
    // The files SheetJS's zip reader finds (it adds a placeholder of its own, named \x01...).
    const unzipped = CFB.read(bytes, { type: "buffer" })
      .FileIndex.filter((entry: Entry) => entry.type === 2 && !entry.name.startsWith("\u0001"))
      .reduce((sum: number, entry: Entry) => sum + (entry.size ?? 0), 0);
    expect(unzipped).toBeGreaterThan(bytes.length);
    const limits = (maxBytes: number) => ({ maxBytes, maxCells: DEFAULT_XLSX_MAX_CELLS });
    expect(() => checkWorkbookZip(bytes, "b.xlsx", limits(unzipped))).not.toThrow();
    expect(() => checkWorkbookZip(bytes, "b.xlsx", limits(unzipped - 1))).toThrow(/refused/);
  });

  it("refuses a part whose compressed data does not inflate, as corrupt", async () => {
    // A stored block whose length check fails: SheetJS took its bytes as an empty sheet.
    const badLength = Buffer.from([0x01, 0x05, 0x00, 0x00, 0x00, 0x41, 0x41, 0x41, 0x41, 0x41]);
    const file = writeFixture(
      dir,
      "bad-block.xlsx",
      zip(workbookParts(citySheet(), { compressed: badLength })),
    );
    expect((await refusal(file)).problem).toBe(
      "not a readable Excel workbook (corrupt, or not really .xlsx/.xls): its part " +
        "xl/worksheets/sheet1.xml does not unzip (invalid stored block lengths)",
    );
    // A reserved block type: SheetJS's own inflater never returned from this one.
    const reserved = zip(workbookParts(citySheet(), { compressed: Buffer.alloc(64, 0xff) }));
    const spins = writeFixture(dir, "reserved-block.xlsx", reserved);
    expect((await refusal(spins)).problem).toMatch(/does not unzip \(invalid block type\)$/);
  });
});

describe("workbooks with too many cells", () => {
  it("refuses sheets over TABLEMINDS_XLSX_MAX_CELLS, reads them under", async () => {
    const bytes = zip(workbookParts(gridSheet(150, 100)));
    const bomb = writeFixture(dir, "cells.xlsx", bytes);
    vi.stubEnv("TABLEMINDS_XLSX_MAX_CELLS", "10000");
    const error = await refusal(bomb);
    expect(error.message).toBe(
      `cannot load table ${bomb}: refused: its sheets hold more than 10,000 cells ` +
        "(passed in xl/worksheets/sheet1.xml; a cell bomb?); raise TABLEMINDS_XLSX_MAX_CELLS to read it",
    );
    vi.stubEnv("TABLEMINDS_XLSX_MAX_CELLS", "15000");
    expect(await rowsOf(writeFixture(dir, "cells-allowed.xlsx", bytes))).toHaveLength(149);
  });

  it("counts the cells of a stored sheet too", () => {
    const bytes = zip(workbookParts(gridSheet(30, 10), { method: 0 }));
    expect(() => checkWorkbookZip(bytes, "s.xlsx", { maxBytes: 1e9, maxCells: 299 })).toThrow(
      /refused: its sheets hold more than 299 cells/,
    );
    expect(() => checkWorkbookZip(bytes, "s.xlsx", { maxBytes: 1e9, maxCells: 300 })).not.toThrow();
  });

  it("refuses sheets read across too wide a range, reads a wide range of few rows", async () => {
    // 400 rows of one cell each, each row read across all 16,384 columns the dimension claims.
    const rows = Array.from(
      { length: 400 },
      (_, r) => `<row r="${r + 1}"><c r="A${r + 1}"><v>${r}</v></c></row>`,
    );
    const tall = (head: string, tail = "") =>
      `<worksheet xmlns="${MAIN}">${head}<sheetData>${rows.join("")}${tail}</sheetData></worksheet>`;
    const claimed = writeFixture(
      dir,
      "wide-dimension.xlsx",
      zip(workbookParts(tall('<dimension ref="A1:XFD400"/>'))),
    );
    expect((await refusal(claimed)).problem).toBe(
      'refused: sheet "Data" spans A1:XFD400, 6,553,600 cells to read (16,384 columns by 400 ' +
        "rows with data), past the 5,000,000 allowed for all sheets (a cell far from the table, " +
        "or a bomb?); raise TABLEMINDS_XLSX_MAX_CELLS to read it",
    );
    // No dimension: one stray cell far to the side sets the range.
    const stray = '<row r="401"><c r="XFD401"><v>9</v></c></row>';
    const far = writeFixture(dir, "wide-stray.xlsx", zip(workbookParts(tall("", stray))));
    expect((await refusal(far)).problem).toMatch(/^refused: sheet "Data" spans A1:XFD401, /);
    // The whole grid claimed over a few rows is read as it always was.
    const few = citySheet({ head: '<dimension ref="A1:XFD1048576"/>' });
    expect(await rowsOf(writeFixture(dir, "whole-grid.xlsx", zip(workbookParts(few))))).toEqual([
      ["Oslo", "1"],
      ["Bergen", "2"],
    ]);
  });

  it("sums what all sheets are read over, and names the sheet that costs most", () => {
    const cell = { t: "n" as const, v: 1 };
    const book: WorkBook = {
      SheetNames: ["a", "b", "c"],
      Sheets: {
        a: { "!ref": "A1:J100", "!data": Array.from({ length: 100 }, () => [cell]) },
        b: { "!ref": "A1:XFD1048576", "!data": [[cell], [cell]] },
        c: {},
      },
    };
    const limits = (maxCells: number) => ({ maxBytes: 1e9, maxCells });
    // a: 100 rows by 10 columns; b: 2 rows by 16,384 columns, but 1,048,576 rows to go through.
    expect(() => checkSheetRanges(book, "w.xlsx", limits(1000 + 1048576))).not.toThrow();
    expect(() => checkSheetRanges(book, "w.xlsx", limits(1000 + 1048576 - 1))).toThrow(
      'cannot load table w.xlsx: refused: sheet "b" spans A1:XFD1048576, 1,048,576 cells to read',
    );
    const deep: WorkBook = {
      SheetNames: ["d"],
      Sheets: { d: { "!ref": "A1:B999999999", "!data": [] } },
    };
    expect(() => checkSheetRanges(deep, "d.xlsx", limits(5_000_000))).toThrow(
      "spans A1:B999999999, 1,999,999,998 cells to read (2 columns by 999,999,999 rows)",
    );
  });
});

describe("counting cell tags", () => {
  const CELL = /<(?:\w+:)?c[ />]/g;
  const xml = [
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c/><c>',
    "<x:c r='B1'/><x_1:c>",
    "<cc ><c:chart><col/><c\tr='x'/><a:cx ><c\n/>",
    "<<c ><c:c ><:c ><c:><v>c </v>",
  ].join("");

  it("counts what SheetJS's cell pattern matches, however the XML is cut into pieces", () => {
    const expected = xml.match(CELL)?.length ?? 0;
    expect(expected).toBe(7);
    const bytes = Buffer.from(xml);
    for (let size = 1; size <= bytes.length; size++) {
      const counter = new CellTagCounter();
      for (let at = 0; at < bytes.length; at += size) counter.push(bytes.subarray(at, at + size));
      expect(counter.count, `pieces of ${size}`).toBe(expected);
    }
  });
});

describe("the limits' settings", () => {
  it("defaults to 256 MB and 5 million cells, and reads whole numbers from the environment", () => {
    expect(workbookLimits("b.xlsx", {})).toEqual({
      maxBytes: DEFAULT_XLSX_MAX_BYTES,
      maxCells: DEFAULT_XLSX_MAX_CELLS,
    });
    expect(DEFAULT_XLSX_MAX_BYTES).toBe(256 * 1024 * 1024);
    expect(
      workbookLimits("b.xlsx", {
        TABLEMINDS_XLSX_MAX_BYTES: " 1073741824 ",
        TABLEMINDS_XLSX_MAX_CELLS: "",
      }),
    ).toEqual({ maxBytes: 1073741824, maxCells: DEFAULT_XLSX_MAX_CELLS });
  });

  it("says which setting is wrong, naming the file", async () => {
    for (const value of ["lots", "0", "-5", "2.5"]) {
      expect(() => workbookLimits("b.xlsx", { TABLEMINDS_XLSX_MAX_CELLS: value })).toThrow(
        `cannot load table b.xlsx: TABLEMINDS_XLSX_MAX_CELLS is ${JSON.stringify(value)}; ` +
          "set it to a whole number above 0 (the default is 5000000)",
      );
    }
    const file = writeFixture(dir, "settings.xlsx", zip(workbookParts(citySheet())));
    vi.stubEnv("TABLEMINDS_XLSX_MAX_BYTES", "256MB");
    expect((await refusal(file)).problem).toMatch(/^TABLEMINDS_XLSX_MAX_BYTES is "256MB"; /);
  });
});
