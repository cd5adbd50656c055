import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { TableRef, TableSource } from "../../blackboard/schemas.js";
import { artifactDir, putArtifact } from "../artifacts.js";
import { BoundedCache } from "../bounded-cache.js";
import { CsvSyntaxError, formatCsv, parseDelimited } from "./csv.js";
import { delimiterName, sniffDelimiter, suspiciousHeader } from "./delimiter.js";
import { inferDtype } from "./dtypes.js";
import { decodeText, fileProblem, TableLoadError } from "./errors.js";
import { tableName, uniqueColumnNames } from "./names.js";

export { TableLoadError } from "./errors.js";

export interface LoadedTable {
  table: TableRef;
  /** Things fixed on the way in (renamed columns), each naming the file. */
  warnings: string[];
}

/** Files are read whole into memory; bigger ones wait for a streaming backend. */
export const MAX_TABLE_BYTES = 200 * 1024 * 1024;

const DELIMITERS: Record<string, string> = { ".csv": ",", ".tsv": "\t" };
const SUPPORTED = [".csv", ".tsv", ".json"];

interface Grid {
  header: string[];
  rows: string[][];
  /** What was guessed on the way in, for the user to know. */
  warnings?: string[];
}

/** Stored text of one value: missing -> empty, scalars via String(), the rest as JSON. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  return JSON.stringify(value) ?? "";
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function badShape(file: string, detail: string): TableLoadError {
  return new TableLoadError(file, `unusable JSON shape: ${detail}`);
}

/** The `{columns, data}` form, from a JSON file or passed inline. */
function gridFromColumnsData(columns: unknown, data: unknown, file: string): Grid {
  const shape = (detail: string) =>
    file === "<inline>" ? new TableLoadError(file, detail) : badShape(file, detail);
  if (!Array.isArray(columns))
    throw shape(`"columns" must be a list of names, not ${kindOf(columns)}`);
  if (columns.length === 0) throw shape(`"columns" is empty, so the table has no columns`);
  const header = columns.map((name, i) => {
    if (typeof name === "string") return name;
    if (typeof name === "number") return String(name);
    throw shape(`"columns" item ${i + 1} is ${kindOf(name)}, not a name`);
  });
  if (!Array.isArray(data)) throw shape(`"data" must be a list of rows, not ${kindOf(data)}`);
  const rows = data.map((row: unknown, i) => {
    if (!Array.isArray(row)) throw shape(`"data" row ${i + 1} is ${kindOf(row)}, not a list`);
    if (row.length !== header.length) {
      throw new TableLoadError(
        file,
        `ragged rows: data row ${i + 1} has ${plural(row.length, "value")}, there are ${plural(header.length, "column")}`,
      );
    }
    return row.map(cellText);
  });
  return { header, rows };
}

/** An array of records; the columns are the union of their keys, in first-seen order. */
function gridFromRecords(items: unknown[], file: string): Grid {
  const keys = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (!isRecord(item)) {
      throw badShape(
        file,
        `item ${i + 1} of the array is ${kindOf(item)}, not a record (an object)`,
      );
    }
    for (const key of Object.keys(item)) keys.add(key);
  }
  if (keys.size === 0) {
    throw badShape(
      file,
      items.length === 0 ? "the array has no records" : "the records have no keys",
    );
  }
  const header = [...keys];
  const rows = (items as Record<string, unknown>[]).map((item) =>
    header.map((key) => cellText(item[key])),
  );
  return { header, rows };
}

