/**
 * The structure of a sheet, read as a careful analyst reads it before computing (issue 23):
 * title and caption rows, multi-row headers flattened into header paths, total and subtotal
 * rows, notes and sources, section rows, hidden rows and columns, and several tables in one
 * sheet. Pure: it only classifies cells and rows; parsing values is values.ts's work.
 *
 * Every rule leans towards reading a sheet as a plain table: a row is taken for a title, a
 * header row, a total or a note only on evidence (a merge, a label, a sum that adds up, a
 * blank row setting it apart), never on its position alone.
 */

import {
  type HeaderRead,
  headerPath,
  headerPaths,
  mergesIn,
  placedTitle,
  readHeader,
  repeatsHeader,
} from "./structure-header.js";
import { findNotes, rowRoles } from "./structure-rows.js";
import {
  type Draft,
  dataLike,
  LOOK_BELOW,
  labelColumn,
  NOTE_MARK,
  View,
} from "./structure-view.js";

export { cellKindOfText, plainNumber, rawSheetFromRows } from "./structure-cells.js";

export type CellKind = "empty" | "text" | "number" | "date" | "bool";

export interface RawCell {
  text: string;
  kind: CellKind;
  formula?: boolean;
  /** What the workbook displays when its number format makes that differ from `text` ("12.5%"). */
  shown?: string;
  /** The workbook's indent level of the cell (its alignment), when it has one. */
  indent?: number;
}

/** Inclusive rectangle of indexes into RawSheet.cells. */
export interface Span {
  row0: number;
  col0: number;
  row1: number;
  col1: number;
}

export interface RawSheet {
  /** Every row of the used range, empty rows included, all one width. */
  cells: RawCell[][];
  /** 1-based sheet row (workbook) or file line (text) of each row. */
  rowNumbers: number[];
  /** Workbook column letter of each column. */
  letters?: string[];
  merges: Span[];
  /** Indexes into cells. */
  hiddenRows: number[];
  hiddenColumns: number[];
}

export interface StructureOverrides {
  /** The header's height in rows (0: no header); a sheet given overrides is read as one table. */
  headerRows?: number;
  /** Leading rows dropped; given (even 0), no title rows are looked for. */
  skipRows?: number;
}

export interface StructureOptions extends StructureOverrides {
  /** Keep hidden rows and columns (they are still listed as hidden). */
  includeHidden?: boolean;
  /** The number a cell's text stands for, for the sums that find totals; plainNumber by default. */
  numberOf?: (text: string) => number | null;
  /** The decimal mark numberOf reads (for the places a rounded sum may miss by); "." by default. */
  decimal?: "." | ",";
}

export interface TableBlock {
  /** Title / caption lines above the header. */
  title: string[];
  /** Indexes into cells. */
  headerRows: number[];
  /** Kept column indexes (hidden and all-empty columns left out). */
  columns: number[];
  /** One per kept column: ["Revenue", "Q3"], ["Region"]; [] when the header names nothing. */
  headerPaths: string[][];
  /** Data row indexes kept. */
  rows: number[];
  /** Total and subtotal rows, left out of rows. */
  totals: { row: number; label: string; by: "label" | "arithmetic" }[];
  /** Notes, footnotes and sources below or beside the data, left out of rows. */
  notes: { row: number; text: string }[];
  /** Hidden rows within the table and hidden columns holding something in its rows; left out unless includeHidden. */
  hiddenRows: number[];
  hiddenColumns: number[];
  /** Kept columns holding formula cells in data rows. */
  formulaColumns: number[];
  /** One per kept column, from a row of units under the header ("'000", "$m"); "" for none. */
  units?: string[];
  /** Rows repeating the header inside the data, left out of rows. */
  repeatedHeaders?: number[];
  /** Empty label cells that take the label above them (a region written on its first row only). */
  fills?: { row: number; column: number; text: string }[];
  /** Non-empty rows dropped by `skipRows` (on the first table). */
  skipped?: number[];
  /**
   * Hierarchical row labels: a parent label per data row when rows are grouped under section
   * rows or indented under a parent; a name for the added column and one value per `rows` entry.
   */
  rowGroups?: { name: string; values: string[] };
}

