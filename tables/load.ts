import type { Stats } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { TableOrigin, TableReading, TableRef, TableSource } from "../blackboard/schemas.js";
import { operatorSettings } from "../settings/operator.js";
import { artifactDir, hashFile, putArtifact, removingOnFailure } from "../storage/artifacts.js";
import { BoundedCache } from "../storage/bounded-cache.js";
import { DEFAULT_MAX_CELLS, keepIndex } from "./cell-index.js";
import { formatCsv } from "./csv.js";
import { type Dtype, inferDtype } from "./dtypes.js";
import { decodeTable } from "./encoding.js";
import { fileProblem, TableLoadError } from "./errors.js";
import { FAST_CSV_BYTES, storeCleanCsv } from "./fast-csv.js";
import { TABLE_FORMATS } from "./formats.js";
import type { FrameIndexer } from "./frame-index.js";
import {
  type Grid,
  type GridChild,
  gridFromColumnsData,
  gridFromJson,
  gridFromText,
} from "./grid.js";
import { indexKey, readIndex, writeIndex } from "./load-index.js";
import { tableName, uniqueColumnNames } from "./names.js";
import { inlineOrigin, lineOrigin, type OriginOf, sheetOrigin, storeRead } from "./read-store.js";
import { type ReadingOptions, type ReadTable, readSheet, readValues } from "./reading.js";
import { rowPlaces } from "./row-places.js";
import { sheetRole } from "./sheet-roles.js";
import { allowedSource, localUpload, pinnedFile } from "./sources.js";
import { rawSheetFromRows } from "./structure.js";
import { checkRagged, type TextSheet, textSheet } from "./text-sheet.js";

export { TableLoadError } from "./errors.js";

export interface LoadedTable {
  table: TableRef;
  /** Things fixed or guessed on the way in (renamed columns, a detected encoding), each naming the file. */
  warnings: string[];
}

export interface LoadOptions {
  /** The table's name (a workbook's tables are `<name>_<sheet>`); default the source's. */
  name?: string;
  /** The encoding of a text file, overriding the source's `encoding`; default: detected. */
  encoding?: string;
  /** From this size on a clean CSV takes the DuckDB path (default FAST_CSV_BYTES). */
  fastCsvBytes?: number;
  /** How to read the file: interpreted (default) or `raw`, and what to override. */
  reading?: ReadingOptions;
  /**
   * Describes and indexes a large clean CSV from the sandbox's DataFrame of it (one parse for
   * the sandbox, the dtypes and the cell index); without it DuckDB does, in Node.
   */
  indexer?: FrameIndexer;
}

/**
 * Files the loader reads whole into memory (text tables not clean enough for the DuckDB path,
 * workbooks) may be this big; clean CSVs and Parquet files are streamed, of any size.
 */
export const MAX_TABLE_BYTES = 200 * 1024 * 1024;

/** File extensions the loader reads. */
export { TABLE_FORMATS };

const NO_PATHS = { tableRoots: [], tableFiles: [] };
const TEXT_FORMATS = [".csv", ".tsv", ".json"];
const WORKBOOK_FORMATS = [".xlsx", ".xlsm", ".xls"];

function megabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

async function fileInfo(file: string): Promise<Stats> {
  let info: Stats;
  try {
    info = await stat(file);
  } catch (error) {
    throw new TableLoadError(file, fileProblem(error), { cause: error });
  }
  if (info.isDirectory()) throw new TableLoadError(file, "it is a directory, not a file");
  if (!info.isFile()) throw new TableLoadError(file, "it is not a regular file");
  return info;
}

function formatOf(file: string): string {
  const extension = path.extname(file).toLowerCase();
  if (!TABLE_FORMATS.includes(extension)) {
    const shown = extension === "" ? "(no file extension)" : extension;
    throw new TableLoadError(
      file,
      `unsupported format ${shown} (supported: ${TABLE_FORMATS.join(", ")})`,
    );
  }
  return extension;
}

