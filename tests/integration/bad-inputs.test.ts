import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { utils, write } from "@e965/xlsx";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { artifactDir } from "../../storage/artifacts.js";
import { DuckDbTable } from "../../tables/cell-index-duckdb.js";
import { loadTables, TableLoadError } from "../../tables/load.js";
import { summarizeWithDuckDb } from "../../tables/profile-duckdb.js";
import { runCli } from "../support/cli.js";
import { stubEnv, useTempHome } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

/*
 * Bad inputs (issue 23, item 6): a one-line CSV, a corrupt workbook, a table DuckDB cannot
 * read. Each fails in one line naming the user's file, and leaves nothing in the store.
 */

const MiB = 1024 * 1024;

/** Every file under `dir`, relative to it; none when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

async function loadError(file: string, opts: { fastCsvBytes?: number } = {}) {
  const error = await loadTables({ path: file }, opts).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof TableLoadError))
    throw new Error(`expected a TableLoadError, got ${error}`);
  return error;
}

function workbookBytes(): Buffer {
  const book = utils.book_new();
  const rows = Array.from({ length: 40 }, (_, i) => [`city ${i}`, i, i * 2]);
  utils.book_append_sheet(book, utils.aoa_to_sheet([["city", "n", "m"], ...rows]), "S");
  return write(book, { type: "buffer", bookType: "xlsx", compression: true }) as Buffer;
}

describe("a CSV with a line too long to be a table's", () => {
  let dir: string;
  const saved = process.env.TABLEMINDS_MAX_LINE_BYTES;

  beforeAll(() => {
    dir = fixtureDir();
  });

  afterEach(() => {
    if (saved === undefined) delete process.env.TABLEMINDS_MAX_LINE_BYTES;
    else process.env.TABLEMINDS_MAX_LINE_BYTES = saved;
  });

  it.each([
    [
      "a header line with no line break",
      () => Array.from({ length: 40_000 }, (_, i) => `c${i}`).join(","),
      1,
    ],
    ["a file with no line break at all", () => "y".repeat(300_000), 1],
    ["one huge data line after the header", () => `a,b\n1,${"z".repeat(300_000)}\n3,4\n`, 2],
  ])("refuses %s, naming the file and the line, storing nothing", async (_, text, line) => {
    useTempHome();
    process.env.TABLEMINDS_MAX_LINE_BYTES = String(64 * 1024);
    const file = writeFixture(dir, "one-line.csv", text());
    const error = await loadError(file);
    expect(error.message).toMatch(
      new RegExp(`^cannot load table ${file}: refused: line ${line} is 0\\.\\d MB long`),
    );
    expect(error.message).not.toContain("\n");
    expect(filesUnder(artifactDir())).toEqual([]);
  });

  it("refuses it on the DuckDB path too, removing the copy it was making", async () => {
    useTempHome();
    process.env.TABLEMINDS_MAX_LINE_BYTES = String(64 * 1024);
    const rows = Array.from({ length: 2_000 }, (_, i) => `${i},${i * 2}`).join("\n");
    const file = writeFixture(dir, "late.csv", `a,b\n${rows}\n7,${"z".repeat(200_000)}\n`);
    const error = await loadError(file, { fastCsvBytes: 1024 });
    expect(error.problem).toMatch(/^refused: line 2002 is 0\.2 MB long, past the 0\.1 MB/);
    expect(filesUnder(artifactDir())).toEqual([]);
  });
});

describe("a corrupt workbook", () => {
  let dir: string;

  beforeAll(() => {
    dir = fixtureDir();
  });

  const random = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919 + 13) % 251));
  it.each([
    ["random bytes", "corrupt.xlsx", () => random, /this file looks like a binary file/],
    [
      "a CSV named .xlsx",
      "renamed.xlsx",
      () => Buffer.from("city,n\nParis,1\nLyon,2\n"),
      /is text starting "city,n" \(a CSV or TSV file\? name it \.csv or \.tsv\)/,
    ],
    ["a text file named .xlsm", "notes.xlsm", () => Buffer.from("just some notes\n"), /is text/],
    [
      "a zip cut short",
      "truncated.xlsx",
      () => workbookBytes().subarray(0, 3000),
      /its ZIP archive is cut short/,
    ],
    ["random bytes named .xls", "old.xls", () => random, /an \.xls workbook is an OLE or ZIP file/],
  ])("refuses %s in one line naming the file, storing nothing", async (_, name, bytes, why) => {
    useTempHome();
    const file = writeFixture(dir, name, bytes());
    const error = await loadError(file);
    expect(error.message.startsWith(`cannot load table ${file}: not `)).toBe(true);
    expect(error.problem).toMatch(why);
    expect(error.message).not.toContain("\n");
    expect(filesUnder(artifactDir())).toEqual([]);
  });

  it("still reads a real workbook, and an .xls that is HTML text", async () => {
    useTempHome();
    const book = writeFixture(dir, "good.xlsx", workbookBytes());
    expect((await loadTables({ path: book }))[0]?.table.rows).toBe(40);
    const html = "<table><tr><td>city</td><td>n</td></tr><tr><td>Paris</td><td>1</td></tr></table>";
    const xls = writeFixture(dir, "export.xls", html);
    expect((await loadTables({ path: xls }))[0]?.table.columns.map((c) => c.name)).toEqual([
      "city",
      "n",
    ]);
  });
});

describe("a stored table DuckDB cannot read", () => {
  const saved = process.env.TABLEMINDS_MAX_LINE_BYTES;
  let ref: TableRef;

  beforeAll(async () => {
    useTempHome();
    // JSON may be one line; one cell of 3 MB makes a stored line DuckDB refuses at this limit.
    process.env.TABLEMINDS_MAX_LINE_BYTES = String(100_000);
    const file = writeFixture(
      fixtureDir(),
      "big-cell.json",
      JSON.stringify([
        { id: 1, text: "x".repeat(3 * MiB) },
        { id: 2, text: "short" },
      ]),
    );
    const loaded = (await loadTables({ path: file }))[0]?.table;
    if (!loaded) throw new Error("big-cell.json did not load");
    ref = loaded;
  });

  afterAll(() => {
    if (saved === undefined) delete process.env.TABLEMINDS_MAX_LINE_BYTES;
    else process.env.TABLEMINDS_MAX_LINE_BYTES = saved;
  });

  it("fails in one line naming the user's file, never the artifact", async () => {
    for (const attempt of [
      () => DuckDbTable.open(ref, 1000),
      () => summarizeWithDuckDb(ref, { sampleRows: 10, examples: 3 }),
    ]) {
      const error = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TableLoadError);
      const message = (error as TableLoadError).message;
      expect(message).toMatch(
        /^cannot load table big-cell\.json: DuckDB could not (index|profile) it: CSV Error on Line: \d+: Maximum line size/,
      );
      expect(message).not.toContain("\n");
      expect(message).not.toContain(artifactDir());
    }
  });
});

describe("tableminds ask over bad inputs", () => {
  let stub: StubServer;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: () => ({ status: 500, content: "not expected" }) });
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("refuses a 10 MB one-line CSV in one line, asking no model and leaving nothing", async () => {
    const env = stubEnv(stub.url);
    const header = Array.from({ length: 1_250_000 }, (_, i) => `c${i}`).join(",");
    const file = path.join(fixtureDir(), "one-line.csv");
    writeFileSync(file, header);
    const result = await runCli(["ask", file, "How many rows?", "--no-memory"], env, 120_000);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd()).toMatch(
      new RegExp(
        `^tableminds: cannot load table ${file}: refused: line 1 is 9\\.\\d MB long \\(the file has no line break\\)[^\\n]*$`,
      ),
    );
    expect(stub.requests).toEqual([]);
    expect(filesUnder(path.join(env.TABLEMINDS_HOME ?? "", "artifacts"))).toEqual([]);
  }, 120_000);

  it("refuses a corrupt .xlsx in one line naming it", async () => {
    const env = stubEnv(stub.url);
    const file = writeFixture(fixtureDir(), "corrupt.xlsx", Buffer.alloc(5000, 0x22));
    const result = await runCli(["ask", file, "How many rows?", "--no-memory"], env);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd()).toMatch(
      new RegExp(`^tableminds: cannot load table ${file}: not an Excel workbook[^\\n]*$`),
    );
    expect(filesUnder(path.join(env.TABLEMINDS_HOME ?? "", "artifacts"))).toEqual([]);
  }, 60_000);
});
