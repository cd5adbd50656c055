import type { TableRef } from "../blackboard/schemas.js";
import {
  columnLetter,
  positionText,
  type RowPosition,
  rowIds,
  rowPlacesText,
  rowPosition,
} from "./cell-address.js";
import { isLargeTable } from "./profile.js";
import { readTable } from "./read.js";
import { renderTable } from "./render.js";

/*
 * Rows of a table shown where the user finds them: each with its line, sheet row, record or row
 * in a first column, at most a few, then how many more there are. Reports use it for the rows a
 * result comes from (its lineage) instead of a table's first rows.
 */

/** Rows shown before "and N more". */
export const SHOWN_ROWS = 10;
/** A table this wide shows its first column and the columns asked for, not all of them. */
const WIDE_TABLE_COLUMNS = 8;

/** A column's heading: its name, and its letter in a workbook (`gold (D)`). */
function heading(table: TableRef, column: string): string {
  const letter = columnLetter(table, column);
  return letter ? `${column} (${letter})` : column;
}

/**
 * Rows `rows` of `table` as a pipe table, cells as the file writes them, each with its place (`line 4`, `sheet row 9`,
 * `record 3`, `row 4`) first: at most `max` (default SHOWN_ROWS), then a line saying how many
 * more. A table wider than 8 columns shows its first column and `columns` only. A table too
 * large to parse here is described by its row places alone.
 */
export async function renderSourceRows(
  table: TableRef,
  rows: readonly number[],
  opts: { columns?: readonly string[] | null; max?: number } = {},
): Promise<string> {
  const max = opts.max ?? SHOWN_ROWS;
  const ids = rowIds(table, rows);
  if (ids.length === 0) return "(no rows)";
  if (await isLargeTable(table))
    return `${rowPlacesText(table, ids, max)} (not read: the table is large)`;
  // As written in the file ("$1,250,400", "05.03.2024"), where the reading changed the text.
  const text = table.reading?.text;
  const data = await readTable(text ? { ...table, uri: text.uri, sha256: text.sha256 } : table);
  const wanted = new Set(opts.columns ?? []);
  const columns = data.columns
    .map((name, index) => ({ name, index }))
    .filter(
      ({ name, index }) =>
        data.columns.length <= WIDE_TABLE_COLUMNS ||
        wanted.size === 0 ||
        index === 0 ||
        wanted.has(name),
    );
  const shown = ids.slice(0, max);
  const places = shown.map((r) => rowPosition(table, r));
  const unit = places.every((at) => at.unit === places[0]?.unit) ? places[0]?.unit : undefined;
  const lines = renderTable(
    [unit ?? "at", ...columns.map(({ name }) => heading(table, name))],
    shown.map((r, i) => {
      const at = places[i] as RowPosition;
      const cells = data.rows[r] ?? [];
      return [
        unit ? String(at.number) : positionText(at),
        ...columns.map(({ index }) => cells[index] ?? ""),
      ];
    }),
    { maxRows: max },
  );
  const more = ids.length - shown.length;
  return more > 0 ? `${lines}\nand ${more} more` : lines;
}

/**
 * Rows of a table the code produced, each with the place of the source row it came from in a
 * first column (`from`): at most `max` (default SHOWN_ROWS), then a line saying how many more.
 */
export function renderPlacedRows(
  columns: readonly string[],
  rows: readonly { place: string; cells: readonly string[] }[],
  max = SHOWN_ROWS,
): string {
  const shown = rows.slice(0, max);
  const lines = renderTable(
    ["from", ...columns],
    shown.map(({ place, cells }) => [place, ...columns.map((_, c) => cells[c] ?? "")]),
    { maxRows: max },
  );
  const more = rows.length - shown.length;
  return more > 0 ? `${lines}\nand ${more} more` : lines;
}