async function readWhole(file: string, size: number): Promise<Buffer> {
  if (size > MAX_TABLE_BYTES) {
    throw new TableLoadError(
      file,
      `the file is ${megabytes(size)} MB; files above ${MAX_TABLE_BYTES / 1024 / 1024} MB are read only as ` +
        "clean comma-separated UTF-8 CSV or as Parquet (streamed by DuckDB), and this one is neither; save it as one",
    );
  }
  try {
    return await readFile(file);
  } catch (error) {
    throw new TableLoadError(file, fileProblem(error), { cause: error });
  }
}

/** A table stored already, as the DuckDB paths give it. */
interface Stored {
  header: string[];
  rows: number;
  dtypes: Dtype[];
  sha256: string;
  uri: string;
  warnings?: string[];
  origin?: TableOrigin;
}

/** The origin of a text file's grid: JSON's array, or each delimited row's line. */
function textOrigin(grid: Grid, file: string, extension: string): TableOrigin | undefined {
  const name = path.basename(file);
  if (grid.json) return { format: "json", file: name, ...grid.json };
  if (!grid.lines) return undefined;
  return {
    format: extension === ".tsv" ? "tsv" : "csv",
    file: name,
    header: grid.lines.header,
    lines: rowPlaces(grid.lines.rows),
  };
}

/** Names the grid's columns, stores it as canonical CSV and describes it. */
async function storeGrid(
  grid: Grid,
  name: string,
  origin: TableOrigin | undefined,
): Promise<{ table: TableRef; warnings: string[] }> {
  const naming = uniqueColumnNames(grid.header);
  const { sha256, uri } = await putArtifact(formatCsv(naming.names, grid.rows), "csv");
  const table: TableRef = {
    id: `table:${name}`,
    name,
    uri,
    sha256,
    rows: grid.rows.length,
    columns: naming.names.map((column, i) => {
      const source = naming.sources[i];
      return { name: column, dtype: inferDtype(grid.rows, i), ...(source ? { source } : {}) };
    }),
  };
  if (origin) table.origin = origin;
  return { table, warnings: [...(grid.warnings ?? []), ...naming.warnings] };
}

function describeStored(stored: Stored, name: string): { table: TableRef; warnings: string[] } {
  const table: TableRef = {
    id: `table:${name}`,
    name,
    uri: stored.uri,
    sha256: stored.sha256,
    rows: stored.rows,
    columns: stored.header.map((column, i) => ({
      name: column,
      dtype: stored.dtypes[i] ?? "object",
    })),
  };
  if (stored.origin) table.origin = stored.origin;
  return { table, warnings: stored.warnings ?? [] };
}

type Unprefixed = { table: TableRef; warnings: string[] };

async function loadText(
  file: string,
  extension: string,
  size: number,
  name: string,
  opts: LoadOptions & { encoding?: string },
): Promise<Unprefixed[]> {
  const utf8 = opts.encoding === undefined || /^utf-?8$/i.test(opts.encoding.trim());
  if (extension === ".csv" && utf8 && size >= (opts.fastCsvBytes ?? FAST_CSV_BYTES)) {
    const stored = await storeCleanCsv(file, opts.indexer ? { indexer: opts.indexer } : {});
    if (stored) {
      const { headerLine, lines, index, ...rest } = stored;
      const origin: TableOrigin = {
        format: "csv",
        file: path.basename(file),
        header: headerLine,
        lines,
      };
      const described = describeStored({ ...rest, origin }, name);
      if (index) await keepIndex(described.table, DEFAULT_MAX_CELLS, index);
      return [described];
    }
  }
  const decoded = decodeTable(await readWhole(file, size), file, opts.encoding);
  if (decoded.text.trim() === "")
    throw new TableLoadError(file, "the file is empty (only whitespace)");
  const reading = opts.reading ?? {};
  let loaded: Unprefixed[];
  if (reading.raw)
    loaded = [await literalText(decoded.text, extension, file, name, undefined, reading.skipRows)];
  else if (extension === ".json") loaded = await readJson(decoded.text, file, name, reading);
  else loaded = await readText(decoded.text, extension, file, name, reading);
  if (decoded.warning) loaded[0]?.warnings.unshift(decoded.warning);
  return loaded;
}

