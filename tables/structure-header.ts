/**
 * The header of a table (structure.ts): how many rows, read from the top or again from the rows
 * right above the data, units rows, and the header path of each column.
 */

import type { Span } from "./structure.js";
import {
  type Draft,
  dataLike,
  LOOK_BELOW,
  labelColumn,
  PLACEHOLDER,
  type View,
} from "./structure-view.js";

const MAX_HEADER_ROWS = 4;

/** Whether a header row has a run of the same name over adjacent columns ("League", "League"). */
function hasRun(view: View, r: number): boolean {
  const { cols } = view;
  for (let i = 1; i < cols.length; i++) {
    const a = view.text(r, cols[i - 1] as number);
    if (a !== "" && !PLACEHOLDER.test(a) && a === view.text(r, cols[i] as number)) return true;
  }
  return false;
}

function distinctWords(view: View, r: number): number {
  const words = new Set<string>();
  for (const c of view.filledCols(r)) if (view.word(r, c)) words.add(view.text(r, c));
  return words.size;
}

/** Whether a header row leaves blanks right of a label that the row below fills. */
function spansRight(view: View, upper: number, lower: number): boolean {
  const { cols } = view;
  const above = view.filledCols(upper);
  const below = view.filledCols(lower);
  if (below.length < 2) return false;
  // One label at the left edge over the whole header is a caption, not a group.
  if (above.length === 1 && (above[0] ?? 0) <= (below[0] ?? 0)) return false;
  // Under a label's blanks (up to the next label), the row below names a column.
  let labelled = false;
  for (const c of cols) {
    if (view.filled(upper, c)) labelled = true;
    else if (labelled && view.filled(lower, c)) return true;
  }
  return false;
}

/**
 * Whether a header row names columns over part of the row below, which names those and more
 * (the label columns left of them): ";;Index;Change" over "Year;Month;2020=100;in %".
 */
function namesOver(view: View, upper: number, lower: number): boolean {
  const above = view.filledCols(upper);
  const below = view.filledCols(lower);
  return (
    above.length >= 2 && below.length > above.length && above.every((c) => view.filled(lower, c))
  );
}

export function mergesIn(view: View, first: number, last: number): Span[] {
  return view.sheet.merges.filter(
    (m) => m.row0 >= first && m.row0 <= last && (m.row1 > m.row0 || m.col1 > m.col0),
  );
}

/**
 * Whether the header rows stand over the label column as a header's do above row `r`: nothing
 * there, the same name as `r`'s, or a name merged down into `r`.
 */
function overLabel(view: View, header: readonly number[], r: number, label: number): boolean {
  return header.every((u) => {
    const text = view.text(u, label);
    if (text === "" || text === view.text(r, label)) return true;
    const merge = view.mergeAt(u, label);
    return merge !== undefined && merge.row1 >= r;
  });
}

/**
 * A pivot export's header (NZ.Stat, OECD.Stat): the upper row names the column dimension at the
 * left, merged across the label columns ("Sense of purpose"), and its values over the data
 * columns ("0 - 6", "7 - 10"); the lower row names the row dimensions over the label columns
 * only. Returns the last label column.
 */
function pivotEdge(
  view: View,
  upper: number,
  lower: number,
  below: readonly number[],
): number | undefined {
  const low = view.filledCols(lower);
  const edge = low[low.length - 1];
  if (edge === undefined || low.length < 2 || !view.allText(lower) || !view.allText(upper)) {
    return undefined;
  }
  const up = view.filledCols(upper);
  const left = up.filter((c) => c <= edge);
  const right = up.filter((c) => c > edge);
  const name = left[0];
  if (left.length !== 1 || name === undefined || name > (low[0] as number)) return undefined;
  const merge = view.mergeAt(upper, name);
  if (!merge || merge.row1 !== upper || merge.col1 < edge) return undefined;
  return right.some((c) => view.typedColumn(c, below)) ? edge : undefined;
}

/**
 * Whether row `r` continues the header `header`: a header cell is merged down into it, or it
 * is a row of words over data (some column a word above numbers) under a header that groups
 * columns (a cell merged across the cells it names, a name repeated over adjacent columns, or
 * without merges a label with blanks right of it), or a row of words that repeats a name over
 * adjacent columns itself ("Amount", "Amount"), or the lower row of a pivot export's header.
 * With `label`, the header rows must stand over the label column as a header does (overLabel).
 */
