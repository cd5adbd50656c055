import type { TableOrigin, TableRef } from "../blackboard/schemas.js";
import { placeOf } from "./row-places.js";

/*
 * Where a source row or cell is, in the coordinates the user knows: a workbook's A1 address
 * (`'P&L FY2024'!D9`), a text file's line, a JSON file's record, a Parquet file's row. Row ids
 * are the 0-based positions of the table as ingested (the DataFrame's default index); every
 * ordinal shown to the user counts from 1 (`record 3` is the third record, `row 4` the fourth
 * row), except file lines and sheet rows, which are shown as the file and the sheet number
 * them. A table without an origin (one the code produced) is addressed by its name.
 */

/** Rows or cells listed before "and N more". */
const MAX_LISTED = 10;

/** A sheet name as Excel writes it in a reference: quoted when it must be, `'` doubled. */
export function sheetReference(sheet: string): string {
  const plain =
    /^[A-Za-z_][A-Za-z0-9_.]*$/.test(sheet) &&
    // Names that read as a cell (A1, XFD100) or an R1C1 reference must be quoted.
    !/^[A-Za-z]{1,3}[0-9]+$/.test(sheet) &&
    !/^(R|C|R[0-9]+|C[0-9]+|R[0-9]*C[0-9]*)$/i.test(sheet);
  return plain ? sheet : `'${sheet.replaceAll("'", "''")}'`;
}

/** Where a row is, as a unit and a number: `line 4`, `row 9` of a sheet, `record 3`, `row 4`. */
export interface RowPosition {
  unit: "line" | "sheet row" | "record" | "row" | "data row";
  /** 1-based. */
  number: number;
}

/**
 * Where row `row` of `table` is: the line it starts on in a CSV/TSV file, its sheet row in a
 * workbook, its record in JSON, its row in a Parquet file or inline rows. A row whose line or
 * sheet row was not recorded (past the recorded runs of a huge table) is its `data row`.
 */
export function rowPosition(table: TableRef, row: number): RowPosition {
  const origin = table.origin;
  const ordinal = row + 1;
  switch (origin?.format) {
    case "csv":
    case "tsv": {
      const line = origin.lines && placeOf(origin.lines, row);
      return line ? { unit: "line", number: line } : { unit: "data row", number: ordinal };
    }
    case "xlsx":
    case "xlsm":
    case "xls": {
      const sheetRow = placeOf(origin.rows, row);
      return sheetRow
        ? { unit: "sheet row", number: sheetRow }
        : { unit: "data row", number: ordinal };
    }
    case "json":
      return { unit: "record", number: ordinal };
    case "inline": {
      // Header rows or totals left out of the data: the row's place among the rows passed.
      const place = origin.rows && placeOf(origin.rows, row);
      return { unit: "row", number: place ?? ordinal };
    }
    default:
      return { unit: "row", number: ordinal };
  }
}

/** The column letter of `column` in a workbook's table; null when it has none. */
export function columnLetter(table: TableRef, column: string): string | null {
  const origin = table.origin;
  if (origin?.format !== "xlsx" && origin?.format !== "xlsm" && origin?.format !== "xls")
    return null;
  const index = table.columns.findIndex((c) => c.name === column);
  return index < 0 ? null : (origin.columns[index] ?? null);
}

type Workbook = Extract<TableOrigin, { sheet: string }>;

function isWorkbook(origin: TableOrigin | undefined): origin is Workbook {
  return origin !== undefined && "sheet" in origin;
}

/** What a column is called where the table came from: a JSON record's field, else a column. */
function columnWord(origin: TableOrigin | undefined): string {
  return origin?.format === "json" && origin.shape === "records" ? "field" : "column";
}

/**
 * Where row `row` of `table` is, for a user to find it: `medals.csv line 4`,
 * `'P&L FY2024'!B9:D9` (the row's cells in the sheet), `planets.json record 3`,
 * `medals.parquet row 4`, `row 4 of table t` (inline rows, or a table the code produced).
 */
export function rowAddress(table: TableRef, row: number): string {
  const origin = table.origin;
  const at = rowPosition(table, row);
  if (isWorkbook(origin)) {
    const sheet = sheetReference(origin.sheet);
    const first = origin.columns[0];
    const last = origin.columns.at(-1);
    if (at.unit !== "sheet row" || !first || !last) return `${sheet} ${at.unit} ${at.number}`;
    return first === last
      ? `${sheet}!${first}${at.number}`
      : `${sheet}!${first}${at.number}:${last}${at.number}`;
  }
  if (origin && "file" in origin) return `${origin.file} ${at.unit} ${at.number}`;
  return `${at.unit} ${at.number} of table ${table.name}`;
}

/**
 * Where the cell at row `row`, column `column` of `table` is: `'P&L FY2024'!D9` in a workbook
 * (sheet quoted as Excel quotes it), `medals.csv line 4, column gold`,
 * `planets.json record 3, field mass`, `medals.parquet row 4, column gold`,
 * `row 4 of table t, column gold`.
 */
export function cellAddress(table: TableRef, row: number, column: string): string {
  const origin = table.origin;
  if (isWorkbook(origin)) {
    const letter = columnLetter(table, column);
    const at = rowPosition(table, row);
    if (letter && at.unit === "sheet row") {
      return `${sheetReference(origin.sheet)}!${letter}${at.number}`;
    }
    return `${rowAddress(table, row)}, column ${letter ?? column}`;
  }
  return `${rowAddress(table, row)}, ${columnWord(origin)} ${column}`;
}

