/** The sheet as the structure reader's rules see it (structure.ts): words, rows and columns. */

import type { RawCell, RawSheet, Span, StructureOptions } from "./structure.js";
import { EMPTY_CELL, plainNumber } from "./structure-cells.js";

// --- words --------------------------------------------------------------------------------

/** Cells that stand for "nothing here" or "too small to show": a dash, n/a, dots, stars. */
export const PLACEHOLDER = /^(?:[-\u2010-\u2015\u2212]+|n\/?a|\.{2,}|\u2026|\?|\*{1,3})$/i;

/** A line drawn with one character (`__________`, `-----`, `=====`): a rule closing the data. */
export const RULE_LINE = /^(?:_{3,}|-{3,}|={3,}|\*{4,}|\u2014{2,}|\u2500{2,})$/;

/** Labels of total rows: the whole label, or one ending in "total(s)" ("Career totals"). */
export const TOTAL_LABEL =
  /^(?:(?:grand|sub|overall)[\s-]*)?totals?\b(?:\s*[:(,].*)?$|^\S.*\btotals?$|^(?:sub-?totals?|sum|summe|gesamt|insgesamt|zusammen|totaal|totale|totalt|somme|suma|итого|всего|合计|总计|合計|總計)\b:?$/iu;
/** "All ages", "All regions": a total only at the top or the bottom of the data. */
export const ALL_LABEL = /^all\s+\S+(?:\s+\S+)?$/i;

/** How notes, footnotes and sources start. */
export const NOTE_MARK =
  /^(?:notes?\b|n\.?b\.?\s|sources?\b|footnotes?\b|remarks?\b|\*|†|‡|§|\(\d{1,2}\)|\[\d{1,2}\]|\d{1,2}\)|[a-z]\)|[a-z]\/|\d{1,2}\/(?!\d))/i;

export const LEADING_SPACE = /^[ \t\u00a0\u3000]+/;

// --- the sheet as the rules see it ---------------------------------------------------------

export class View {
  readonly cols: number[];
  readonly hiddenRow: Set<number>;
  readonly hiddenCol: Set<number>;
  readonly numberOf: (text: string) => number | null;
  readonly decimal: "." | ",";
  /** Each merge of more than one cell, by every cell it covers. */
  readonly #merged = new Map<number, Span>();
  readonly #width: number;
  // Rules ask the same of a row many times; a sheet may have a million rows.
  readonly #filledCols: (number[] | undefined)[] = [];
  readonly #single = new Map<number, string | null>();
  /** Each cell's number once read: 0 unread, 1 none, 2 in #values. */
  readonly #read: Uint8Array;
  readonly #values: Float64Array;
  /** Label cells filled down from the label above them (fillDown). */
  readonly #fills = new Map<number, RawCell>();

  /** `only`: the columns of one band of tables side by side. */
  constructor(
    readonly sheet: RawSheet,
    readonly options: StructureOptions,
    only?: readonly number[],
  ) {
    this.#width = sheet.cells[0]?.length ?? 0;
    this.hiddenRow = new Set(sheet.hiddenRows);
    this.hiddenCol = new Set(sheet.hiddenColumns);
    const all = only ? [...only] : Array.from({ length: this.#width }, (_, c) => c);
    this.cols = options.includeHidden ? all : all.filter((c) => !this.hiddenCol.has(c));
    this.numberOf = options.numberOf ?? plainNumber;
    this.decimal = options.decimal ?? ".";
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
    if (this.#fills.size > 0) {
      const fill = this.#fills.get(r * this.#width + c);
      if (fill) return fill;
    }
    return this.sheet.cells[r]?.[c] ?? EMPTY_CELL;
  }

  /** Reads an empty cell as holding `text`: a label written only on the first row of its block. */
  fillDown(r: number, c: number, text: string): void {
    this.#fills.set(r * this.#width + c, { text, kind: "text" });
    this.#filledCols[r] = undefined;
    this.#single.delete(r);
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

  /** A row holding a number, a date or a boolean, as data rows do and header rows mostly not. */
  typed(r: number): boolean {
    return this.filledCols(r).some((c) => this.cell(r, c).kind !== "text");
  }

  /** A row of placeholders only ("-" across the row): a separator, read as a blank row. */
  dashes(r: number): boolean {
    const filled = this.filledCols(r);
    return filled.length >= 2 && filled.every((c) => PLACEHOLDER.test(this.text(r, c)));
  }

  /** A row's text as one line: its single text, or its filled cells joined. */
  line(r: number): string {
    return (
      this.single(r) ??
      this.filledCols(r)
        .map((c) => this.text(r, c))
        .join(" ")
    );
  }

  /** A row whose filled cells are all text (placeholders included), at least `least` of them. */
  allText(r: number, least = 1): boolean {
    const filled = this.filledCols(r);
    return filled.length >= least && filled.every((c) => this.cell(r, c).kind === "text");
  }

  /** Column `c` holds mostly numbers, dates or booleans in `rows` (blanks, placeholders aside). */
  typedColumn(c: number, rows: readonly number[]): boolean {
    let seen = 0;
    let typed = 0;
    for (const r of rows) {
      const cell = this.cell(r, c);
      if (cell.kind === "empty" || PLACEHOLDER.test(cell.text.trim())) continue;
      seen++;
      if (cell.kind !== "text") typed++;
    }
    return seen > 0 && typed * 2 >= seen;
  }

  /** A word in row `r`, not a placeholder, in column `c`. */
  word(r: number, c: number): boolean {
    const cell = this.cell(r, c);
    return cell.kind === "text" && cell.text.trim() !== "" && !PLACEHOLDER.test(cell.text.trim());
  }

  /** Some column holds a word in row `r` and mostly numbers, dates or booleans in `below`. */
  contrast(r: number, below: readonly number[]): boolean {
    return this.cols.some((c) => this.word(r, c) && this.typedColumn(c, below));
  }
}

/** Rows below a candidate header row looked at for data. */
export const LOOK_BELOW = 50;

export interface Draft {
  titles: number[];
  body: number[];
}

/** The first rows of `rows` that are not single texts, up to `n`. */
export function dataLike(view: View, rows: readonly number[], n = 5): number[] {
  const out: number[] = [];
  for (const r of rows) {
    if (out.length >= n) break;
    if (view.single(r) === null) out.push(r);
  }
  return out;
}

/** The first column whose data cells are mostly words: where row labels are. */
export function labelColumn(view: View, rows: readonly number[]): number | undefined {
  let fallback: number | undefined;
  for (const c of view.cols) {
    const kinds = rows.map((r) => view.cell(r, c)).filter((k) => k.text.trim() !== "");
    if (kinds.length === 0) continue;
    fallback ??= c;
    if (kinds.filter((k) => k.kind === "text").length * 2 >= kinds.length) return c;
  }
  return fallback;
}