/**
 * A text file read literally: the first record the header, every cell as it is. `parsed`: its
 * records as textSheet split them, so that they are not parsed again.
 */
async function literalText(
  text: string,
  extension: string,
  file: string,
  name: string,
  parsed?: TextSheet["parsed"],
  skipLines = 0,
): Promise<Unprefixed> {
  let grid: Grid;
  if (extension === ".json") grid = gridFromJson(text, file, false);
  else if (skipLines > 0)
    grid = skipped(text, skipLines, (rest) => gridFromText(rest, extension, file));
  else grid = gridFromText(text, extension, file, parsed);
  return storeGrid(grid, name, textOrigin(grid, file, extension));
}

/** A text's grid read from below its first `n` lines, which are blanked to keep the line numbers. */
function skipped(text: string, n: number, read: (rest: string) => Grid): Grid {
  const lines = text.split(/(?<=\r\n|\r(?!\n)|\n)/);
  const blanked = lines.map((line, i) => (i < n ? line.replace(/[^\r\n]+/, "") : line));
  return read(blanked.join(""));
}

/**
 * A JSON file read for its values: nested records flattened to dotted columns, each list of
 * records a child table `<name>_<column>` whose `_parent_row` is the parent's row.
 */
async function readJson(
  text: string,
  file: string,
  name: string,
  reading: ReadingOptions,
): Promise<Unprefixed[]> {
  const grid = gridFromJson(text, file);
  const json = grid.json ?? { pointer: "", shape: "records" as const };
  const origin: OriginOf = () => ({ format: "json", file: path.basename(file), ...json });
  const [main, ...rest] = await storeRead(
    readValues(grid.header, grid.rows, reading),
    name,
    origin,
  );
  if (!main) throw new TableLoadError(file, "the file has no table in it");
  main.warnings.unshift(...(grid.warnings ?? []));
  const loaded: Unprefixed[] = [main, ...rest];
  const children: { column: string; table: string }[] = [];
  const addChildren = async (parent: string, list: readonly GridChild[]) => {
    for (const child of list) {
      const childName = tableName(`${parent}_${child.name.replaceAll(".", "_")}`);
      const childOrigin: OriginOf = () => ({
        format: "json",
        file: path.basename(file),
        pointer: `${json.pointer}/*/${child.path.join("/")}`,
        shape: "records",
      });
      const read = readValues(child.grid.header, child.grid.rows, reading);
      loaded.push(...(await storeRead(read, childName, childOrigin)));
      children.push({ column: child.parentColumn, table: childName });
      await addChildren(childName, child.grid.children ?? []);
    }
  };
  await addChildren(name, grid.children ?? []);
  const lists = grid.lists ?? [];
  if (children.length > 0 || lists.length > 0) {
    main.table.reading = { ...main.table.reading };
    if (children.length > 0) main.table.reading.children = children.slice(0, 50);
    main.table.columns = main.table.columns.map((column) =>
      lists.includes(column.name)
        ? { ...column, reading: "lists, as JSON text (json.loads a cell for the list)" }
        : column,
    );
  }
  return loaded;
}

/** Names the tables of one sheet or file: the base alone, or `<base>_<n>` when there are several. */
function blockNames(base: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    count === 1 ? base : tableName(`${base}_${i + 1}`),
  );
}

/** A CSV or TSV file read for its structure: titles, header rows, totals and notes, values. */
async function readText(
  text: string,
  extension: string,
  file: string,
  name: string,
  reading: ReadingOptions,
): Promise<Unprefixed[]> {
  const sheet = textSheet(text, extension, file);
  const tables = readSheet(sheet.sheet, reading);
  // A plain table is read literally: same bytes, same warnings as ever.
  if (tables.length <= 1 && !tables[0]?.interpreted) {
    return [await literalText(text, extension, file, name, sheet.parsed)];
  }
  const format = extension === ".tsv" ? "tsv" : "csv";
  const names = blockNames(name, tables.length);
  const loaded: Unprefixed[] = [];
  for (const [i, table] of tables.entries()) {
    checkRagged(sheet, table.headerIndex, table.rowIndexes, file);
    loaded.push(
      ...(await storeRead(table, names[i] ?? name, lineOrigin(format, path.basename(file)))),
    );
  }
  loaded[0]?.warnings.unshift(...sheet.warnings);
  return loaded;
}

