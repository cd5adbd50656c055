import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { ingest } from "../../nodes/ingest.js";
import { sandboxIndexer } from "../../sandbox/frame-indexer.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { findPython } from "../../sandbox/python.js";
import { resetOperatorSettings, setOperatorSettings } from "../../settings/operator.js";
import { buildIndexInNode, DEFAULT_MAX_CELLS, keptIndex } from "../../tables/cell-index.js";
import { DuckDbTable } from "../../tables/cell-index-duckdb.js";
import { indexedTable } from "../../tables/context-retrieval.js";
import { isMissing } from "../../tables/dtypes.js";
import { FAST_CSV_BYTES } from "../../tables/fast-csv.js";
import type { FrameIndexer } from "../../tables/frame-index.js";
import { loadTable } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

/**
 * A large clean CSV is parsed once, by the sandbox, whose DataFrame gives the table's rows, its
 * dtypes and its cell index (tables/frame-index.ts); Node only copies and checks the file.
 */

const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, "../../sandbox/frame_index.py");

/**
 * Values pandas reads back as they are written (numbers as Python writes them), with ties,
 * missing cells, a column of no values, and texts whose order differs between code points and
 * UTF-16 (U+FF21 sorts before U+1F600 by code point, after it in JavaScript).
 */
function sampleCsv(rows: number): string {
  const words = ["Ａ", "😀", "b", "a", "é", "b c"];
  const lines = ["n,amount,word,flag,nothing,mixed"];
  for (let i = 0; i < rows; i++) {
    // "Ａ" and "😀" as often as each other: their order is the value order.
    const word = i % 30 === 4 ? "" : (words[i % words.length] ?? "");
    const number = (i % 9) * 1.25;
    const amount = i % 13 === 0 ? "NA" : Number.isInteger(number) ? number.toFixed(1) : `${number}`;
    const mixed = i % 5 === 0 ? "y" : String(i % 4);
    lines.push(`${i % 17},${amount},${word},${i % 3 === 0 ? "True" : "False"},,${mixed}`);
  }
  return `${lines.join("\n")}\n`;
}

let dir: string;
let python: string;

beforeAll(async () => {
  useTempHome();
  dir = fixtureDir();
  python = (await findPython()).executable;
});

/** A loaded table without the path of its artifact, which names the store it is in. */
function placeless({ table, warnings }: Awaited<ReturnType<typeof loadTable>>) {
  return { table: { ...table, uri: path.basename(table.uri) }, warnings };
}

/** frame_index.py's index of `uri` as pandas reads it, for each cap of cells. */
async function frameIndexes(uri: string, caps: readonly number[]): Promise<unknown[]> {
  const code = [
    "import pandas as pd",
    `df = pd.read_csv(${JSON.stringify(uri)})`,
    "MAX_CELLS = 0",
    "TOP_VALUES = 3",
    readFileSync(SCRIPT, "utf8"),
    `print(json.dumps([frame_index(df, cap, TOP_VALUES) for cap in ${JSON.stringify(caps)}]))`,
  ].join("\n");
  const { stdout } = await run(python, ["-c", code], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]");
}

describe("the cell index computed from pandas' DataFrame", () => {
  it("is the Node index, for any cap of cells, ties and UTF-16 order included", async () => {
    const { table } = await loadTable({ path: writeFixture(dir, "sample.csv", sampleCsv(400)) });
    expect(table.columns.map((c) => c.dtype)).toEqual([
      "int64",
      "float64",
      "object",
      "bool",
      "float64",
      "object",
    ]);
    const data = await readTable(table);
    const dtypes = table.columns.map((c) => c.dtype);
    const caps = [0, 1, 5, 16, 17, 40, 10_000];
    const indexes = await frameIndexes(table.uri, caps);
    for (const [i, maxCells] of caps.entries()) {
      const { firstRows: _, ...inNode } = buildIndexInNode(data, dtypes, maxCells);
      expect(indexes[i], `cap ${maxCells}`).toEqual(inNode);
    }
  });
});

