import type { TableRef } from "../blackboard/schemas.js";
import { columnLetter, rowIds, rowPosition, tableSource } from "../tables/cell-address.js";
import { isLargeTable } from "../tables/profile.js";
import { readTable, type TableData } from "../tables/read.js";
import { readingLines, rowUnit } from "../tables/reading-notes.js";
import type { CellRef, GridRow, RowKind, TableView } from "./schemas.js";

/*
 * A table as its user knows it, for the grid component: a window of its rows in the file's own
 * places (sheet rows, lines, records), its header rows and the rows the reading left out of the
 * data (titles, totals, notes, hidden and skipped rows) put back where they were, and the cells
 * a result is derived from lit up.
 */

/** Data rows a window shows at most. */
export const WINDOW_ROWS = 40;
/** Columns a grid shows at most (the lit ones are always among them). */
export const WINDOW_COLUMNS = 30;
/** Characters a cell shows at most. */
const CELL_CHARS = 200;

const clip = (text: string) =>
  text.length > CELL_CHARS
    ? `${Array.from(text)
        .slice(0, CELL_CHARS - 1)
        .join("")}…`
    : text;

export interface ViewOptions {
  /** Data rows to show (the lineage's); the table's first rows when absent. */
  focus?: readonly number[];
  highlight?: readonly CellRef[];
  highlightColumns?: readonly string[];
  /** The run's tables, where a reading's totals table is found by name. */
  tables?: readonly TableRef[];
}

/** The cells as the file writes them, where the reading kept that text. */
async function literalCells(ref: TableRef): Promise<TableData> {
  const text = ref.reading?.text;
  return readTable(text ? { ...ref, uri: text.uri, sha256: text.sha256 } : ref);
}

/** Rows outside the data, by place: what the reading says about them. */
function asideRows(ref: TableRef, totalCells: (i: number) => string[]): GridRow[] {
  const reading = ref.reading;
  if (!reading) return [];
  const out: GridRow[] = [];
  const add = (place: number, kind: RowKind, text: string | null, cells: string[] = []) =>
    out.push({ place, kind, row: null, cells, text });
  for (const [i, place] of (reading.totals?.rows ?? []).entries()) {
    add(place, "total", reading.totals?.labels[i] ?? "total", totalCells(i));
  }
  for (const note of reading.notes ?? []) add(note.row, "note", note.text);
  for (const place of reading.hidden?.rows ?? []) add(place, "hidden", "hidden in the sheet");
  for (const place of reading.skipped ?? []) add(place, "skipped", "skipped as asked");
  for (const place of reading.repeatedHeaders ?? []) add(place, "skipped", "repeats the header");
  return out;
}

/** The header rows: one per level of the header paths, at their places when known. */
function headerRows(ref: TableRef, columns: string[]): GridRow[] {
  const origin = ref.origin;
  const places = ref.reading?.headerRows ?? (origin && "header" in origin ? [origin.header] : []);
  const byName = new Map(ref.columns.map((c) => [c.name, c]));
  const depth = Math.max(1, ...columns.map((name) => byName.get(name)?.path?.length ?? 1));
  return Array.from({ length: depth }, (_, level) => ({
    place: places[level] ?? null,
    kind: "header" as const,
    row: null,
    cells: columns.map((name) => {
      const path = byName.get(name)?.path;
      return path && path.length > 1 ? (path[level] ?? "") : level === depth - 1 ? name : "";
    }),
    text: null,
  }));
}

/**
 * The data rows shown (the focus rows, or the first ones; at most WINDOW_ROWS) and how many rows
 * they are taken from.
 */
function windowOf(ref: TableRef, focus: readonly number[] | undefined) {
  const ids = focus ? rowIds(ref, focus) : [];
  const of = focus ? ids.length : ref.rows;
  if (ids.length > 0) return { rows: ids.slice(0, WINDOW_ROWS), of };
  return { rows: Array.from({ length: Math.min(ref.rows, WINDOW_ROWS) }, (_, i) => i), of };
}

/** The columns shown: the lit ones first kept, then the others in order, at most WINDOW_COLUMNS. */
function columnsOf(ref: TableRef, lit: ReadonlySet<string>): number[] {
  const all = ref.columns.map((_, i) => i);
  if (all.length <= WINDOW_COLUMNS) return all;
  const keep = new Set(all.filter((i) => lit.has(ref.columns[i]?.name ?? "")));
  for (const i of all) if (keep.size < WINDOW_COLUMNS) keep.add(i);
  return all.filter((i) => keep.has(i));
}

/** The grid view of `ref`, around `opts.focus`, with `opts.highlight` lit. */
export async function tableView(ref: TableRef, opts: ViewOptions = {}): Promise<TableView> {
  const highlight = [...(opts.highlight ?? [])];
  const highlightColumns = [...(opts.highlightColumns ?? [])];
  const lit = new Set([...highlight.map((c) => c.column), ...highlightColumns]);
  const shownColumns = columnsOf(ref, lit);
  const names = shownColumns.map((i) => ref.columns[i]?.name ?? "");
  const { rows: window, of } = windowOf(ref, opts.focus);
  const large = await isLargeTable(ref);
  const data = large ? null : await literalCells(ref);
  const pick = (cells: readonly string[] | undefined) =>
    shownColumns.map((i) => clip(cells?.[i] ?? ""));

  const totalsName = ref.reading?.totals?.table;
  const totalsRef = totalsName ? opts.tables?.find((t) => t.name === totalsName) : undefined;
  const totals = totalsRef && !large ? await literalCells(totalsRef).catch(() => null) : null;

  const dataRows: GridRow[] = window.map((row) => ({
    place: rowPosition(ref, row).number,
    kind: "data",
    row,
    cells: data ? pick(data.rows[row]) : [],
    text: null,
  }));
  // Rows outside the data go where they were, within the window's places (or after it, when
  // the window reaches the table's end).
  const first = dataRows[0]?.place ?? 0;
  const last = dataRows.at(-1)?.place ?? 0;
  const reachesEnd = window.length === 0 || window.at(-1) === ref.rows - 1;
  const aside = asideRows(ref, (i) => (totals ? pick(totals.rows[i]) : [])).filter(
    (r) => r.place !== null && (reachesEnd || (r.place > first && r.place < last)),
  );
  const titles: GridRow[] = (ref.reading?.title ?? []).map((text) => ({
    place: null,
    kind: "title",
    row: null,
    cells: [],
    text,
  }));
  const body = [...dataRows, ...aside].sort((a, b) => (a.place ?? 0) - (b.place ?? 0));
  return {
    table: ref.name,
    source: tableSource(ref),
    unit: rowUnit(ref),
    rows: ref.rows,
    columns: shownColumns.map((i) => {
      const column = ref.columns[i];
      return {
        name: column?.name ?? "",
        letter: column ? columnLetter(ref, column.name) : null,
        path: column?.path ?? [],
        unit: column?.unit ?? null,
        dtype: column?.dtype ?? "object",
      };
    }),
    grid: [...titles, ...headerRows(ref, names), ...body],
    more: Math.max(0, of - window.length),
    withheld: large ? "the table is too large to show its cells here" : null,
    highlight,
    highlightColumns,
    words: readingLines(ref),
  };
}