// --- splitting the sheet into tables --------------------------------------------------------

/** The rows the rules look at, in order: after skipRows, hidden ones left out. */
function rowOrder(view: View): number[] {
  const start = Math.max(0, view.options.skipRows ?? 0);
  const order: number[] = [];
  for (let r = start; r < view.sheet.cells.length; r++) {
    if (view.options.includeHidden || !view.hiddenRow.has(r)) order.push(r);
  }
  return order;
}

/** Runs of non-blank rows, blank rows between them dropped. */
function segmentsOf(view: View, order: readonly number[]): number[][] {
  const segments: number[][] = [];
  let current: number[] = [];
  for (const r of order) {
    if (view.filledCols(r).length > 0 && !view.dashes(r)) current.push(r);
    else if (current.length > 0) {
      segments.push(current);
      current = [];
    }
  }
  if (current.length > 0) segments.push(current);
  return segments;
}

/** How many of a segment's leading rows are single texts above a row of several cells with a word. */
function leadingTitles(view: View, segment: readonly number[], narrow: boolean): number {
  if (narrow) return 0;
  let n = 0;
  while (n < segment.length && view.single(segment[n] as number) !== null) n++;
  const next = segment[n];
  if (next === undefined) return n;
  const filled = view.filledCols(next);
  const worded = filled.some((c) => view.cell(next, c).kind === "text");
  // A lone name further right than the header is the header's own (",value" over an unnamed index).
  const placed = segment.slice(0, n).every((r) => placedTitle(view, r, filled[0] ?? 0));
  return filled.length >= 2 && worded && placed ? n : 0;
}

/** A segment after a blank row starts a new table when it opens with a header over data. */
function startsTable(view: View, current: Draft, rest: readonly number[]): boolean {
  const head = rest[0];
  const after = rest.slice(1, 1 + LOOK_BELOW);
  if (head === undefined || after.length === 0 || !view.allText(head, 2)) return false;
  const previous = current.body[0];
  if (previous !== undefined) {
    const same = view.cols.every((c) => view.text(head, c) === view.text(previous, c));
    if (same) return true;
  }
  return view.contrast(head, dataLike(view, after));
}

/** Pushes without spreading: a table's rows are too many for a call's arguments. */
function append(target: number[], ...sources: readonly number[][]): void {
  for (const source of sources) for (const r of source) target.push(r);
}

function drafts(view: View, narrow: boolean): Draft[] {
  const order = rowOrder(view);
  const segments = segmentsOf(view, order);
  const lookForTitles = view.options.skipRows === undefined;
  const split =
    view.options.headerRows === undefined && view.options.skipRows === undefined && !narrow;
  const out: Draft[] = [];
  let pending: number[] = [];
  let current: Draft | undefined;
  for (const segment of segments) {
    const allSingle = !narrow && segment.every((r) => view.single(r) !== null);
    if (allSingle && (current || lookForTitles)) {
      append(pending, segment);
      continue;
    }
    const lead = lookForTitles || current ? leadingTitles(view, segment, narrow) : 0;
    const titles = segment.slice(0, lead);
    const rest = segment.slice(lead);
    if (!current) {
      current = lookForTitles
        ? { titles: [...pending, ...titles], body: rest }
        : { titles: [], body: [...pending, ...segment] };
      pending = [];
      out.push(current);
    } else if (split && startsTable(view, current, rest)) {
      // Single lines between two tables: the marked ones close the first, the others title the next.
      const marked = pending.filter((r) => NOTE_MARK.test(view.single(r) ?? ""));
      append(current.body, marked);
      current = { titles: [...pending.filter((r) => !marked.includes(r)), ...titles], body: rest };
      pending = [];
      out.push(current);
    } else {
      append(current.body, pending, segment);
      pending = [];
    }
  }
  if (current) append(current.body, pending);
  else if (pending.length > 0) out.push({ titles: [], body: pending });
  return out;
}

