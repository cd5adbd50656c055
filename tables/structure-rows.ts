/** The rows of a table after its header (structure.ts): notes, sections, groups, totals. */

import type { TableBlock } from "./structure.js";
import { NUMBER_START } from "./structure-cells.js";
import { hierarchyGroups } from "./structure-hierarchy.js";
import { Sums } from "./structure-sums.js";
import {
  ALL_LABEL,
  LEADING_SPACE,
  LOOK_BELOW,
  NOTE_MARK,
  PLACEHOLDER,
  RULE_LINE,
  TOTAL_LABEL,
  type View,
} from "./structure-view.js";

/**
 * Trailing rows of words alone (no value, no number with a remark) under data rows that all hold
 * values, from `tail` up: where they start, and whether one puts words where the data has
 * numbers. Undefined when there are none or the rows above do not all hold values.
 */
function wordsBelow(
  view: View,
  data: readonly number[],
  tail: number,
): { start: number; misplaced: boolean } | undefined {
  const placeholder = (r: number) =>
    view.filledCols(r).some((c) => PLACEHOLDER.test(view.text(r, c)));
  const wordy = (r: number) =>
    view.single(r) !== null ||
    (view.allText(r) && view.filledCols(r).every((c) => !NUMBER_START.test(view.text(r, c))));
  let start = tail;
  while (start > 0 && tail - start < LOOK_BELOW && wordy(data[start - 1] as number)) start--;
  // Nothing to stand under, or too long a run of words for notes.
  if (start === tail || start === 0 || wordy(data[start - 1] as number)) return undefined;
  const above = data
    .slice(Math.max(0, start - LOOK_BELOW), start)
    .filter((r) => view.single(r) === null);
  const valued = above.filter((r) => view.typed(r) || placeholder(r)).length;
  if (above.length < 2 || valued * 10 < above.length * 9) return undefined;
  const typed = view.cols.filter((c) => view.typedColumn(c, above));
  const misplaced = data
    .slice(start)
    .some((r) => typed.some((c) => view.word(r, c) && !NUMBER_START.test(view.text(r, c))));
  return { start, misplaced };
}

/**
 * Rows after the header that are notes: trailing single lines set apart, and marked single
 * lines. Under data rows that all hold values, trailing rows of words alone join the single
 * lines: all of them are notes when one puts words where the data has numbers, else from the
 * first one set apart.
 */
export function findNotes(view: View, data: readonly number[], narrow: boolean): Set<number> {
  const notes = new Set<number>();
  if (narrow) return notes; // in a one-column table every row is a single text
  const setApart = (r: number, i: number) => {
    const single = view.single(r);
    const text = single ?? view.line(r);
    const previous = i > 0 ? (data[i - 1] as number) : -1;
    const merged = view.filledCols(r).some((c) => {
      const m = view.mergeAt(r, c);
      return m !== undefined && m.col1 > m.col0;
    });
    return (
      NOTE_MARK.test(text) ||
      RULE_LINE.test(text.trim()) ||
      merged ||
      (single !== null && view.filledCols(r).length > 1) ||
      (previous >= 0 && r > previous + 1 && !view.hiddenRow.has(r - 1)) ||
      (previous >= 0 && leadingWords(view, previous).some((w) => TOTAL_LABEL.test(w))) ||
      (text.length >= 40 && text.includes(" "))
    );
  };
  let tail = data.length;
  while (tail > 0 && view.single(data[tail - 1] as number) !== null) tail--;
  const words = wordsBelow(view, data, tail);
  if (words) tail = words.start;
  let from = words?.misplaced ? tail : -1;
  for (let i = tail; from < 0 && i < data.length; i++) if (setApart(data[i] as number, i)) from = i;
  if (from >= 0) for (const r of data.slice(from)) notes.add(r);
  for (const r of data) if (NOTE_MARK.test(view.single(r) ?? "")) notes.add(r);
  return notes;
}

/** Dot leaders filling a label out to its numbers: `March . . . . .`, `Total.......`. */
const LEADER = /\s*\.(?:\s+\.){2,}\s*$|\s*\.{4,}\s*$/;