function extendsHeader(
  view: View,
  header: readonly number[],
  r: number,
  after: number[],
  label?: number,
): boolean {
  const first = header[0] as number;
  const last = header[header.length - 1] as number;
  if (label !== undefined && !overLabel(view, header, r, label)) return false;
  const merges = mergesIn(view, first, last);
  if (merges.some((m) => m.row1 >= r && view.cols.some((c) => c >= m.col0 && c <= m.col1)))
    return true;
  const below = dataLike(view, after);
  if (header.length === 1 && pivotEdge(view, last, r, below) !== undefined) return true;
  if (!view.allText(r) || !view.contrast(r, below)) return false;
  const under = (m: Span) =>
    view.cols.filter((c) => c >= m.col0 && c <= m.col1 && view.filled(r, c));
  if (merges.some((m) => m.col1 > m.col0 && under(m).length >= 2)) return true;
  return (
    hasRun(view, last) ||
    (merges.length === 0 && spansRight(view, last, r)) ||
    (merges.length === 0 && namesOver(view, last, r) && dataStart(view, after) === 0) ||
    (hasRun(view, r) && !unitsRow(view, r) && distinctWords(view, r) >= 2)
  );
}

export function headerHeight(view: View, body: readonly number[], label?: number): number {
  const forced = view.options.headerRows;
  if (forced !== undefined) return Math.max(0, Math.min(forced, body.length));
  let height = Math.min(1, body.length);
  while (height < MAX_HEADER_ROWS && height < body.length - 1) {
    const r = body[height] as number;
    if (r !== (body[height - 1] as number) + 1) break; // a blank or hidden row between
    const after = body.slice(height + 1, height + 1 + LOOK_BELOW);
    if (!extendsHeader(view, body.slice(0, height), r, after, label)) break;
    height++;
  }
  return height;
}

/** Cells naming a unit and nothing else: "'000", "$m", "%", "no.", "USD bn". */
const UNIT_CELL =
  /^\(?\s*(?:'?000s?|[$€£¥₹]\s?(?:'?000|[km]|mn|bn)?|%|percent|per cent|pct\.?|no\.|(?:thousands?|millions?|billions?)(?: of \S+)?)\s*\)?$/i;