async function loadWorkbook(
  file: string,
  size: number,
  base: string,
  reading: ReadingOptions,
): Promise<Unprefixed[]> {
  const bytes = await readWhole(file, size);
  const format = path.extname(file).slice(1).toLowerCase() as "xlsx" | "xlsm" | "xls";
  if (reading.raw) return literalWorkbook(bytes, file, base, format);
  const { rawSheetsFromWorkbook } = await import("./xlsx.js");
  const all = rawSheetsFromWorkbook(bytes, file);
  const wanted = reading.sheet;
  if (wanted && !all.some((s) => s.sheet === wanted)) {
    const names = all.map((s) => JSON.stringify(s.sheet)).join(", ");
    throw new TableLoadError(file, `it has no sheet ${JSON.stringify(wanted)} (sheets: ${names})`);
  }
  const hidden = all.filter((s) => s.hidden && s.sheet !== wanted).map((s) => s.sheet);
  const sheets = all.filter((s) => (wanted ? s.sheet === wanted : !s.hidden));
  const everySheet = sheets.map(({ sheet, raw }) => ({ sheet, tables: readSheet(raw, reading) }));
  const { data: read, aside } = setAside(everySheet, wanted);
  const count = read.filter((s) => s.tables.length > 0).length;
  const loaded: Unprefixed[] = [];
  for (const { sheet, tables } of read) {
    const name = tableName(count === 1 ? base : `${base}_${sheet}`);
    const names = blockNames(name, tables.length);
    for (const [i, table] of tables.entries()) {
      const origin = sheetOrigin(format, path.basename(file), sheet, table.letters ?? []);
      const stored = await storeRead(table, names[i] ?? name, origin);
      for (const entry of stored) {
        if (hidden.length > 0) {
          const reading = entry.table.reading ?? {};
          entry.table.reading = { ...reading, hidden: { ...reading.hidden, sheets: hidden } };
        }
        if (aside.length > 0) entry.table.reading = { ...entry.table.reading, asideSheets: aside };
        entry.warnings = entry.warnings.map((w) => `sheet ${JSON.stringify(sheet)}: ${w}`);
      }
      loaded.push(...stored);
    }
  }
  if (loaded.length === 0) {
    const names = all.map((s) => JSON.stringify(s.sheet)).join(", ");
    throw new TableLoadError(file, `the workbook has no data in any visible sheet (${names})`);
  }
  return loaded;
}

type SheetRead = { sheet: string; tables: ReadTable[] };

/**
 * The data sheets of a workbook, and its sheets of contents and notes set aside (unless asked
 * for by name, or no sheet of data would be left).
 */
function setAside(
  read: readonly SheetRead[],
  wanted: string | undefined,
): { data: SheetRead[]; aside: NonNullable<TableReading["asideSheets"]> } {
  if (wanted || read.length < 2) return { data: [...read], aside: [] };
  const names = read.map((s) => s.sheet);
  const roles = read.map((s) =>
    sheetRole(
      s.tables,
      names.filter((name) => name !== s.sheet),
    ),
  );
  const data = read.filter((_, i) => roles[i] === null);
  if (data.length === 0) return { data: [...read], aside: [] };
  const aside = read.flatMap((s, i) => {
    const kind = roles[i];
    if (!kind) return [];
    const lines = s.tables
      .flatMap((t) => [...t.title, ...t.text.map((row) => row.filter(Boolean).join(" "))])
      .filter((line) => line.trim() !== "")
      .slice(0, 3)
      .map((line) => line.slice(0, 300));
    return [{ sheet: s.sheet, kind, lines }];
  });
  return { data, aside };
}

