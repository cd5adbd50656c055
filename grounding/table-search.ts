import type { TableRef } from "../blackboard/schemas.js";
import { readTable, type TableData } from "../tables/read.js";
import { type Claimed, containsWords, normalizeText } from "./matching.js";
import { type CarryOptions, numberCarried, type ParsedNumber, parseNumber } from "./numbers.js";

/*
 * Searching tables for an answer item: source tables and the intermediate tables code left
 * behind, read through tables/read.ts and indexed once per parsed table.
 */

/** Tables larger than this are not searched cell by cell. */
const MAX_SEARCHED_CELLS = 500_000;

export interface PreparedCell {
  row: number;
  column: string;
  raw: string;
  norm: string;
  number: ParsedNumber | null;
}

export interface PreparedTable {
  columns: { name: string; norm: string }[];
  cells: PreparedCell[];
}

/** Normalized cells per parsed table; read.ts caches the parsed tables themselves. */
const preparedTables = new WeakMap<TableData, PreparedTable>();

function prepare(data: TableData): PreparedTable {
  const known = preparedTables.get(data);
  if (known) return known;
  const cells: PreparedCell[] = [];
  data.rows.forEach((row, r) => {
    row.forEach((raw, c) => {
      const column = data.columns[c];
      if (column === undefined || raw.trim() === "") return;
      cells.push({ row: r, column, raw, norm: normalizeText(raw), number: parseNumber(raw) });
    });
  });
  const prepared = {
    columns: data.columns.map((name) => ({ name, norm: normalizeText(name) })),
    cells,
  };
  preparedTables.set(data, prepared);
  return prepared;
}

/** Cells (and a column name) of a table that carry an item: equal text first, else whole words. */
export function tableHits(
  item: Claimed,
  table: PreparedTable,
  options: CarryOptions,
): { cells: PreparedCell[]; column: string | null } {
  const target = item.number;
  if (target) {
    const cells = table.cells.filter(
      (cell) => cell.number !== null && numberCarried(target, cell.number, options),
    );
    return { cells, column: null };
  }
  if (!item.norm) return { cells: [], column: null };
  const column = table.columns.find((c) => c.norm === item.norm)?.name ?? null;
  const equal = table.cells.filter((cell) => cell.norm === item.norm);
  // Short words ("no", "us") are only taken whole; codes such as "8f" may sit inside a cell.
  const specific = item.norm.length >= 4 || (/\d/.test(item.norm) && /\p{L}/u.test(item.norm));
  if (equal.length > 0 || !specific) return { cells: equal, column };
  return { cells: table.cells.filter((cell) => containsWords(cell.norm, item.norm)), column };
}

export interface LoadedTable {
  /** The evidence id of an intermediate table; null for a source table. */
  evidenceId: string | null;
  ref: TableRef;
  table: PreparedTable;
}

/** Reads and indexes the tables to search; one that cannot be read is skipped. */
export async function loadTables(
  wanted: { evidenceId: string | null; ref: TableRef }[],
): Promise<LoadedTable[]> {
  const loaded: LoadedTable[] = [];
  for (const { evidenceId, ref } of wanted) {
    if (ref.rows * Math.max(1, ref.columns.length) > MAX_SEARCHED_CELLS) continue;
    // A table that cannot be read (its artifact is gone) is simply not searched.
    const data = await readTable(ref).catch(() => null);
    if (data) loaded.push({ evidenceId, ref, table: prepare(data) });
  }
  return loaded;
}