// --- one table -------------------------------------------------------------------------------

/** Columns right of an empty column, unnamed and holding a few words: notes beside the data. */
function besideNotes(view: View, kept: number[], header: number[], rows: number[]): number[] {
  const at = kept.map((c) => view.cols.indexOf(c));
  let gap = -1;
  for (let i = 1; i < at.length; i++) if ((at[i] as number) > (at[i - 1] as number) + 1) gap = i;
  if (gap < 0 || rows.length < 2) return [];
  const side = kept.slice(gap);
  const unnamed = side.every((c) => header.every((r) => !view.filled(r, c)));
  const sparse = side.every((c) => {
    const filled = rows.filter((r) => view.filled(r, c));
    return filled.every((r) => view.cell(r, c).kind === "text") && filled.length * 2 <= rows.length;
  });
  return unnamed && sparse ? side : [];
}

/** Upper header labels span the blanks right of them: a header of several rows, no merges. */
function spansBlanks(view: View, header: readonly number[]): boolean {
  return header.length > 1 && mergesIn(view, header[0] ?? 0, header.at(-1) ?? 0).length === 0;
}

/** Runs of two or more adjacent columns under one upper header name. */
function headerSpans(view: View, header: readonly number[], fill: boolean): number[][] {
  if (header.length < 2) return [];
  const spans: number[][] = [];
  let run: number[] = [];
  let name = "";
  for (const c of view.cols) {
    const path = headerPath(view, header, c, fill);
    const top = path.length >= 2 ? (path[0] as string) : "";
    if (top !== "" && top === name) run.push(c);
    else {
      if (run.length >= 2) spans.push(run);
      run = top === "" ? [] : [c];
      name = top;
    }
  }
  if (run.length >= 2) spans.push(run);
  return spans;
}

/**
 * The tables of a draft: one, or several when a header is repeated inside the data under title
 * lines of its own (small tables stacked without blank rows). A header repeated without a title
 * is left out of the rows.
 */
function tablesOf(view: View, first: Draft, narrow: boolean): TableBlock[] {
  const blocks: TableBlock[] = [];
  let draft: Draft | undefined = first;
  while (draft) {
    const read = readHeader(view, draft);
    const names = read.header.filter((r) => !read.units.includes(r)).at(-1);
    const repeated: number[] = [];
    let data = read.data;
    draft = undefined;
    for (let i = 0; names !== undefined && !narrow && i < data.length; i++) {
      const r = data[i] as number;
      if (!repeatsHeader(view, names, r)) continue;
      let k = 0;
      while (k < i && view.single(data[i - k - 1] as number) !== null) k++;
      if (k > 0) {
        draft = { titles: data.slice(i - k, i), body: data.slice(i) };
        data = data.slice(0, i - k);
        break;
      }
      repeated.push(r);
    }
    const rows = repeated.length > 0 ? data.filter((r) => !repeated.includes(r)) : data;
    blocks.push(tableOf(view, { ...read, data: rows }, repeated, narrow));
  }
  return blocks;
}

/**
 * A row numbering the columns ("Spalten-Nr.", 1, 2, 3, ...): three or more whole numbers
 * counting up by one from 1, column to column, and at most one word.
 */
function numberingRow(view: View, r: number): boolean {
  const filled = view.filledCols(r);
  const numbers = filled.filter((c) => /^\(?\d{1,3}\)?$/.test(view.text(r, c)));
  if (numbers.length < 3 || filled.length - numbers.length > 1) return false;
  const value = (c: number) => Number(view.text(r, c).replace(/[()]/g, ""));
  return numbers.every((c, i) => value(c) === (i === 0 ? 1 : value(numbers[i - 1] as number) + 1));
}

