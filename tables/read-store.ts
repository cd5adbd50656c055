import type { TableOrigin, TableReading, TableRef } from "../blackboard/schemas.js";
import { MAX_LISTED_PLACES } from "../blackboard/schemas.js";
import { putArtifact } from "../storage/artifacts.js";
import { formatCsv } from "./csv.js";
import { inferDtype } from "./dtypes.js";
import { uniqueColumnNames } from "./names.js";
import type { ReadTable } from "./reading.js";
import { rowPlaces } from "./row-places.js";

/** A table as stored, with what was fixed or guessed on the way in. */
export interface StoredTable {
  table: TableRef;
  warnings: string[];
}

/** Where a read table's rows are, given where its file's rows are numbered from. */
export type OriginOf = (places: readonly number[], header: number | undefined) => TableOrigin;

const listed = <T>(items: readonly T[]): T[] => items.slice(0, MAX_LISTED_PLACES);

async function describe(
  name: string,
  names: readonly string[],
  rows: readonly (readonly string[])[],
  origin: TableOrigin,
): Promise<TableRef> {
  const { sha256, uri } = await putArtifact(formatCsv([...names], rows as string[][]), "csv");
  return {
    id: `table:${name}`,
    name,
    uri,
    sha256,
    rows: rows.length,
    columns: names.map((column, i) => ({ name: column, dtype: inferDtype(rows, i) })),
    origin,
  };
}

function readingOf(read: ReadTable, totalsTable: string | undefined): TableReading {
  const reading: TableReading = {};
  if (read.title.length > 0) reading.title = read.title.slice(0, 10).map((t) => t.slice(0, 500));
  // Inline rows number their `columns` 0: a place is positive.
  const headerRows = read.headerPlaces.filter((place) => place > 0);
  if (read.headerPlaces.length > 1 && headerRows.length > 0)
    reading.headerRows = headerRows.slice(0, 20);
  if (read.totals.places.length > 0) {
    reading.totals = {
      rows: listed(read.totals.places),
      labels: listed(read.totals.labels).map((label) => label.slice(0, 200)),
    };
    if (totalsTable) reading.totals.table = totalsTable;
  }
  if (read.notes.length > 0) {
    reading.notes = read.notes
      .slice(0, 20)
      .map((note) => ({ ...note, text: note.text.slice(0, 500) }));
  }
  if (read.hidden.rows.length > 0 || read.hidden.columns.length > 0) {
    reading.hidden = {};
    if (read.hidden.rows.length > 0) reading.hidden.rows = listed(read.hidden.rows);
    if (read.hidden.columns.length > 0) reading.hidden.columns = listed(read.hidden.columns);
  }
  if (read.skipped.length > 0) reading.skipped = listed(read.skipped);
  if (read.repeatedHeaders.length > 0) reading.repeatedHeaders = listed(read.repeatedHeaders);
  if (read.groupColumn) reading.groupColumn = read.groupColumn;
  return reading;
}

function differs(a: readonly (readonly string[])[], b: readonly (readonly string[])[]): boolean {
  return a.some((row, r) => row.some((cell, c) => cell !== b[r]?.[c]));
}

/**
 * Stores a read table as canonical CSV under `name`, with its column facts and reading; its
 * literal text beside it when reading changed any cell, and its total rows as the table
 * `<name>_totals` (same columns), so that code can still reach them.
 */
export async function storeRead(
  read: ReadTable,
  name: string,
  originOf: OriginOf,
): Promise<StoredTable[]> {
  const naming = uniqueColumnNames(read.header);
  const header = read.headerPlaces.at(-1);
  const table = await describe(name, naming.names, read.rows, originOf(read.places, header));
  table.columns = table.columns.map((column, i) => {
    const source = naming.sources[i];
    return source ? { ...column, source } : column;
  });
  const stored: StoredTable[] = [{ table, warnings: naming.warnings }];
  if (!read.interpreted) return stored;
  table.columns = table.columns.map((column, i) => ({ ...column, ...read.columns[i] }));
  let totalsName: string | undefined;
  if (read.totals.rows.length > 0) {
    totalsName = `${name}_totals`;
    const totals = await describe(
      totalsName,
      naming.names,
      read.totals.rows,
      originOf(read.totals.places, header),
    );
    totals.columns = totals.columns.map((column, i) => ({ ...column, ...read.columns[i] }));
    stored.push({ table: totals, warnings: [] });
  }
  const reading = readingOf(read, totalsName);
  if (differs(read.rows, read.text)) {
    const { sha256, uri } = await putArtifact(formatCsv(naming.names, read.text), "csv");
    reading.text = { uri, sha256 };
  }
  table.reading = reading;
  const summary = readingSummary(table);
  if (summary) stored[0]?.warnings.push(summary);
  return stored;
}

/**
 * One line on what a reading did, for the user who did not ask for it: `tableminds inspect`
 * shows it whole, `--raw` undoes it.
 */
function readingSummary(table: TableRef): string | null {
  const reading = table.reading ?? {};
  const done: string[] = [];
  if (reading.title?.length) done.push("a title above it");
  const depth = Math.max(0, ...table.columns.map((column) => column.path?.length ?? 0));
  if (depth > 1) {
    const example = table.columns.find((column) => (column.path?.length ?? 0) > 1)?.name;
    done.push(`a header of ${depth} rows as paths ("${example}")`);
  }
  const totals = reading.totals?.rows.length ?? 0;
  if (totals > 0) {
    const where = reading.totals?.table ? ` (kept in ${reading.totals.table})` : "";
    done.push(`${totals} total row${totals === 1 ? "" : "s"} left out${where}`);
  }
  const repeated = reading.repeatedHeaders?.length ?? 0;
  if (repeated > 0)
    done.push(`${repeated} repeated header row${repeated === 1 ? "" : "s"} left out`);
  const notes = reading.notes?.length ?? 0;
  if (notes > 0) done.push(`${notes} note${notes === 1 ? "" : "s"} left out`);
  const converted = table.columns.filter((column) => column.reading).length;
  if (converted > 0)
    done.push(`${converted} column${converted === 1 ? "" : "s"} of formatted values read`);
  if (done.length === 0) return null;
  return `table ${table.name} read as an analyst would: ${done.join(", ")}; tableminds inspect shows it, --raw reads it literally`;
}

/** The origin function of a workbook's sheet. */
export function sheetOrigin(
  format: "xlsx" | "xlsm" | "xls",
  file: string,
  sheet: string,
  letters: readonly string[],
): OriginOf {
  return (places, header) => ({
    format,
    file,
    sheet,
    header: header ?? 1,
    rows: rowPlaces(places),
    columns: [...letters],
  });
}

/** The origin function of a CSV or TSV file (places are lines). */
export function lineOrigin(format: "csv" | "tsv", file: string): OriginOf {
  return (places, header) => ({
    format,
    file,
    header: header ?? 1,
    lines: rowPlaces(places),
  });
}

/** The origin function of inline rows: a place p is `data[p - 1]`. */
export const inlineOrigin: OriginOf = (places) =>
  places.every((place, i) => place === i + 1)
    ? { format: "inline" }
    : { format: "inline", rows: rowPlaces(places) };