describe("a large clean CSV loaded with the sandbox's indexer", () => {
  let sandbox: LocalSandbox;
  const calls: string[] = [];
  let indexer: FrameIndexer;

  beforeAll(async () => {
    sandbox = await LocalSandbox.start({ interpreters: 1 });
    const inner = sandboxIndexer(async () => sandbox, { memoryMb: 2048 });
    indexer = {
      index(table) {
        calls.push(table.sha256);
        return inner.index(table);
      },
    };
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it("gets the DuckDB path's table, and the index pandas made, kept for every process", async () => {
    const file = writeFixture(dir, "large.csv", sampleCsv(3_000));
    const viaSandbox = await loadTable({ path: file }, { fastCsvBytes: 1, indexer });
    expect(calls).toEqual([viaSandbox.table.sha256]);
    useTempHome();
    const viaDuckDb = await loadTable({ path: file }, { fastCsvBytes: 1 });
    expect(placeless(viaSandbox)).toEqual(placeless(viaDuckDb));
    expect(readFileSync(viaSandbox.table.uri)).toEqual(readFileSync(file));
    useTempHome();
    const again = await loadTable({ path: file }, { fastCsvBytes: 1, indexer });
    const table: TableRef = again.table;

    const data = await readTable(table);
    const dtypes = table.columns.map((c) => c.dtype);
    const kept = await keptIndex(table, DEFAULT_MAX_CELLS);
    const inNode = buildIndexInNode(data, dtypes, DEFAULT_MAX_CELLS);
    // As DuckDB's index has them: missing cells empty.
    const firstRows = inNode.firstRows.map((row) => row.map((v) => (isMissing(v) ? "" : v)));
    expect(kept).toEqual({ ...inNode, firstRows });
    // The context takes it instead of building one, and searches the rows by scanning.
    const indexed = await indexedTable(table, { large: true });
    expect(indexed.index).toEqual(kept);
    expect(indexed.rows).toBeInstanceOf(DuckDbTable);

    // The table's code runs on the DataFrame the worker loaded for the index.
    const ran = await sandbox.execute({ code: "print(len(df), df['n'].sum())", tables: [table] });
    expect(ran.stdout.trim()).toBe(
      `3000 ${data.rows.reduce((sum, row) => sum + Number(row[0]), 0)}`,
    );
  });

  it("counts a long table's columns on two threads in the sandbox, to the same index", async () => {
    // Past frame_index.py's THREADED_ROWS: counted on two threads, in the sandbox's confinement.
    const file = writeFixture(dir, "long.csv", sampleCsv(60_000));
    useTempHome();
    const { table } = await loadTable({ path: file }, { fastCsvBytes: 1, indexer });
    const data = await readTable(table);
    const dtypes = table.columns.map((c) => c.dtype);
    const { firstRows: _, ...inNode } = buildIndexInNode(data, dtypes, DEFAULT_MAX_CELLS);
    const { firstRows: __, ...kept } = (await keptIndex(table, DEFAULT_MAX_CELLS)) ?? {};
    expect(kept).toEqual(inNode);
  });

  it("still leaves a messy file to the full reader, which explains it", async () => {
    const ragged = writeFixture(dir, "ragged.csv", `${sampleCsv(50)}1,2\n`);
    await expect(loadTable({ path: ragged }, { fastCsvBytes: 1, indexer })).rejects.toThrow(
      /ragged rows: line 52 has 2 fields, the header has 6/,
    );
  });

  it("falls back to DuckDB when the sandbox cannot index the table", async () => {
    const file = writeFixture(dir, "fallback.csv", sampleCsv(500));
    const failing: FrameIndexer = { index: async () => ({ problem: "no sandbox here" }) };
    useTempHome();
    const loaded = await loadTable({ path: file }, { fastCsvBytes: 1, indexer: failing });
    expect(await keptIndex(loaded.table, DEFAULT_MAX_CELLS)).toBeNull();
    useTempHome();
    const viaDuckDb = await loadTable({ path: file }, { fastCsvBytes: 1 });
    expect(placeless(loaded)).toEqual(placeless(viaDuckDb));
  });
});

describe("the ingest node over a large CSV", () => {
  afterAll(async () => {
    resetOperatorSettings();
    await closeSandboxes();
  });

  it("has the local sandbox describe and index it, and keeps the index for the prompts", async () => {
    useTempHome();
    let text = sampleCsv(1_000);
    while (text.length < FAST_CSV_BYTES) text += text.slice(text.indexOf("\n") + 1);
    const file = writeFixture(dir, "big.csv", text);
    setOperatorSettings({ tableFiles: [file] });
    const runtime = { context: {} }; // the operator's sandbox: the local one by default
    const state = { question: "How many rows?", sources: [{ path: file }], tables: [] };
    const { tables = [] } = await ingest(state as never, runtime as never);
    const [table] = tables;
    if (!table) throw new Error("no table");
    expect(table.rows).toBe(text.split("\n").length - 2);
    expect(await keptIndex(table, DEFAULT_MAX_CELLS)).toMatchObject({ rowCount: table.rows });
  });
});
