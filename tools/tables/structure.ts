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

export type CellKind = "empty" | "text" | "number" | "date" | "bool";

export interface RawCell {
  text: string;
  kind: CellKind;
  formula?: boolean;
  /** What the workbook displays when its number format makes that differ from `text` ("12.5%"). */
  shown?: string;
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
  /** Non-empty rows dropped by `skipRows` (on the first table). */
  skipped?: number[];
  /**
   * Hierarchical row labels: a parent label per data row when rows are grouped under section
   * rows or indented under a parent; a name for the added column and one value per `rows` entry.
   */
  rowGroups?: { name: string; values: string[] };
}

// --- cells -------------------------------------------------------------------------------

const MONTH =
  "(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?";

const DATES = [
  /^\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
  /^\d{4}\/\d{1,2}\/\d{1,2}$/,
  /^\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})$/,
  new RegExp(`^\\d{1,2}\\.?[ -]${MONTH}[ -]\\d{2,4}$`, "i"),
  new RegExp(`^${MONTH} \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}$`, "i"),
  new RegExp(`^${MONTH} \\d{4}$`, "i"),
];

/** Digits as tables write them: thousands by comma, dot or space, a decimal point or comma. */
const DIGITS =
  /^(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?|[.,]\d+)(?:e[-+]?\d+)?$/i;
const CURRENCY_BEFORE = /^[$€£¥₹]\s*/;
const CURRENCY_AFTER = /\s*[$€£¥₹]$/;
const SIGN = /^[-+\u2212]\s*/;
const PLAIN_NUMBER = /^-?\d{1,15}(?:\.\d+)?$/;
/** How a number or a date can start. */
const NUMBER_START = /^[\d.,(+\-\u2212$€£¥₹]/;
const MONTH_START = new RegExp(`^${MONTH}`, "i");

/** The digits of a number-like text with its sign, parentheses, currency and percent taken off. */
function numberDigits(text: string): string | null {
  let t = text.trim();
  if (t.startsWith("(") && t.endsWith(")")) t = t.slice(1, -1).trim();
  t = t.replace(SIGN, "").replace(CURRENCY_BEFORE, "").replace(SIGN, "");
  t = t.replace(/\s*%$/, "").replace(CURRENCY_AFTER, "");
  return DIGITS.test(t) ? t : null;
}

/** Text cells classified from text alone ("1,250", "$3.5", "12%", "(40)", "2024-03-01" count as number/date-like). */
export function cellKindOfText(text: string): CellKind {
  const t = text.trim();
  if (t === "") return "empty";
  if (PLAIN_NUMBER.test(t)) return "number";
  // Most words are settled by their first letter, without trying every pattern.
  if (!NUMBER_START.test(t)) {
    if (!MONTH_START.test(t)) return /^(?:true|false)$/i.test(t) ? "bool" : "text";
    return DATES.some((pattern) => pattern.test(t)) ? "date" : "text";
  }
  if (DATES.some((pattern) => pattern.test(t))) return "date";
  return numberDigits(t) === null ? "text" : "number";
}

/**
 * A plain number: optional sign or parentheses, currency sign, thousands commas and a decimal
 * point ("$1,250,400", "(40)", "-3.5"); null for anything else, percent and decimal commas
 * included (those are values.ts's to read).
 */
export function plainNumber(text: string): number | null {
  let t = text.trim();
  let negative = false;
  if (t.startsWith("(") && t.endsWith(")")) {
    negative = true;
    t = t.slice(1, -1).trim();
  }
  for (let i = 0; i < 2; i++) {
    if (SIGN.test(t)) {
      negative = negative !== /^[-\u2212]/.test(t);
      t = t.replace(SIGN, "");
    }
    t = t.replace(CURRENCY_BEFORE, "");
  }
  if (!/^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^\.\d+$/.test(t)) return null;
  const value = Number(t.replaceAll(",", ""));
  return negative ? -value : value;
}

const EMPTY_CELL: RawCell = { text: "", kind: "empty" };

function cellOfText(text: string): RawCell {
  const kind = cellKindOfText(text);
  return kind === "empty" && text === "" ? EMPTY_CELL : { text, kind };
}

/** A text table (CSV lines or TableBench's {columns, data}) as a RawSheet: the header line is row 0. */
export function rawSheetFromRows(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  lines?: { header: number; rows: number[] },
): RawSheet {
  let width = header.length;
  for (const row of rows) width = Math.max(width, row.length);
  const toCells = (values: readonly string[]) =>
    Array.from({ length: width }, (_, i) => cellOfText(values[i] ?? ""));
  const cells = [toCells(header), ...rows.map(toCells)];
  const rowNumbers = lines
    ? [lines.header, ...rows.map((_, i) => lines.rows[i] ?? lines.header + i + 1)]
    : cells.map((_, i) => i + 1);
  return { cells, rowNumbers, merges: [], hiddenRows: [], hiddenColumns: [] };
}

// --- words --------------------------------------------------------------------------------

/** Cells that stand for "nothing here": a dash, n/a, dots. */
const PLACEHOLDER = /^(?:[-\u2010-\u2015\u2212]+|n\/?a|\.{2,}|\u2026|\?)$/i;

/** Labels of total rows: the whole label, or one ending in "total(s)" ("Career totals"). */
const TOTAL_LABEL =
  /^(?:(?:grand|sub|overall)[\s-]*)?totals?\b(?:\s*[:(,].*)?$|^\S.*\btotals?$|^(?:sub-?totals?|sum|summe|gesamt|insgesamt|zusammen|totaal|totale|totalt|somme|suma|итого|всего|合计|总计|合計|總計)\b:?$/iu;
/** "All ages", "All regions": a total only at the top or the bottom of the data. */
const ALL_LABEL = /^all\s+\S+(?:\s+\S+)?$/i;

/** How notes, footnotes and sources start. */
const NOTE_MARK =
  /^(?:notes?\b|n\.?b\.?\s|sources?\b|footnotes?\b|remarks?\b|\*|†|‡|§|\(\d{1,2}\)|\[\d{1,2}\]|\d{1,2}\)|[a-z]\)|[a-z]\/|\d{1,2}\/(?!\d))/i;