const CURRENCY_UNIT = /^\(?[A-Z]{3}\s?(?:'?000|[km]|mn|bn)\)?$/;

/** A row of units under the header's names ("'000", "$m", "$m"). */
function unitsRow(view: View, r: number): boolean {
  const filled = view.filledCols(r);
  return (
    filled.length >= 2 &&
    filled.every((c) => {
      const text = view.text(r, c);
      return view.cell(r, c).kind === "text" && (UNIT_CELL.test(text) || CURRENCY_UNIT.test(text));
    })
  );
}

/** Row `r` repeats the header row `h`: its words are the header's, in the same columns. */
export function repeatsHeader(view: View, h: number, r: number): boolean {
  if (r === h || !view.allText(r, 2)) return false;
  let same = 0;
  for (const c of view.filledCols(r)) {
    const text = view.text(r, c);
    if (PLACEHOLDER.test(text)) continue;
    if (text !== view.text(h, c)) return false;
    same++;
  }
  return same >= 2 && same * 2 >= view.filledCols(h).length;
}

/** Rows `a` and `b` hold the same kinds of values (text, numbers, dates) in most shared columns. */
function alike(view: View, a: number, b: number): boolean {
  let shared = 0;
  let same = 0;
  for (const c of view.filledCols(a)) {
    if (
      !view.filled(b, c) ||
      PLACEHOLDER.test(view.text(a, c)) ||
      PLACEHOLDER.test(view.text(b, c))
    )
      continue;
    shared++;
    if (view.cell(a, c).kind === view.cell(b, c).kind) same++;
  }
  return same * 2 >= shared;
}

/**
 * The first data row: numbers, dates or booleans, with a row of the same kinds next (section
 * rows aside).
 */
function dataStart(view: View, body: readonly number[]): number {
  for (let i = 0; i < body.length; i++) {
    const r = body[i] as number;
    if (!view.typed(r)) continue;
    let j = i + 1;
    while (j < body.length && j < i + LOOK_BELOW && view.single(body[j] as number) !== null) j++;
    const next = body[j];
    if (next === undefined || (view.typed(next) && alike(view, r, next))) return i;
  }
  return -1;
}

/** A title line starts at or left of the header's first column, or is merged across. */
export function placedTitle(view: View, r: number, first: number): boolean {
  const c = view.filledCols(r)[0] as number;
  const merge = view.mergeAt(r, c);
  return c <= first || (merge !== undefined && merge.col1 > merge.col0);
}

/** A title line: one text, or a table's number and its caption ("1", "Visits by month"). */
function titleLine(view: View, r: number): boolean {
  if (view.single(r) !== null) return true;
  const [number, caption, more] = view.filledCols(r);
  return (
    number !== undefined &&
    caption !== undefined &&
    more === undefined &&
    /^[\w.]{1,6}$/.test(view.text(r, number)) &&
    view.cell(r, caption).kind === "text"
  );
}

export interface HeaderRead {
  titles: number[];
  /** Lines above the header that are not a title: notes written above the table. */
  above: number[];
  /** Header rows, units rows included. */
  header: number[];
  /** Rows of units under the header's names. */
  units: number[];
  data: number[];
}

/** Whether some cell of row `u` is merged across two or more of the names in row `names`. */
function groupsNames(view: View, u: number, names: number): boolean {
  return view.filledCols(u).some((c) => {
    const m = view.mergeAt(u, c);
    if (!m || m.col1 <= m.col0) return false;
    return view.filledCols(names).filter((k) => k >= m.col0 && k <= m.col1).length >= 2;
  });
}

/**
 * The header is the last row of words right above the data. When only rows of words stand
 * between the header read from the top and the data, and the row right above the data names a
 * column that header leaves unnamed (notes written above a table, a title line taken for the
 * header), the header is read again from there: the taller of the runs of rows ending there
 * that read as a header from the top, or that group its names from above (merged, repeated or
 * spanning names), their rows standing over the label column as a header does. The lines above
 * it are the title when all are title lines, else notes.
 */
function anchored(
  view: View,
  titles: readonly number[],
  body: readonly number[],
  height: number,
): HeaderRead | undefined {
  const start = dataStart(view, body);
  if (start <= height || body.slice(height, start).some((r) => view.typed(r))) return undefined;
  let bottom = start - 1;
  const skipped = (r: number) => view.single(r) !== null && !unitsRow(view, r);
  while (bottom >= height && skipped(body[bottom] as number)) bottom--;
  const units: number[] = [];
  const unit = body[bottom];
  if (bottom > height && unit !== undefined && unitsRow(view, unit)) {
    units.push(unit);
    bottom--;
  }
  const names = body[bottom];
  const top = body[height - 1];
  if (bottom < height || names === undefined || top === undefined || !view.allText(names)) {
    return undefined;
  }
  if (units.length > 0 && units[0] !== names + 1) return undefined;
  if (unitsRow(view, names) || repeatsHeader(view, top, names)) return undefined;
  const data = body.slice(bottom + 1 + units.length);
  const below = data.slice(0, LOOK_BELOW);
  const sample = dataLike(view, below, LOOK_BELOW);
  const header0 = body.slice(0, height);
  const named = (c: number) => header0.some((u) => view.filled(u, c) || view.mergeAt(u, c));
  const used = view.cols.filter((c) => sample.some((r) => view.filled(r, c)));
  if (!used.some((c) => !named(c) && view.filled(names, c))) return undefined;
  // Right under it, the header read from the top must be a title line, not a header naming
  // fewer columns (",value" over an unnamed index, then a row of words).
  const edge = view.filledCols(names)[0] ?? 0;
  if (
    names === top + 1 &&
    !header0.every((u) => titleLine(view, u) && placedTitle(view, u, edge))
  ) {
    return undefined;
  }

  const rows = [...titles, ...body.slice(0, bottom + 1)];
  const label = labelColumn(view, sample);
  let size = 1;
  for (let n = Math.min(MAX_HEADER_ROWS, rows.length); n > 1; n--) {
    const run = rows.slice(rows.length - n);
    if (run.some((r, i) => i > 0 && r !== (run[i - 1] as number) + 1)) continue;
    if (headerHeight(view, [...run, ...below], label) === n) {
      size = n;
      break;
    }
  }
  // From below: rows grouping the names (merged across them, repeated, or spanning blanks).
  let up = 1;
  while (up < MAX_HEADER_ROWS && up < rows.length) {
    const u = rows[rows.length - 1 - up] as number;
    if (u !== (rows[rows.length - up] as number) - 1 || !view.allText(u)) break;
    if (label !== undefined && !overLabel(view, [u], names, label)) break;
    if (!groupsNames(view, u, names) && !hasRun(view, u) && !spansRight(view, u, names)) break;
    up++;
  }
  size = Math.max(size, up);
  // Title lines first, set apart from the rest by a blank row, are the title all the same.
  const before = rows.slice(0, rows.length - size);
  let lines = 0;
  while (lines < before.length && titleLine(view, before[lines] as number)) lines++;
  const apart =
    lines === before.length || (before[lines] as number) > (before[lines - 1] as number) + 1;
  if (!apart) lines = 0;
  return {
    titles: before.slice(0, lines),
    above: before.slice(lines),
    header: [...rows.slice(rows.length - size), ...units],
    units,
    data,
  };
}

/** Title, header (a units row under it included) and data rows of a draft. */
export function readHeader(view: View, draft: Draft): HeaderRead {
  const { titles, body } = draft;
  const height = headerHeight(view, body);
  const plain: HeaderRead = {
    titles,
    above: [],
    header: body.slice(0, height),
    units: [],
    data: body.slice(height),
  };
  // Given either, the user placed the header: it is not looked for lower down.
  if (view.options.headerRows !== undefined || view.options.skipRows !== undefined) return plain;
  const lowest = plain.header[plain.header.length - 1];
  if (height >= 2 && lowest !== undefined && unitsRow(view, lowest)) plain.units = [lowest];
  const read: HeaderRead = anchored(view, titles, body, height) ?? plain;
  const next = read.data[0];
  const last = read.header[read.header.length - 1];
  const adjacent = next !== undefined && last !== undefined && next === last + 1;
  if (adjacent && read.units.length === 0 && read.data.length > 1 && unitsRow(view, next)) {
    return { ...read, header: [...read.header, next], units: [next], data: read.data.slice(1) };
  }
  return read;
}

/** Each column's header path; in a pivot export's header the dimension's name leads its values. */
export function headerPaths(
  view: View,
  header: readonly number[],
  columns: readonly number[],
  rows: readonly number[],
  fill: boolean,
): string[][] {
  const [upper, lower, more] = header;
  const edge =
    upper !== undefined && lower !== undefined && more === undefined
      ? pivotEdge(view, upper, lower, rows.slice(0, LOOK_BELOW))
      : undefined;
  if (edge === undefined) {
    const moved = new Map<number, Map<number, string>>();
    for (let i = 0; i + 1 < header.length; i++) {
      const shift = shiftedRuns(view, header[i] as number, header[i + 1] as number);
      if (shift) moved.set(header[i] as number, shift);
    }
    const dimensions = dimensionRows(view, header, columns, rows);
    return shareParents(
      columns.map((c) => {
        const own = dimensions.labels.includes(c)
          ? header.filter((r) => !dimensions.rows.includes(r))
          : header;
        return headerPath(view, own, c, fill, moved);
      }),
    );
  }
  const name = view.text(upper as number, view.filledCols(upper as number)[0] as number);
  return columns.map((c) =>
    c <= edge
      ? headerPath(view, [lower as number], c, false)
      : [name, ...headerPath(view, [upper as number], c, false)],
  );
}

/**
 * Upper header rows that name the dimension of the column groups at the left edge, over the
 * label columns ("Province" over "Programme", "Code", beside "Eastern Cape", "Free State"):
 * the label columns' names are the lower rows' alone. `labels`: the label columns (words in
 * the data) that the last header row names.
 */
function dimensionRows(
  view: View,
  header: readonly number[],
  columns: readonly number[],
  rows: readonly number[],
): { rows: number[]; labels: number[] } {
  const last = header.at(-1);
  const sample = rows.slice(0, LOOK_BELOW);
  const labels: number[] = [];
  for (const c of columns) {
    const words = sample.filter((r) => view.word(r, c)).length;
    if (words * 2 <= sample.length || last === undefined || !view.filled(last, c)) break;
    labels.push(c);
  }
  if (labels.length < 2 || labels.length === columns.length) return { rows: [], labels: [] };
  const dimension = header.slice(0, -1).filter((u) => {
    const over = labels.filter((c) => view.filled(u, c));
    const beyond = columns.some((c) => !labels.includes(c) && view.filled(u, c));
    return over.length === 1 && over[0] === labels[0] && beyond;
  });
  return { rows: dimension, labels };
}

/** Header cells moved onto other columns: by header row, by column. */
type Moved = ReadonlyMap<number, ReadonlyMap<number, string>>;

export function headerPath(
  view: View,
  header: readonly number[],
  c: number,
  fill: boolean,
  moved: Moved = new Map(),
): string[] {
  const first = header[0] as number;
  const raw = header.map((r, i) => {
    const shifted = moved.get(r)?.get(c);
    if (shifted !== undefined) return shifted;
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

/** Runs of adjacent columns (positions in `cols`) that `same` keeps together, as [start, end]. */
function runsOf(count: number, same: (i: number) => boolean, keep: (i: number) => boolean) {
  const runs: [number, number][] = [];
  for (let i = 0; i < count; i++) {
    if (!keep(i)) continue;
    const run = runs[runs.length - 1];
    if (run && run[1] === i - 1 && same(i)) run[1] = i;
    else runs.push([i, i]);
  }
  return runs;
}

/**
 * An upper header row whose runs of one name stand shifted against the blocks of names in the
 * row below (a flattened header that dropped its spacer columns: "Regular season" over the
 * spacer and four of its five sub-labels): each run moves onto the nearest block of its width
 * within two columns, in order; only when every run finds one and some run moves.
 */
function shiftedRuns(view: View, upper: number, lower: number): Map<number, string> | undefined {
  const { cols } = view;
  const text = (r: number, i: number) => view.text(r, cols[i] as number);
  const runs = runsOf(
    cols.length,
    (i) => text(upper, i) === text(upper, i - 1),
    (i) => view.word(upper, cols[i] as number),
  ).filter(([a, b]) => b > a);
  const blocks = runsOf(
    cols.length,
    () => true,
    (i) => view.word(lower, cols[i] as number),
  );
  const moves: { from: [number, number]; to: [number, number] }[] = [];
  let after = -1;
  for (const run of runs) {
    const width = run[1] - run[0];
    let to: [number, number] | undefined;
    for (const block of blocks) {
      const [a, b] = block;
      if (a <= after || b - a !== width || Math.abs(a - run[0]) > 2) continue;
      if (!to || Math.abs(a - run[0]) < Math.abs(to[0] - run[0])) to = block;
    }
    if (!to) return undefined;
    moves.push({ from: run, to });
    after = to[1];
  }
  if (moves.every(({ from, to }) => from[0] === to[0])) return undefined;
  const moved = new Map<number, string>();
  for (const { from } of moves)
    for (let i = from[0]; i <= from[1]; i++) moved.set(cols[i] as number, "");
  for (const { from, to } of moves) {
    const name = text(upper, from[0]);
    for (let i = to[0]; i <= to[1]; i++) moved.set(cols[i] as number, name);
  }
  return moved;
}

/** Names that say "a share of the column before": "%", "percent", "share". */
const SHARE_NAME = /^(?:%|\(%\)|percent(?:age)?|per ?cent|pct\.?|share|% share)$/i;

/**
 * Share columns named only "%", repeated, each under the name of the column left of it
 * ("Male", "%" -> "Male / %").
 */
function shareParents(paths: string[][]): string[][] {
  const shares = paths.filter((p) => p.length === 1 && SHARE_NAME.test(p[0] as string));
  if (shares.length < 2) return paths;
  return paths.map((path, i) => {
    if (!shares.includes(path)) return path;
    const left = paths
      .slice(0, i)
      .reverse()
      .find((p) => p.length > 0 && !shares.includes(p));
    return left ? [...left, ...path] : path;
  });
}