/**
 * Where column `column` of `table` is: `'P&L FY2024'!D:D`, `column gold of medals.csv`,
 * `field mass of planets.json`, `column gold of table t`.
 */
export function columnAddress(table: TableRef, column: string): string {
  const origin = table.origin;
  const letter = columnLetter(table, column);
  if (isWorkbook(origin) && letter) return `${sheetReference(origin.sheet)}!${letter}:${letter}`;
  const where = origin && "file" in origin ? origin.file : `table ${table.name}`;
  return `${columnWord(origin)} ${column} of ${where}`;
}

/**
 * Where column `column`'s name is written: its header cell in a workbook (`'P&L FY2024'!D3`),
 * the header line of a CSV/TSV file (`medals.csv line 1, column gold`); elsewhere the column
 * itself (columnAddress).
 */
export function headerAddress(table: TableRef, column: string): string {
  const origin = table.origin;
  if (isWorkbook(origin)) {
    const letter = columnLetter(table, column);
    if (letter) return `${sheetReference(origin.sheet)}!${letter}${origin.header}`;
  }
  if (origin?.format === "csv" || origin?.format === "tsv") {
    return `${origin.file} line ${origin.header}, column ${column}`;
  }
  return columnAddress(table, column);
}

/** A row's place in words: `line 4`, `sheet row 9`, `record 3`, `row 4`. */
export function positionText(at: RowPosition): string {
  return `${at.unit} ${at.number}`;
}

/** The valid, distinct row ids, ascending. */
export function rowIds(table: TableRef, rows: readonly number[]): number[] {
  const valid = rows.filter((r) => Number.isInteger(r) && r >= 0 && r < table.rows);
  return [...new Set(valid)].sort((a, b) => a - b);
}

/** A source table as anchors and lineage name it: by name, and `df` is the first table. */
export function tableNamed(tables: readonly TableRef[], name: string): TableRef | undefined {
  return tables.find((t) => t.name === name) ?? (name === "df" ? tables[0] : undefined);
}

/** Where the table is, for a heading: its file (and sheet), else its name. */
export function tableSource(table: TableRef): string {
  const origin = table.origin;
  if (origin && "sheet" in origin) return `${origin.file}, sheet ${JSON.stringify(origin.sheet)}`;
  if (origin && "file" in origin) return origin.file;
  return `table ${table.name}`;
}

/** Ascending numbers as runs of neighbours: [2, 3, 4, 9] -> [[2, 4], [9, 9]]. */
function runsOf(numbers: readonly number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const n of numbers) {
    const last = runs.at(-1);
    if (last && last[1] + 1 === n) last[1] = n;
    else runs.push([n, n]);
  }
  return runs;
}

/**
 * The places of rows, runs of neighbours joined: `lines 2-4, 9`, `sheet rows 5, 7`,
 * `records 1-3`; at most `max` places, then `and N more`.
 */
export function rowPlacesText(table: TableRef, rows: readonly number[], max = MAX_LISTED): string {
  const ids = rowIds(table, rows);
  const groups: { unit: string; numbers: number[] }[] = [];
  for (const at of ids.slice(0, max).map((r) => rowPosition(table, r))) {
    const group = groups.at(-1);
    if (group?.unit === at.unit) group.numbers.push(at.number);
    else groups.push({ unit: at.unit, numbers: [at.number] });
  }
  const parts = groups.map(({ unit, numbers }) => {
    const text = runsOf(numbers).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`));
    return `${unit}${numbers.length > 1 ? "s" : ""} ${text.join(", ")}`;
  });
  const more = ids.length - Math.min(ids.length, max);
  return more > 0 ? `${parts.join(", ")} and ${more} more` : parts.join(", ");
}

/**
 * Cells of one column in the user's coordinates, neighbours joined: `'P&L FY2024'!D5:D7, D9`
 * in a workbook, `medals.csv lines 3-12, column gold` elsewhere; at most `max` rows, then
 * `and N more`.
 */
export function cellsAddress(
  table: TableRef,
  rows: readonly number[],
  column: string,
  max = MAX_LISTED,
): string {
  const ids = rowIds(table, rows);
  const [first] = ids;
  if (first === undefined) return cellAddress(table, rows[0] ?? 0, column);
  if (ids.length === 1) return cellAddress(table, first, column);
  const origin = table.origin;
  const letter = columnLetter(table, column);
  const positions = ids.slice(0, max).map((r) => rowPosition(table, r));
  const more = ids.length - positions.length;
  const tail = more > 0 ? ` and ${more} more` : "";
  if (isWorkbook(origin) && letter && positions.every((at) => at.unit === "sheet row")) {
    const text = runsOf(positions.map((at) => at.number))
      .map(([a, b]) => (a === b ? `${letter}${a}` : `${letter}${a}:${letter}${b}`))
      .join(", ");
    return `${sheetReference(origin.sheet)}!${text}${tail}`;
  }
  const where = origin && "file" in origin ? origin.file : `table ${table.name}`;
  return `${where} ${rowPlacesText(table, ids, max)}, ${columnWord(origin)} ${column}`;
}
