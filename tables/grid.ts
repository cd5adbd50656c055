import { type CsvRecord, CsvSyntaxError, parseDelimited, raggedTail } from "./csv.js";
import { delimiterName, sniffDelimiter, suspiciousHeader } from "./delimiter.js";
import { TableLoadError } from "./errors.js";
import { cellJson, flattenRecords, isRecord } from "./json-records.js";

/** A table's cells as text, before its columns are named and it is stored. */
export interface Grid {
  header: string[];
  rows: string[][];
  /** What was guessed on the way in, for the user to know. */
  warnings?: string[];
  /** Delimited text: the 1-based line the header and each row start on. */
  lines?: { header: number; rows: number[] };
  /**
   * JSON: the pointer of the array of rows, and whether they are records or lists. Records are
   * flattened: nested objects into dotted columns (`address.city`).
   */
  json?: { pointer: string; shape: "records" | "rows" };
  /** JSON records: the columns (names as in `header`) whose cells are lists of scalars, as JSON text (`["a","b"]`). */
  lists?: string[];
  /** JSON records: each column of lists of records as a table of its own; the column keeps the count. */
  children?: GridChild[];
}

/** A list of records inside JSON records, as a table of its own. */
export interface GridChild {
  /** The column's dotted name in the parent: `orders`, `customer.orders`. */
  name: string;
  /** `_parent_row` (the 0-based row of the parent grid), then the records' flattened fields. */
  grid: Grid;
  /** The parent's column holding how many records each row's list has ("" when it has none). */
  parentColumn: string;
  /** Keys from the parent record to the list: record k of row r is at `<row r>/<path...>/k`. */
  path: string[];
}

/** Stored text of one value: missing -> empty, scalars via String(), the rest as JSON. */
export function cellText(value: unknown): string {
  return cellJson(value);
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function badShape(file: string, detail: string): TableLoadError {
  return new TableLoadError(file, `unusable JSON shape: ${detail}`);
}

/** The `{columns, data}` form, from a JSON file or passed inline. */
export function gridFromColumnsData(columns: unknown, data: unknown, file: string): Grid {
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

/**
 * An array of records; the columns are the union of their keys, in first-seen order, nested
 * objects flattened to dotted columns (see flattenRecords for lists and bounds).
 */
export function gridFromRecords(items: unknown[], file: string, flatten = true): Grid {
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
  const records = items as Record<string, unknown>[];
  if (flatten) return flattenRecords(records);
  const header = [...keys];
  return { header, rows: records.map((item) => header.map((key) => cellText(item[key]))) };
}

/** A JSON file's grid; `flatten: false` keeps nested values as JSON text (the literal reading). */
export function gridFromJson(text: string, file: string, flatten = true): Grid {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TableLoadError(file, `invalid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (Array.isArray(value)) {
    return { ...gridFromRecords(value, file, flatten), json: { pointer: "", shape: "records" } };
  }
  if (isRecord(value) && "columns" in value && "data" in value) {
    const grid = gridFromColumnsData(value.columns, value.data, file);
    return { ...grid, json: { pointer: "/data", shape: "rows" } };
  }
  // An API's envelope: {"prizes": [...]} or {"meta": {...}, "results": [...]}.
  const lists = isRecord(value)
    ? Object.entries(value).filter(
        ([, inner]) => Array.isArray(inner) && inner.length > 0 && inner.every(isRecord),
      )
    : [];
  const [only] = lists;
  if (only && lists.length === 1) {
    const [key, records] = only as [string, unknown[]];
    const pointer = `/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    return { ...gridFromRecords(records, file, flatten), json: { pointer, shape: "records" } };
  }
  const got = isRecord(value)
    ? `an object with keys ${Object.keys(value).slice(0, 5).join(", ") || "(none)"}`
    : kindOf(value);
  throw badShape(
    file,
    `expected a list of records or an object with "columns" and "data", got ${got}`,
  );
}

/** The records of a delimited text; a syntax error is the file's load error. */
export function delimitedRecords(text: string, delimiter: string, file: string): CsvRecord[] {
  try {
    return parseDelimited(text, delimiter);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new TableLoadError(file, error.message);
    throw error;
  }
}

/** A row whose field count is not the header's. */
export function raggedRow(file: string, line: number, fields: number, header: number) {
  return new TableLoadError(
    file,
    `ragged rows: line ${line} has ${plural(fields, "field")}, the header has ${header}`,
  );
}

/** The separator a file of this extension should have. */
export function expectedDelimiter(extension: string): string {
  return extension === ".tsv" ? "\t" : ",";
}

/** The warning for a file read with another separator than its extension says, if it was. */
export function delimiterWarning(
  extension: string,
  delimiter: string,
  how: "evenly" | "mostly",
): string | null {
  const expected = expectedDelimiter(extension);
  if (delimiter === expected) return null;
  const split = how === "evenly" ? "its lines split evenly on" : "its lines split on";
  return `read as ${delimiterName(delimiter)}-separated: a ${extension} file, but ${split} ${delimiterName(delimiter)}s, not ${delimiterName(expected)}s`;
}

export function gridFromDelimited(
  text: string,
  delimiter: string,
  file: string,
  records: CsvRecord[] = delimitedRecords(text, delimiter, file),
): Grid {
  const [first, ...all] = records;
  const header = first?.fields ?? [];
  const footer = raggedTail(all, header.length);
  const rest = all.slice(0, all.length - footer.length);
  for (const record of rest) {
    if (record.fields.length !== header.length) {
      throw raggedRow(file, record.line, record.fields.length, header.length);
    }
  }
  const grid: Grid = {
    header,
    rows: rest.map((record) => record.fields),
    lines: { header: first?.line ?? 1, rows: rest.map((record) => record.line) },
  };
  if (footer.length > 0) grid.warnings = [footerWarning(footer, header.length)];
  return grid;
}

function footerWarning(footer: readonly CsvRecord[], width: number): string {
  const first = footer[0]?.line ?? 0;
  const last = footer.at(-1)?.line ?? first;
  const where = first === last ? `line ${first}` : `lines ${first}-${last}`;
  const quoted = footer
    .slice(0, 3)
    .map((record) =>
      JSON.stringify(
        record.fields
          .filter((f) => f.trim() !== "")
          .join(" ")
          .slice(0, 80),
      ),
    )
    .join(", ");
  const more = footer.length > 3 ? ", ..." : "";
  return `${where} left out as a footer below the table (fewer fields than the header's ${width}): ${quoted}${more}`;
}

/**
 * A delimited text's grid: the separator sniffed from its first lines, with warnings. `parsed`:
 * its records split already (by textSheet), used when they were split on that separator.
 */
export function gridFromText(
  text: string,
  extension: string,
  file: string,
  parsed?: { delimiter: string; records: CsvRecord[] },
): Grid {
  const delimiter = sniffDelimiter(text, expectedDelimiter(extension));
  const records = parsed?.delimiter === delimiter ? parsed.records : undefined;
  const grid = gridFromDelimited(text, delimiter, file, records);
  const warnings: string[] = [...(grid.warnings ?? [])];
  const resplit = delimiterWarning(extension, delimiter, "evenly");
  if (resplit) warnings.push(resplit);
  const suspicious = suspiciousHeader(grid.header);
  if (suspicious) {
    warnings.push(
      `read as one column named ${JSON.stringify(grid.header[0])}, which holds ${suspicious}s: its lines do not split evenly on any separator; check the file`,
    );
  }
  return { ...grid, warnings };
}