const LEADING_SPACE = /^[ \t\u00a0\u3000]+/;

// --- the sheet as the rules see it ---------------------------------------------------------

class View {
  readonly cols: number[];
  readonly hiddenRow: Set<number>;
  readonly hiddenCol: Set<number>;
  readonly numberOf: (text: string) => number | null;
  /** Each merge of more than one cell, by every cell it covers. */
  readonly #merged = new Map<number, Span>();
  readonly #width: number;
  // Rules ask the same of a row many times; a sheet may have a million rows.
  readonly #filledCols: (number[] | undefined)[] = [];
  readonly #single = new Map<number, string | null>();
  /** Each cell's number once read: 0 unread, 1 none, 2 in #values. */
  readonly #read: Uint8Array;
  readonly #values: Float64Array;

  constructor(
    readonly sheet: RawSheet,
    readonly options: StructureOptions,
  ) {
    this.#width = sheet.cells[0]?.length ?? 0;
    this.hiddenRow = new Set(sheet.hiddenRows);
    this.hiddenCol = new Set(sheet.hiddenColumns);
    const all = Array.from({ length: this.#width }, (_, c) => c);
    this.cols = options.includeHidden ? all : all.filter((c) => !this.hiddenCol.has(c));
    this.numberOf = options.numberOf ?? plainNumber;
    this.#read = new Uint8Array(sheet.cells.length * this.#width);
    this.#values = new Float64Array(sheet.cells.length * this.#width);
    for (const span of sheet.merges) {
      if (span.row0 === span.row1 && span.col0 === span.col1) continue;
      for (let r = span.row0; r <= span.row1; r++) {
        for (let c = span.col0; c <= span.col1; c++) this.#merged.set(r * this.#width + c, span);
      }
    }
  }

  cell(r: number, c: number): RawCell {
    return this.sheet.cells[r]?.[c] ?? EMPTY_CELL;
  }

  text(r: number, c: number): string {
    return this.cell(r, c).text.trim();
  }

  filled(r: number, c: number): boolean {
    const cell = this.cell(r, c);
    return cell.kind !== "empty" && cell.text.trim() !== "";
  }

  filledCols(r: number): number[] {
    let filled = this.#filledCols[r];
    if (!filled) {
      filled = this.cols.filter((c) => this.filled(r, c));
      this.#filledCols[r] = filled;
    }
    return filled;
  }

  mergeAt(r: number, c: number): Span | undefined {
    return this.#merged.get(r * this.#width + c);
  }

  number(r: number, c: number): number | null {
    const at = r * this.#width + c;
    const read = this.#read[at];
    if (read === 2) return this.#values[at] as number;
    if (read === 1 || at >= this.#read.length) return null;
    const cell = this.cell(r, c);
    const value = cell.kind === "empty" ? null : this.numberOf(cell.text.trim());
    this.#read[at] = value === null ? 1 : 2;
    if (value !== null) this.#values[at] = value;
    return value;
  }

  /** A row of one text: one filled cell, or the same text in each filled cell (a merge spread out). */
  single(r: number): string | null {
    const known = this.#single.get(r);
    if (known !== undefined) return known;
    const filled = this.filledCols(r);
    const first = filled[0];
    let found: string | null = null;
    if (first !== undefined) {
      const text = this.text(r, first);
      const same = filled.every((c) => this.cell(r, c).kind === "text" && this.text(r, c) === text);
      found = same ? text : null;
    }
    this.#single.set(r, found);
    return found;
  }

  /** A row whose filled cells are all text (placeholders included), at least `least` of them. */
  allText(r: number, least = 1): boolean {
    const filled = this.filledCols(r);
    return filled.length >= least && filled.every((c) => this.cell(r, c).kind === "text");
  }

  /** Some column holds a word in row `r` and mostly numbers, dates or booleans in `below`. */
  contrast(r: number, below: readonly number[]): boolean {
    return this.cols.some((c) => {
      const cell = this.cell(r, c);
      if (cell.kind !== "text" || PLACEHOLDER.test(cell.text.trim())) return false;
      const kinds = below
        .map((b) => this.cell(b, c))
        .filter((k) => k.kind !== "empty" && !PLACEHOLDER.test(k.text.trim()))
        .map((k) => k.kind);
      const typed = kinds.filter((k) => k !== "text").length;
      return kinds.length > 0 && typed * 2 >= kinds.length;
    });
  }
}

// --- splitting the sheet into tables --------------------------------------------------------

interface Draft {
  titles: number[];
  body: number[];
}

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
    if (view.filledCols(r).length > 0) current.push(r);
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
  // A title starts at or left of the header, or is merged across; a lone name further right
  // is the header's own (",value" over an unnamed index).
  const placed = segment.slice(0, n).every((r) => {
    const c = view.filledCols(r)[0] as number;
    const merge = view.mergeAt(r, c);
    return c <= (filled[0] ?? 0) || (merge !== undefined && merge.col1 > merge.col0);
  });
  return filled.length >= 2 && worded && placed ? n : 0;
}

/** The first rows of `rows` that are not single texts, up to `n`. */
function dataLike(view: View, rows: readonly number[], n = 5): number[] {
  const out: number[] = [];
  for (const r of rows) {
    if (out.length >= n) break;
    if (view.single(r) === null) out.push(r);
  }
  return out;
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

// --- the header -----------------------------------------------------------------------------

const MAX_HEADER_ROWS = 4;
/** Rows below a candidate header row looked at for data. */
const LOOK_BELOW = 50;

/** Whether a header row has a run of the same name over adjacent columns ("League", "League"). */
function hasRun(view: View, r: number): boolean {
  const { cols } = view;
  for (let i = 1; i < cols.length; i++) {
    const a = view.text(r, cols[i - 1] as number);
    if (a !== "" && !PLACEHOLDER.test(a) && a === view.text(r, cols[i] as number)) return true;
  }
  return false;
}

/** Whether a header row leaves blanks right of a label that the row below fills. */
function spansRight(view: View, upper: number, lower: number): boolean {
  const { cols } = view;
  const above = view.filledCols(upper);
  const below = view.filledCols(lower);
  if (below.length <= above.length) return false;
  // One label at the left edge over the whole header is a caption, not a group.
  if (above.length === 1 && (above[0] ?? 0) <= (below[0] ?? 0)) return false;
  for (let i = 1; i < cols.length; i++) {
    const c = cols[i] as number;
    if (
      view.filled(upper, cols[i - 1] as number) &&
      !view.filled(upper, c) &&
      view.filled(lower, c)
    )
      return true;
  }
  return false;
}

function mergesIn(view: View, first: number, last: number): Span[] {
  return view.sheet.merges.filter(
    (m) => m.row0 >= first && m.row0 <= last && (m.row1 > m.row0 || m.col1 > m.col0),
  );
}

/**
 * Whether row `r` continues the header `header`: a header cell is merged down into it, or it
 * is a row of words over data (some column a word above numbers) under a header that groups
 * columns (a cell merged across the cells it names, a name repeated over adjacent columns, or
 * without merges a label with blanks right of it).
 */
function extendsHeader(view: View, header: readonly number[], r: number, after: number[]): boolean {
  const first = header[0] as number;
  const last = header[header.length - 1] as number;
  const merges = mergesIn(view, first, last);
  if (merges.some((m) => m.row1 >= r && view.cols.some((c) => c >= m.col0 && c <= m.col1)))
    return true;
  if (!view.allText(r) || !view.contrast(r, dataLike(view, after))) return false;
  const under = (m: Span) =>
    view.cols.filter((c) => c >= m.col0 && c <= m.col1 && view.filled(r, c));
  if (merges.some((m) => m.col1 > m.col0 && under(m).length >= 2)) return true;
  return hasRun(view, last) || (merges.length === 0 && spansRight(view, last, r));
}

function headerHeight(view: View, body: readonly number[]): number {
  const forced = view.options.headerRows;
  if (forced !== undefined) return Math.max(0, Math.min(forced, body.length));
  let height = Math.min(1, body.length);
  while (height < MAX_HEADER_ROWS && height < body.length - 1) {
    const r = body[height] as number;
    if (r !== (body[height - 1] as number) + 1) break; // a blank or hidden row between
    const after = body.slice(height + 1, height + 1 + LOOK_BELOW);
    if (!extendsHeader(view, body.slice(0, height), r, after)) break;
    height++;
  }
  return height;
}

function headerPath(view: View, header: readonly number[], c: number, fill: boolean): string[] {
  const first = header[0] as number;
  const raw = header.map((r, i) => {
    const own = view.text(r, c);
    if (own !== "") return own;
    const merge = view.mergeAt(r, c);
    if (merge && merge.row0 >= first && merge.row0 <= r) return view.text(merge.row0, merge.col0);
    if (!fill || i === header.length - 1) return "";
    // Without merges, an upper label spans the blanks right of it, up to the next label.
    const left = view.cols.filter((k) => k < c).reverse();
    const label = left.find((k) => view.filled(r, k));
    return label === undefined ? "" : view.text(r, label);
  });
  const parts: string[] = [];
  for (const part of raw) {
    if (part === "" || PLACEHOLDER.test(part) || parts[parts.length - 1] === part) continue;
    parts.push(part);
  }
  if (parts.length > 0) return parts;
  const any = raw.find((part) => part !== "");
  return any === undefined ? [] : [any];
}

// --- rows: notes, sections, groups, totals ----------------------------------------------------

/** Rows after the header that are notes: trailing single lines set apart, and marked single lines. */
function findNotes(view: View, data: readonly number[], narrow: boolean): Set<number> {
  const notes = new Set<number>();
  if (narrow) return notes; // in a one-column table every row is a single text
  const setApart = (r: number, i: number) => {
    const text = view.single(r) ?? "";
    const previous = i > 0 ? (data[i - 1] as number) : -1;
    const merged = view.filledCols(r).some((c) => {
      const m = view.mergeAt(r, c);
      return m !== undefined && m.col1 > m.col0;
    });
    return (
      NOTE_MARK.test(text) ||
      merged ||
      view.filledCols(r).length > 1 ||
      (previous >= 0 && r > previous + 1 && !view.hiddenRow.has(r - 1)) ||
      (previous >= 0 && leadingWords(view, previous).some((w) => TOTAL_LABEL.test(w))) ||
      (text.length >= 40 && text.includes(" "))
    );
  };
  let tail = data.length;
  while (tail > 0 && view.single(data[tail - 1] as number) !== null) tail--;
  for (let i = tail; i < data.length; i++) {
    if (setApart(data[i] as number, i)) {
      for (const r of data.slice(i)) notes.add(r);
      break;
    }
  }
  for (const r of data) if (NOTE_MARK.test(view.single(r) ?? "")) notes.add(r);
  return notes;
}

/** The first column whose data cells are mostly words: where row labels are. */
function labelColumn(view: View, rows: readonly number[]): number | undefined {
  let fallback: number | undefined;
  for (const c of view.cols) {
    const kinds = rows.map((r) => view.cell(r, c)).filter((k) => k.text.trim() !== "");
    if (kinds.length === 0) continue;
    fallback ??= c;
    if (kinds.filter((k) => k.kind === "text").length * 2 >= kinds.length) return c;
  }
  return fallback;
}

/** A column's sum over a set of rows, read up to `upTo` of them. */
interface ColumnSum {
  upTo: number;
  sum: number;
  count: number;
  decimals: number;
  /** It holds something that is not a number. */
  words: boolean;
}

/**
 * Sums of a set of rows, column by column, to test a row that may close them. A column is read
 * only when a row asks about it, and each of its cells once.
 */
class Sums {
  readonly #rows: number[] = [];
  readonly #columns = new Map<number, ColumnSum>();

  constructor(readonly view: View) {}

  get rows(): number {
    return this.#rows.length;
  }

  add(r: number): void {
    this.#rows.push(r);
  }

  #column(c: number): ColumnSum {
    let column = this.#columns.get(c);
    if (!column) {
      column = { upTo: 0, sum: 0, count: 0, decimals: 0, words: false };
      this.#columns.set(c, column);
    }
    for (; column.upTo < this.#rows.length && !column.words; column.upTo++) {
      const r = this.#rows[column.upTo] as number;
      if (!this.view.filled(r, c)) continue;
      const value = this.view.number(r, c);
      const text = this.view.text(r, c);
      if (value === null) {
        if (!PLACEHOLDER.test(text)) column.words = true;
        continue;
      }
      column.sum += value;
      column.count++;
      column.decimals = Math.max(column.decimals, decimalsOf(text));
    }
    return column;
  }

  /** Whether each number of row `r` is the sum of its column here, within rounding. */
  closedBy(r: number, skip: number | undefined, shaped = false): boolean {
    if (this.rows < 2) return false;
    const numeric = this.view.cols.filter((c) => c !== skip && this.view.number(r, c) !== null);
    // One number the sum of two others is too easy a coincidence, unless the layout says so.
    if (numeric.length === 0 || (numeric.length === 1 && this.rows < 3 && !shaped)) return false;
    let someNonZero = false;
    for (const c of numeric) {
      const { sum, count, decimals: parts, words } = this.#column(c);
      if (count < 2 || words) return false;
      const value = this.view.number(r, c) ?? Number.NaN;
      const decimals = Math.max(parts, decimalsOf(this.view.text(r, c)));
      // Rounded parts may miss their rounded total by half a unit of the last digit each.
      const tolerance =
        decimals > 0 ? 0.5 * 10 ** -decimals * count + 1e-9 : 1e-9 * Math.max(1, Math.abs(sum));
      if (!(Math.abs(value - sum) <= tolerance)) return false;
      if (sum !== 0) someNonZero = true;
    }
    return someNonZero;
  }
}

function decimalsOf(text: string): number {
  return /\.(\d+)\D*$/.exec(text)?.[1]?.length ?? 0;
}

/** The words of a row before its first number, empty cells skipped. */
function leadingWords(view: View, r: number): string[] {
  const words: string[] = [];
  for (const c of view.cols) {
    const text = view.text(r, c);
    if (text === "") continue;
    if (view.number(r, c) !== null) break;
    words.push(text);
  }
  return words;
}

function hasNumber(view: View, r: number): boolean {
  return view.cols.some((c) => view.number(r, c) !== null);
}

interface RowRoles {
  sections: Set<number>;
  totals: TableBlock["totals"];
  groups?: Map<number, string>;
}

/** Section rows: single labels between data rows, at least two of them, each over data. */
function findSections(view: View, seq: readonly number[], label: number | undefined): Set<number> {
  const candidates = seq.filter((r, i) => {
    const filled = view.filledCols(r);
    const next = seq[i + 1];
    return (
      label !== undefined &&
      filled.length === 1 &&
      filled[0] === label &&
      view.cell(r, label).kind === "text" &&
      next !== undefined &&
      view.single(next) === null
    );
  });
  return new Set(candidates.length >= 2 ? candidates : []);
}

function indentOf(view: View, r: number, label: number): number {
  return LEADING_SPACE.exec(view.cell(r, label).text)?.[0].length ?? 0;
}

/**
 * Parents of indented labels: each row's nearest less indented row above. A parent whose
 * numbers are the sums of its children is a subtotal.
 */
function indentGroups(
  view: View,
  seq: readonly number[],
  label: number,
  totals: TableBlock["totals"],
): Map<number, string> | undefined {
  const indents = seq.map((r) => indentOf(view, r, label));
  if (indents.filter((n) => n > 0).length < 2 || indents[0] !== 0) return undefined;
  const groups = new Map<number, string>();
  const stack: { indent: number; text: string }[] = [];
  for (const [i, r] of seq.entries()) {
    const indent = indents[i] as number;
    while (stack.length > 0 && (stack[stack.length - 1]?.indent ?? 0) >= indent) stack.pop();
    groups.set(r, stack[stack.length - 1]?.text ?? "");
    stack.push({ indent, text: view.text(r, label) });
    // Its children: the rows below at the first child's indent, up to the next row not deeper.
    const children = new Sums(view);
    const level = indents[i + 1] ?? 0;
    for (let j = i + 1; level > indent && j < seq.length && (indents[j] as number) > indent; j++) {
      if (indents[j] === level) children.add(seq[j] as number);
    }
    if (children.rows >= 2 && children.closedBy(r, label, true)) {
      totals.push({ row: r, label: view.text(r, label), by: "arithmetic" });
    }
  }
  return groups;
}

/**
 * Sections, groups and totals of the data rows `seq` (header, notes and hidden rows left out).
 * A total by label names itself; a total by arithmetic is a row whose numbers are the sums of
 * the rows it closes (since the last total or section, or all rows above, or the subtotals
 * above), looked for only where a total stands: last, before a section or blank, or unlabelled.
 */
function rowRoles(view: View, seq: readonly number[], label: number | undefined): RowRoles {
  const sections = findSections(view, seq, label);
  const totals: TableBlock["totals"] = [];
  let groups: Map<number, string> | undefined;
  if (sections.size > 0) {
    groups = new Map();
    let section = "";
    for (const r of seq) {
      if (sections.has(r)) section = view.text(r, label as number);
      else groups.set(r, section);
    }
  } else if (label !== undefined) {
    groups = indentGroups(view, seq, label, totals);
  }
  const isTotal = new Set(totals.map((t) => t.row));
  const dataIndex = seq.filter((r) => !sections.has(r));
  const firstData = dataIndex[0];
  const lastData = dataIndex[dataIndex.length - 1];
  let group = new Sums(view);
  const all = new Sums(view);
  const subtotals = new Sums(view);
  for (const [i, r] of seq.entries()) {
    if (sections.has(r)) {
      group = new Sums(view);
      continue;
    }
    if (isTotal.has(r)) continue;
    const words = leadingWords(view, r);
    const named =
      words.find((w) => TOTAL_LABEL.test(w)) ??
      (r === firstData || r === lastData ? words.find((w) => ALL_LABEL.test(w)) : undefined);
    if (named !== undefined && hasNumber(view, r)) {
      totals.push({ row: r, label: named, by: "label" });
      subtotals.add(r);
      group = new Sums(view);
      continue;
    }
    const next = seq[i + 1];
    const unlabelled = label !== undefined && !view.filled(r, label);
    const closing =
      next === undefined || sections.has(next) || next > r + 1 || unlabelled || r === lastData;
    if (
      closing &&
      (group.closedBy(r, label) || all.closedBy(r, label) || subtotals.closedBy(r, label))
    ) {
      totals.push({ row: r, label: words[0] ?? "", by: "arithmetic" });
      subtotals.add(r);
      group = new Sums(view);
      continue;
    }
    group.add(r);
    all.add(r);
  }
  totals.sort((a, b) => a.row - b.row);
  return { sections, totals, ...(groups ? { groups } : {}) };
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

function tableOf(view: View, draft: Draft, narrow: boolean): TableBlock {
  const { body } = draft;
  const height = headerHeight(view, body);
  const header = body.slice(0, height);
  const data = body.slice(height);
  const noteRows = findNotes(view, data, narrow);
  const seq = data.filter((r) => !noteRows.has(r));
  const label = labelColumn(
    view,
    seq.filter((r) => view.single(r) === null),
  );
  const roles = rowRoles(view, seq, label);
  const totalRows = new Set(roles.totals.map((t) => t.row));
  const rows = seq.filter((r) => !roles.sections.has(r) && !totalRows.has(r));

  const content = [...header, ...seq];
  let columns = view.cols.filter((c) => content.some((r) => view.filled(r, c)));
  // Title and note rows are single texts (a row of one text, or of one text repeated).
  const notes: TableBlock["notes"] = [...noteRows].map((r) => ({
    row: r,
    text: view.single(r) ?? "",
  }));
  const side = besideNotes(view, columns, header, rows);
  if (side.length > 0) {
    columns = columns.filter((c) => !side.includes(c));
    for (const r of seq) {
      for (const c of side) if (view.filled(r, c)) notes.push({ row: r, text: view.text(r, c) });
    }
  }
  notes.sort((a, b) => a.row - b.row);

  const fill = header.length > 1 && mergesIn(view, header[0] ?? 0, header.at(-1) ?? 0).length === 0;
  let top = Number.POSITIVE_INFINITY;
  let bottom = Number.NEGATIVE_INFINITY;
  for (const r of [...draft.titles, ...body]) {
    top = Math.min(top, r);
    bottom = Math.max(bottom, r);
  }
  const inSpan = (r: number) => r >= top && r <= bottom;
  const hiddenRows = view.sheet.hiddenRows.filter(inSpan);
  const spanRows = Array.from({ length: bottom - top + 1 }, (_, i) => top + i);
  const hiddenColumns = view.sheet.hiddenColumns.filter((c) =>
    spanRows.some((r) => view.filled(r, c)),
  );
  const block: TableBlock = {
    title: draft.titles.map((r) => view.single(r) ?? ""),
    headerRows: header,
    columns,
    headerPaths: columns.map((c) => headerPath(view, header, c, fill)),
    rows,
    totals: roles.totals,
    notes,
    hiddenRows,
    hiddenColumns,
    formulaColumns: columns.filter((c) => rows.some((r) => view.cell(r, c).formula === true)),
  };
  const groups = roles.groups;
  if (groups && rows.some((r) => (groups.get(r) ?? "") !== "")) {
    block.rowGroups = { name: "group", values: rows.map((r) => groups.get(r) ?? "") };
  }
  return block;
}

/** The tables of a sheet, top to bottom (several tables in one sheet, separated by blank rows with a new header/title, are split apart). */
export function readStructure(sheet: RawSheet, overrides: StructureOptions = {}): TableBlock[] {
  const view = new View(sheet, overrides);
  const used = view.cols.filter((c) => sheet.cells.some((_, r) => view.filled(r, c)));
  const narrow = used.length <= 1;
  const blocks = drafts(view, narrow)
    .filter((draft) => draft.body.length > 0)
    .map((draft) => tableOf(view, draft, narrow));
  const skip = Math.min(overrides.skipRows ?? 0, sheet.cells.length);
  const skipped = Array.from({ length: skip }, (_, r) => r).filter(
    (r) => view.filledCols(r).length > 0,
  );
  if (blocks[0] && skipped.length > 0) blocks[0].skipped = skipped;
  return blocks;
}