/** A workbook read literally: each sheet's first row (after title rows) its header. */
async function literalWorkbook(
  bytes: Buffer,
  file: string,
  base: string,
  format: "xlsx" | "xlsm" | "xls",
): Promise<Unprefixed[]> {
  const { gridsFromWorkbook } = await import("./xlsx.js");
  const sheets = gridsFromWorkbook(bytes, file);
  const loaded: Unprefixed[] = [];
  for (const { sheet, grid } of sheets) {
    const name = tableName(sheets.length === 1 ? base : `${base}_${sheet}`);
    const origin: TableOrigin = {
      format,
      file: path.basename(file),
      sheet,
      header: grid.headerRow,
      rows: rowPlaces(grid.rowNumbers),
      columns: grid.letters,
    };
    const table = await storeGrid(grid, name, origin);
    table.warnings = table.warnings.map((w) => `sheet ${JSON.stringify(sheet)}: ${w}`);
    loaded.push(table);
  }
  return loaded;
}

/** Inline `{columns, data}` rows read for their structure (TableBench's two-row headers). */
async function loadInline(
  columns: unknown,
  data: unknown,
  name: string,
  reading: ReadingOptions,
): Promise<Unprefixed[]> {
  const grid = gridFromColumnsData(columns, data, "<inline>");
  if (reading.raw) return [await storeGrid(grid, name, { format: "inline" })];
  const places = { header: 0, rows: grid.rows.map((_, i) => i + 1) };
  const tables = readSheet(rawSheetFromRows(grid.header, grid.rows, places), reading);
  if (tables.length <= 1 && !tables[0]?.interpreted) {
    return [await storeGrid(grid, name, { format: "inline" })];
  }
  const names = blockNames(name, tables.length);
  const loaded: Unprefixed[] = [];
  for (const [i, table] of tables.entries()) {
    loaded.push(...(await storeRead(table, names[i] ?? name, inlineOrigin)));
  }
  return loaded;
}

async function loadFile(file: string, size: number, base: string, opts: LoadOptions) {
  const extension = formatOf(file);
  if (WORKBOOK_FORMATS.includes(extension))
    return loadWorkbook(file, size, base, opts.reading ?? {});
  if (extension === ".parquet") {
    const { storeParquet } = await import("./parquet.js");
    const origin: TableOrigin = { format: "parquet", file: path.basename(file) };
    return [describeStored({ ...(await storeParquet(file)), origin }, tableName(base))];
  }
  if (TEXT_FORMATS.includes(extension))
    return loadText(file, extension, size, tableName(base), opts);
  throw new TableLoadError(file, `unsupported format ${extension}`);
}

/**
 * The tables as loaded from `file`, warnings naming it. A load found by its content may have
 * come from a file of another name: the origin names this one.
 */
function withFile(file: string, tables: readonly Unprefixed[]): LoadedTable[] {
  const name = path.basename(file);
  return tables.map(({ table, warnings }) => ({
    table:
      table.origin && "file" in table.origin && table.origin.file !== name
        ? { ...table, origin: { ...table.origin, file: name } }
        : table,
    warnings: warnings.map((warning) => `${file}: ${warning}`),
  }));
}

/** Loads of unchanged files by path, size, mtime and options, in this process. */
const loaded = new BoundedCache<Unprefixed[]>(64);