/**
 * A label column written only on the first row of each block (a region over its rows of
 * flows): among the first two columns, words in an eighth to two thirds of the rows, the first
 * row among them, each written once, and the column right of it words on nearly every row.
 * Its empty cells take the label above them, in the view (so totals are found by block) and in
 * the values; the text stays empty for citations.
 */
function fillLabels(
  view: View,
  rows: readonly number[],
): { row: number; column: number; text: string }[] {
  const data = rows.filter((r) => view.single(r) === null);
  if (data.length < 4) return [];
  const used = view.cols.filter((c) => data.some((r) => view.filled(r, c)));
  for (const [i, c] of used.slice(0, 2).entries()) {
    const next = used[i + 1];
    if (next === undefined) continue;
    const labelled = data.filter((r) => view.filled(r, c));
    const texts = labelled.map((r) => view.text(r, c));
    const sparse = labelled.length * 8 >= data.length && labelled.length * 3 <= 2 * data.length;
    if (!sparse || labelled[0] !== data[0] || new Set(texts).size !== texts.length) continue;
    if (!labelled.every((r) => view.word(r, c))) continue;
    // The labels under it are words on nearly every row ("Exports", "Imports").
    if (data.filter((r) => view.word(r, next)).length * 10 < data.length * 9) continue;
    const fills: { row: number; column: number; text: string }[] = [];
    let current = "";
    for (const r of data) {
      if (view.filled(r, c)) current = view.text(r, c);
      else fills.push({ row: r, column: c, text: current });
    }
    for (const fill of fills) view.fillDown(fill.row, fill.column, fill.text);
    return fills;
  }
  return [];
}

function tableOf(view: View, read: HeaderRead, repeated: number[], narrow: boolean): TableBlock {
  const { units } = read;
  // A row numbering the columns, in the header or right under it, names nothing: a note.
  const numbering = read.header.filter((r) => numberingRow(view, r));
  const first = read.data[0];
  // Under the header only above two rows of data at least: a lone row 1, 2, 3 is data.
  const under = first !== undefined && read.header.length > 0 && read.data.length >= 3;
  if (under && numberingRow(view, first)) numbering.push(first);
  const data = read.data.filter((r) => !numbering.includes(r));
  const header = read.header.filter((r) => !units.includes(r) && !numbering.includes(r));
  const noteRows = findNotes(view, data, narrow);
  for (const r of [...read.above, ...numbering]) noteRows.add(r);
  const seq = data.filter((r) => !noteRows.has(r));
  const fills = fillLabels(view, seq);
  const label = labelColumn(
    view,
    seq.filter((r) => view.single(r) === null),
  );
  const fill = spansBlanks(view, header);
  const roles = rowRoles(view, seq, label, headerSpans(view, header, fill));
  const totalRows = new Set(roles.totals.map((t) => t.row));
  const rows = seq.filter((r) => !roles.sections.has(r) && !totalRows.has(r));

  const content = [...read.header, ...seq];
  let columns = view.cols.filter((c) => content.some((r) => view.filled(r, c)));
  // Title and note rows are lines: one text, or a few cells read as one line.
  const notes: TableBlock["notes"] = [...noteRows].map((r) => ({ row: r, text: view.line(r) }));
  const side = besideNotes(view, columns, read.header, rows);
  if (side.length > 0) {
    columns = columns.filter((c) => !side.includes(c));
    for (const r of seq) {
      for (const c of side) if (view.filled(r, c)) notes.push({ row: r, text: view.text(r, c) });
    }
  }
  notes.sort((a, b) => a.row - b.row);

  let top = Number.POSITIVE_INFINITY;
  let bottom = Number.NEGATIVE_INFINITY;
  for (const part of [read.titles, read.above, read.header, data, repeated]) {
    for (const r of part) {
      top = Math.min(top, r);
      bottom = Math.max(bottom, r);
    }
  }
  const inSpan = (r: number) => r >= top && r <= bottom;
  const hiddenRows = view.sheet.hiddenRows.filter(inSpan);
  const spanRows = Array.from({ length: bottom - top + 1 }, (_, i) => top + i);
  const hiddenColumns = view.sheet.hiddenColumns.filter((c) =>
    spanRows.some((r) => view.filled(r, c)),
  );
  const block: TableBlock = {
    title: read.titles.map((r) => view.line(r)),
    headerRows: read.header.filter((r) => !numbering.includes(r)),
    columns,
    headerPaths: headerPaths(view, header, columns, rows, fill),
    rows,
    totals: roles.totals,
    notes,
    hiddenRows,
    hiddenColumns,
    formulaColumns: columns.filter((c) => rows.some((r) => view.cell(r, c).formula === true)),
  };
  if (units.length > 0) {
    block.units = columns.map((c) => units.map((r) => view.text(r, c)).find((t) => t !== "") ?? "");
  }
  if (repeated.length > 0) block.repeatedHeaders = repeated;
  if (fills.length > 0) block.fills = fills;
  const groups = roles.groups;
  if (groups && rows.some((r) => (groups.get(r) ?? "") !== "")) {
    block.rowGroups = { name: "group", values: rows.map((r) => groups.get(r) ?? "") };
  }
  return block;
}