/**
 * The words of a row before its first number after them (numbers before any word, such as a
 * year or a code in the first columns, are passed over), empty cells skipped, dot leaders
 * taken off.
 */
export function leadingWords(view: View, r: number): string[] {
  const words: string[] = [];
  for (const c of view.cols) {
    const text = view.text(r, c);
    if (text === "") continue;
    if (view.number(r, c) !== null) {
      if (words.length > 0) break;
      continue;
    }
    words.push(text.endsWith(".") ? text.replace(LEADER, "") : text);
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

/** The one text a row repeats in its cells, placeholders aside ("State Hluttaws" across the row). */
function spreadText(view: View, r: number): string | null {
  let text: string | null = null;
  let cells = 0;
  for (const c of view.filledCols(r)) {
    const own = view.text(r, c);
    if (PLACEHOLDER.test(own)) continue;
    if (view.cell(r, c).kind !== "text" || (text !== null && own !== text)) return null;
    text = own;
    cells++;
  }
  return cells >= 2 ? text : null;
}

/**
 * Section rows: single labels between data rows (one cell in the label column, or one text
 * across the row), at least two of them, each over data.
 */
function findSections(view: View, seq: readonly number[], label: number | undefined): Set<number> {
  if (label === undefined) return new Set();
  const candidates = seq.filter((r, i) => {
    const filled = view.filledCols(r);
    const next = seq[i + 1];
    const lone = filled.length === 1 && filled[0] === label;
    const spread = filled.length > 1 && filled.includes(label) && spreadText(view, r) !== null;
    return (
      (lone || spread) && view.word(r, label) && next !== undefined && view.single(next) === null
    );
  });
  return new Set(candidates.length >= 2 ? candidates : []);
}

/** A label's indent: the workbook's indent level, else its leading spaces. */
function indentOf(view: View, r: number, label: number): number {
  const cell = view.cell(r, label);
  const spaces = LEADING_SPACE.exec(cell.text)?.[0].length ?? 0;
  return (cell.indent ?? 0) * 4 + spaces;
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

/** Rows summed per row, at most, looking for parents above their parts. */
const HEADING_BUDGET = 16;

/**
 * Parents above their parts when no indent shows them (a CSV, a workbook whose indent is not
 * read): the rows split into consecutive groups, each a row whose numbers are the sums of the
 * rows under it down to the next group, two groups at least. The parents are subtotals.
 */
function headingGroups(
  view: View,
  rows: readonly number[],
  label: number,
  totals: TableBlock["totals"],
): Map<number, string> | undefined {
  const n = rows.length;
  if (n < 6) return undefined;
  let budget = HEADING_BUDGET * n;
  const known = new Map<number, number[]>();
  /** Where a group headed by rows[i] may end (exclusive): the parent's numbers add up there. */
  const ends = (i: number): number[] => {
    const cached = known.get(i);
    if (cached) return cached;
    const found: number[] = [];
    known.set(i, found);
    const r = rows[i] as number;
    const key = view.cols.find((c) => c !== label && view.number(r, c) !== null);
    if (key === undefined) return found;
    const target = view.number(r, key) as number;
    let sum = 0;
    let signed = false;
    const parts = new Sums(view);
    for (let j = i + 1; j < n && budget > 0; j++, budget--) {
      const value = view.number(rows[j] as number, key);
      if (value === null && !PLACEHOLDER.test(view.text(rows[j] as number, key))) break;
      sum += value ?? 0;
      if ((value ?? 0) < 0) signed = true;
      parts.add(rows[j] as number);
      if (j - i >= 2 && Math.abs(sum - target) <= 0.5 * (j - i) + 1e-9) {
        if (parts.closedBy(r, label, true)) found.push(j + 1);
      }
      if (!signed && sum > Math.abs(target) + 0.5 * (j - i)) break;
    }
    return found;
  };
  const parents: { row: number; end: number }[] = [];
  for (let i = 0; i < n; ) {
    const end = ends(i).find((j) => j === n || ends(j).length > 0);
    if (end === undefined) return undefined;
    parents.push({ row: rows[i] as number, end });
    i = end;
  }
  if (parents.length < 2) return undefined;
  const groups = new Map<number, string>();
  let at = 0;
  for (const { row, end } of parents) {
    const name = view.text(row, label);
    totals.push({ row, label: name, by: "arithmetic" });
    groups.set(row, "");
    for (at++; at < end; at++) groups.set(rows[at] as number, name);
  }
  return groups;
}

/** Labels of the period a total row adds up: "2018 Annual", "Year to date", "Latest 12 months". */
const PERIOD_TOTAL =
  /(?:^|\s)(?:annual(?:\s+total)?|year[\s-]+to[\s-]+date|ytd|full[\s-]+year|latest\s+\S+\s+months)$/i;
/** A label starting as a total's ("Total Schools Globally"), and as films' ("Total Recall"). */
const TOTAL_START = /^(?:grand\s+|sub-?)?totals?\b/i;

/**
 * Sections whose name is a total's ("TOTAL SELECTED INDUSTRIES", "All regions"), each row the
 * sum of the rows of the same label in the other sections (within rounding) for most of them:
 * all their rows are totals, labelled with the section's name.
 */
function totalSections(
  view: View,
  seq: readonly number[],
  sections: ReadonlySet<number>,
  label: number | undefined,
): Map<number, string> {
  const found = new Map<number, string>();
  if (label === undefined || sections.size < 3) return found;
  const parts: { name: string; rows: number[] }[] = [];
  for (const r of seq) {
    if (sections.has(r)) parts.push({ name: view.text(r, label), rows: [] });
    else parts[parts.length - 1]?.rows.push(r);
  }
  const named = (name: string) => TOTAL_START.test(name) || ALL_LABEL.test(name);
  for (const part of parts) {
    if (!named(part.name) || part.rows.length === 0) continue;
    const byLabel = new Map<string, Sums>();
    for (const other of parts) {
      if (other === part || named(other.name)) continue;
      for (const r of other.rows) {
        const key = view.text(r, label);
        const sums = byLabel.get(key) ?? new Sums(view);
        sums.add(r);
        byLabel.set(key, sums);
      }
    }
    const adds = part.rows.filter((r) => {
      const sums = byLabel.get(view.text(r, label));
      return sums?.closedBy(r, label, true, true) === true;
    });
    if (adds.length * 2 < part.rows.length) continue;
    for (const r of part.rows) found.set(r, `${part.name} ${view.text(r, label)}`.trim());
  }
  return found;
}

/**
 * Whether row `r` holds, in each group of columns under one header name, one number repeated
 * (a merged cell spread out) that is the sum of the group's cells in row `above`, in two groups
 * or more ("Deputies" 89 + "Senators" 32 above 121, 121).
 */
function spreadTotal(view: View, r: number, above: number, spans: readonly number[][]): boolean {
  let matched = 0;
  for (const span of spans) {
    const values = span.map((c) => view.number(r, c));
    const parts = span.map((c) => view.number(above, c));
    if (values.every((v) => v === null) && parts.every((p) => p === null)) continue;
    const value = values[0];
    if (value === null || value === undefined || values.some((v) => v !== value)) return false;
    if (parts.some((p) => p === null)) return false;
    const sum = parts.reduce<number>((a, b) => a + (b ?? 0), 0);
    if (Math.abs(sum - value) > 1e-9 * Math.max(1, Math.abs(value))) return false;
    if (value !== 0) matched++;
  }
  return matched >= 2;
}

/**
 * Sections, groups and totals of the data rows `seq` (header, notes and hidden rows left out).
 * A total by label names itself ("Total", "Career totals"; "All ..." and period totals such as
 * "2018 Annual" at the top or the bottom or in a block of them; "Total ..." when it outgrows
 * every row; the rows of a section named as a total that add up the other sections); a total
 * by arithmetic is a row whose numbers are the sums of the rows it closes (since the last total
 * or section, or all rows above, or the subtotals above), looked for where a total stands:
 * last, before a section or blank, or unlabelled; anywhere when its label is "All ...", or when
 * it repeats the sums of the row above over header groups (`spans`). Parents above their parts
 * are found by indent, else by arithmetic alone.
 */
export function rowRoles(
  view: View,
  seq: readonly number[],
  label: number | undefined,
  spans: readonly number[][] = [],
): RowRoles {
  const sections = findSections(view, seq, label);
  const totals: TableBlock["totals"] = [];
  const data = seq.filter((r) => !sections.has(r));
  const firstData = data[0];
  const lastData = data[data.length - 1];
  // Labels naming a total wherever it stands; period totals in a block of them or at an edge.
  const words = seq.map((r) => (sections.has(r) ? [] : leadingWords(view, r)));
  const named = new Map<number, string>();
  const periods: { row: number; label: string }[] = [];
  for (const [i, r] of seq.entries()) {
    if (sections.has(r)) continue;
    const own = words[i] as string[];
    const edge = r === firstData || r === lastData;
    const found =
      own.find((w) => TOTAL_LABEL.test(w)) ??
      (edge && ALL_LABEL.test(own[0] ?? "") ? own[0] : undefined);
    const period = found === undefined && PERIOD_TOTAL.test(own[0] ?? "") ? own[0] : undefined;
    if (found !== undefined && hasNumber(view, r)) named.set(r, found);
    else if (period !== undefined && hasNumber(view, r)) {
      if (edge) named.set(r, period);
      periods.push({ row: r, label: period });
    }
  }
  if (periods.length >= 2) for (const { row, label: name } of periods) named.set(row, name);

  let groups: Map<number, string> | undefined;
  if (sections.size > 0) {
    groups = new Map();
    let section = "";
    for (const r of seq) {
      if (sections.has(r)) section = view.text(r, label as number);
      else groups.set(r, section);
    }
  } else if (label !== undefined) {
    const plain = data.filter((r) => !named.has(r));
    groups =
      indentGroups(view, seq, label, totals) ??
      hierarchyGroups(view, plain, label, totals) ??
      headingGroups(view, plain, label, totals);
  }
  const sectionTotals = totalSections(view, seq, sections, label);
  const isTotal = new Set(totals.map((t) => t.row));
  let group = new Sums(view);
  const all = new Sums(view);
  const subtotals = new Sums(view);
  let previous: number | undefined;
  for (const [i, r] of seq.entries()) {
    const above = previous;
    previous = undefined;
    if (sections.has(r)) {
      group = new Sums(view);
      continue;
    }
    if (isTotal.has(r)) continue;
    const own = words[i] as string[];
    const started = own.find((w) => TOTAL_START.test(w));
    const name =
      named.get(r) ??
      sectionTotals.get(r) ??
      (started !== undefined && group.outgrownBy(r, label) ? started : undefined);
    if (name !== undefined) {
      totals.push({ row: r, label: name, by: "label" });
      subtotals.add(r);
      group = new Sums(view);
      continue;
    }
    const next = seq[i + 1];
    const unlabelled =
      label !== undefined && (!view.filled(r, label) || PLACEHOLDER.test(view.text(r, label)));
    const gapAfter = next !== undefined && next > r + 1;
    const gapBefore = i > 0 && r > (seq[i - 1] as number) + 1;
    const closing =
      next === undefined || sections.has(next) || gapAfter || unlabelled || r === lastData;
    // Set apart on both sides (blank or dash rows), or named "Total ...": sums in some columns.
    const apart = (gapBefore && (gapAfter || next === undefined)) || started !== undefined;
    const allLabel = ALL_LABEL.test(own[0] ?? "");
    const adds =
      ((closing || allLabel || started !== undefined) &&
        (group.closedBy(r, label) || all.closedBy(r, label) || subtotals.closedBy(r, label))) ||
      (apart && (group.partlyClosedBy(r, label) || all.partlyClosedBy(r, label))) ||
      (above !== undefined && above === seq[i - 1] && spreadTotal(view, r, above, spans));
    if (adds) {
      totals.push({ row: r, label: own[0] ?? "", by: "arithmetic" });
      subtotals.add(r);
      group = new Sums(view);
      continue;
    }
    group.add(r);
    all.add(r);
    previous = r;
  }
  totals.sort((a, b) => a.row - b.row);
  return { sections, totals, ...(groups ? { groups } : {}) };
}