function gridFromJson(text: string, file: string): Grid {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TableLoadError(file, `invalid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (Array.isArray(value)) return gridFromRecords(value, file);
  if (isRecord(value) && "columns" in value && "data" in value) {
    return gridFromColumnsData(value.columns, value.data, file);
  }
  const got = isRecord(value)
    ? `an object with keys ${Object.keys(value).slice(0, 5).join(", ") || "(none)"}`
    : kindOf(value);
  throw badShape(
    file,
    `expected a list of records or an object with "columns" and "data", got ${got}`,
  );
}

function gridFromDelimited(text: string, delimiter: string, file: string): Grid {
  let records: ReturnType<typeof parseDelimited>;
  try {
    records = parseDelimited(text, delimiter);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new TableLoadError(file, error.message);
    throw error;
  }
  const [first, ...rest] = records;
  const header = first?.fields ?? [];
  for (const record of rest) {
    if (record.fields.length !== header.length) {
      throw new TableLoadError(
        file,
        `ragged rows: line ${record.line} has ${plural(record.fields.length, "field")}, the header has ${header.length}`,
      );
    }
  }
  return { header, rows: rest.map((record) => record.fields) };
}

async function gridFromFile(file: string): Promise<Grid> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(file);
  } catch (error) {
    throw new TableLoadError(file, fileProblem(error), { cause: error });
  }
  if (info.isDirectory()) throw new TableLoadError(file, "it is a directory, not a file");
  if (!info.isFile()) throw new TableLoadError(file, "it is not a regular file");
  const extension = path.extname(file).toLowerCase();
  if (!SUPPORTED.includes(extension)) {
    const shown = extension === "" ? "(no file extension)" : extension;
    throw new TableLoadError(
      file,
      `unsupported format ${shown} (supported now: ${SUPPORTED.join(", ")})`,
    );
  }
  if (info.size > MAX_TABLE_BYTES) {
    const mb = (info.size / 1024 / 1024).toFixed(1);
    throw new TableLoadError(
      file,
      `the file is ${mb} MB; files above ${MAX_TABLE_BYTES / 1024 / 1024} MB are not supported yet ` +
        "(tables are read whole into memory; a streaming backend such as DuckDB is planned)",
    );
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new TableLoadError(file, fileProblem(error), { cause: error });
  }
  if (bytes.length === 0) throw new TableLoadError(file, "the file is empty (0 bytes)");
  const text = decodeText(bytes, file);
  if (text.trim() === "") throw new TableLoadError(file, "the file is empty (only whitespace)");
  const expected = DELIMITERS[extension];
  if (expected === undefined) return gridFromJson(text, file);
  const delimiter = sniffDelimiter(text, expected);
  const grid = gridFromDelimited(text, delimiter, file);
  const warnings: string[] = [];
  if (delimiter !== expected) {
    warnings.push(
      `read as ${delimiterName(delimiter)}-separated: a ${extension} file, but its lines split evenly on ${delimiterName(delimiter)}s, not ${delimiterName(expected)}s`,
    );
  }
  const suspicious = suspiciousHeader(grid.header);
  if (suspicious) {
    warnings.push(
      `read as one column named ${JSON.stringify(grid.header[0])}, which holds ${suspicious}s: its lines do not split evenly on any separator; check the file`,
    );
  }
  return { ...grid, warnings };
}

/**
 * Reads a table from a `.csv`, `.tsv` or `.json` file or from inline `{columns, data}`,
 * stores it as canonical CSV in the artifact store and returns a reference to it.
 * Equal content always yields the same sha256 and uri. Throws TableLoadError.
 *
 * The result of an earlier load of the same unchanged file (same path, size and modification
 * time) is reused while its artifact still exists: a service answering many questions over
 * one table parses and hashes it once.
 */
export async function loadTable(
  source: TableSource,
  opts: { name?: string } = {},
): Promise<LoadedTable> {
  if (!("path" in source)) return loadTableUncached(source, opts);
  const key = await fileKey(source.path, opts.name ?? source.name ?? "");
  const hit = key ? loaded.get(key) : undefined;
  if (hit && (await exists(hit.table.uri))) {
    return { table: hit.table, warnings: [...hit.warnings] };
  }
  const result = await loadTableUncached(source, opts);
  if (key) loaded.set(key, result);
  return result;
}

const loaded = new BoundedCache<LoadedTable>(64);

async function fileKey(file: string, name: string): Promise<string | null> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return null;
    return [path.resolve(file), info.size, info.mtimeMs, name, artifactDir()].join("\0");
  } catch {
    return null;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

async function loadTableUncached(
  source: TableSource,
  opts: { name?: string },
): Promise<LoadedTable> {
  const file = "path" in source ? source.path : "<inline>";
  const grid =
    "path" in source
      ? await gridFromFile(source.path)
      : gridFromColumnsData(source.columns, source.data, file);
  const fallback = "path" in source ? path.basename(source.path, path.extname(source.path)) : "";
  const name = tableName(opts.name || source.name || fallback);
  const naming = uniqueColumnNames(grid.header);
  const { sha256, uri } = await putArtifact(formatCsv(naming.names, grid.rows), "csv");
  const table: TableRef = {
    id: `table:${name}`,
    name,
    uri,
    sha256,
    rows: grid.rows.length,
    columns: naming.names.map((column, i) => ({ name: column, dtype: inferDtype(grid.rows, i) })),
  };
  const warnings = [...(grid.warnings ?? []), ...naming.warnings];
  return { table, warnings: warnings.map((warning) => `${file}: ${warning}`) };
}