/**
 * Bands of columns holding tables side by side (small multiples): runs of two or more columns
 * with empty columns between them, and a row naming the same columns in each run alike.
 */
function bands(view: View, used: readonly number[]): number[][] | undefined {
  const runs: number[][] = [];
  for (const c of used) {
    const run = runs[runs.length - 1];
    if (run && c === (run[run.length - 1] as number) + 1) run.push(c);
    else runs.push([c]);
  }
  if (runs.length < 2 || runs.some((run) => run.length < 2)) return undefined;
  const names = (r: number, run: readonly number[]) =>
    run.every((c) => view.word(r, c)) ? run.map((c) => view.text(r, c)).join("\u0000") : null;
  for (let r = 0; r < view.sheet.cells.length; r++) {
    const first = names(r, runs[0] as number[]);
    if (first !== null && runs.every((run) => names(r, run) === first)) return runs;
  }
  return undefined;
}

/** The tables of one band of columns (the whole sheet, or one of tables side by side). */
function readBand(view: View, used: readonly number[]): TableBlock[] {
  const narrow = used.length <= 1;
  return drafts(view, narrow)
    .filter((draft) => draft.body.length > 0)
    .flatMap((draft) => tablesOf(view, draft, narrow));
}

/** A block's first row, for the order of tables side by side. */
function topOf(block: TableBlock): number {
  return Math.min(block.headerRows[0] ?? Infinity, block.rows[0] ?? Infinity);
}

/**
 * The tables of a sheet, top to bottom (several tables in one sheet, separated by blank rows
 * with a new header/title or by a header repeated under its own title, are split apart; tables
 * side by side with empty columns between and the same header, too).
 */
export function readStructure(sheet: RawSheet, overrides: StructureOptions = {}): TableBlock[] {
  const view = new View(sheet, overrides);
  const used = view.cols.filter((c) => sheet.cells.some((_, r) => view.filled(r, c)));
  const placed = overrides.headerRows !== undefined || overrides.skipRows !== undefined;
  const side = placed ? undefined : bands(view, used);
  const blocks = side
    ? side
        .flatMap((band) => readBand(new View(sheet, overrides, band), band))
        .sort((a, b) => topOf(a) - topOf(b) || (a.columns[0] ?? 0) - (b.columns[0] ?? 0))
    : readBand(view, used);
  const skip = Math.min(overrides.skipRows ?? 0, sheet.cells.length);
  const skipped = Array.from({ length: skip }, (_, r) => r).filter(
    (r) => view.filledCols(r).length > 0,
  );
  if (blocks[0] && skipped.length > 0) blocks[0].skipped = skipped;
  return blocks;
}