async function allExist(tables: readonly Unprefixed[]): Promise<boolean> {
  for (const { table } of tables) {
    try {
      await stat(table.uri);
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Reads a source into its tables: a `.csv`, `.tsv` or `.json` file, each sheet of an `.xlsx`
 * (`.xlsm`, `.xls`) workbook, a `.parquet` file, or inline `{columns, data}`; stores each as
 * CSV in the artifact store and returns references to them. A workbook with one sheet gives
 * one table named after the file; with several, `<file>_<sheet>` each.
 *
 * Text is decoded as `encoding` when named (options, then the source), else as UTF-8 or
 * UTF-16 by its BOM, or in a legacy encoding detected from the bytes (with a warning). A
 * large clean CSV is stored as its own bytes, counted and typed by DuckDB; other files are
 * parsed in Node into canonical CSV, where equal content gives the same sha256 and uri.
 *
 * A file loaded before is not read again: the same path, size and mtime (in this process,
 * or through the store's index in any process), or the same content (its sha256), give the
 * stored tables back while their artifacts exist. Throws TableLoadError, naming the file.
 */
export async function loadTables(
  source: TableSource,
  opts: LoadOptions = {},
): Promise<LoadedTable[]> {
  if ("upload" in source) {
    // Cited by the name it was uploaded under, not the store's name for its bytes.
    const stored = allowedSource(source, NO_PATHS);
    const loaded = await loadTables(stored, opts);
    const file = `${stored.name}${path.extname(source.upload)}`;
    return loaded.map((l) => {
      const origin = l.table.origin;
      return origin && "file" in origin
        ? { ...l, table: { ...l.table, origin: { ...origin, file } } }
        : l;
    });
  }
  if (!("path" in source)) {
    const name = tableName(opts.name || source.name || "");
    const tables = await loadInline(source.columns, source.data, name, opts.reading ?? {});
    return withFile("<inline>", tables);
  }
  await localUpload(source.path);
  const pinned = await pinnedFile(source.path, operatorSettings());
  try {
    const tables = await loadPath({ ...source, path: pinned.path }, opts);
    if (pinned.path === source.path) return tables;
    return tables.map((t) => ({
      ...t,
      warnings: t.warnings.map((w) => w.replaceAll(pinned.path, source.path)),
    }));
  } catch (error) {
    // The file as the caller named it, not the private copy read on a server.
    if (error instanceof TableLoadError && error.file === pinned.path) {
      throw new TableLoadError(source.path, error.problem, { cause: error });
    }
    throw error;
  } finally {
    await pinned.done();
  }
}

async function loadPath(
  source: Extract<TableSource, { path: string }>,
  opts: LoadOptions,
): Promise<LoadedTable[]> {
  const file = source.path;
  const info = await fileInfo(file);
  formatOf(file);
  if (info.size === 0) throw new TableLoadError(file, "the file is empty (0 bytes)");
  const base = opts.name || source.name || path.basename(file, path.extname(file));
  const encoding = opts.encoding ?? source.encoding;
  const settings = [
    base,
    encoding ?? null,
    opts.fastCsvBytes ?? null,
    JSON.stringify(opts.reading ?? {}),
  ];
  const statKey = indexKey(["stat", path.resolve(file), info.size, info.mtimeMs, ...settings]);
  const memoryKey = `${statKey}\0${artifactDir()}`;
  const kept = loaded.get(memoryKey);
  if (kept && (await allExist(kept))) return withFile(file, kept);
  const known = (await readIndex(statKey))?.tables;
  if (known) {
    loaded.set(memoryKey, known);
    return withFile(file, known);
  }
  let digest: string;
  try {
    digest = await hashFile(file);
  } catch (error) {
    throw new TableLoadError(file, fileProblem(error), { cause: error });
  }
  const contentKey = indexKey(["content", digest, path.extname(file).toLowerCase(), ...settings]);
  const same = (await readIndex(contentKey))?.tables;
  const tables =
    same ?? (await removingOnFailure(() => loadFile(file, info.size, base, { ...opts, encoding })));
  await writeIndex(same ? [statKey] : [statKey, contentKey], tables);
  loaded.set(memoryKey, tables);
  return withFile(file, tables);
}

/**
 * Reads a source that holds one table (see loadTables), leaving out the tables of its totals
 * and its lists of records; a workbook with several sheets is refused, naming them, since only
 * loadTables can return them all.
 */
export async function loadTable(source: TableSource, opts: LoadOptions = {}): Promise<LoadedTable> {
  const tables = await loadTables(source, opts);
  const [first, ...rest] = tables;
  // Its totals and child tables are parts of the one table, not others beside it.
  const reading = first?.table.reading;
  const parts = new Set([reading?.totals?.table, ...(reading?.children ?? []).map((c) => c.table)]);
  if (first && rest.every((other) => parts.has(other.table.name))) return first;
  const file = "path" in source ? source.path : "<inline>";
  throw new TableLoadError(
    file,
    `it holds ${tables.length} tables (${tables.map((t) => t.table.name).join(", ")}); load it with loadTables`,
  );
}
