/** Column sums of sets of rows, to test whether a row adds them up (structure-rows.ts). */

import { PLACEHOLDER, type View } from "./structure-view.js";

/** A column's sum over a set of rows, read up to `upTo` of them. */
interface ColumnSum {
  upTo: number;
  sum: number;
  count: number;
  /** Parts other than zero. */
  nonZero: number;
  min: number;
  max: number;
  decimals: number;
  /** It holds something that is not a number. */
  words: boolean;
}

/**
 * Sums of a set of rows, column by column, to test a row that may close them. A column is read
 * only when a row asks about it, and each of its cells once.
 */
export class Sums {
  readonly #rows: number[] = [];
  readonly #columns = new Map<number, ColumnSum>();

  /** `ignore`: columns of codes (a row's number, its parent's), never summed. */
  constructor(
    readonly view: View,
    readonly ignore: ReadonlySet<number> = new Set(),
  ) {}

  get rows(): number {
    return this.#rows.length;
  }

  add(r: number): void {
    this.#rows.push(r);
  }

  #column(c: number): ColumnSum {
    let column = this.#columns.get(c);
    if (!column) {
      column = { upTo: 0, sum: 0, count: 0, nonZero: 0, min: 0, max: 0, decimals: 0, words: false };
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
      column.min = column.count === 0 ? value : Math.min(column.min, value);
      column.max = column.count === 0 ? value : Math.max(column.max, value);
      column.sum += value;
      column.count++;
      if (value !== 0) column.nonZero++;
      column.decimals = Math.max(column.decimals, decimalsOf(text, this.view.decimal));
    }
    return column;
  }

  /**
   * Whether row `r`'s number in column `c` is the column's sum here: rounded parts may miss
   * their rounded total by half a unit of the last digit each (whole numbers too, `rounded`).
   */
  #adds(r: number, c: number, rounded: boolean): boolean {
    const { sum, count, decimals: parts } = this.#column(c);
    const value = this.view.number(r, c) ?? Number.NaN;
    const decimals = Math.max(parts, decimalsOf(this.view.text(r, c), this.view.decimal));
    const tolerance =
      decimals > 0 || rounded
        ? 0.5 * 10 ** -decimals * count + 1e-9
        : 1e-9 * Math.max(1, Math.abs(sum));
    return Math.abs(value - sum) <= tolerance;
  }

  #numeric(r: number, skip: number | undefined): number[] {
    return this.view.cols.filter(
      (c) => c !== skip && !this.ignore.has(c) && this.view.number(r, c) !== null,
    );
  }

  /** Whether each number of row `r` is the sum of its column here, within rounding. */
  closedBy(r: number, skip: number | undefined, shaped = false, rounded = false): boolean {
    if (this.rows < 2) return false;
    const numeric = this.#numeric(r, skip);
    // One number the sum of two others is too easy a coincidence, unless the layout says so.
    if (numeric.length === 0 || (numeric.length === 1 && this.rows < 3 && !shaped)) return false;
    let someNonZero = false;
    for (const c of numeric) {
      const { sum, count, words } = this.#column(c);
      if (count < 2 || words || !this.#adds(r, c, rounded)) return false;
      if (sum !== 0) someNonZero = true;
    }
    return someNonZero;
  }

  /**
   * Of row `r`'s numbers, how many are their column's sum here within rounding (`adds`, with two
   * parts or more, not all zero), how many are not (`misses`), and of those how many lie
   * outside the parts' range (`outside`; a rate or a density of a parent lies within it).
   */
  tally(r: number, skip: number | undefined): { adds: number; misses: number; outside: number } {
    let adds = 0;
    let misses = 0;
    let outside = 0;
    for (const c of this.#numeric(r, skip)) {
      const { count, words, sum, min, max } = this.#column(c);
      if (words || count === 0) continue;
      if (this.#adds(r, c, true)) {
        if (count >= 2 && sum !== 0) adds++;
        continue;
      }
      misses++;
      const value = this.view.number(r, c) as number;
      if (value < min || value > max) outside++;
    }
    return { adds, misses, outside };
  }

  /**
   * Whether each number of row `r` is larger than any of its column here (three or more), the
   * column holding no negative number (a total of parts outgrows each of them).
   */
  outgrownBy(r: number, skip: number | undefined): boolean {
    const numeric = this.#numeric(r, skip);
    return (
      numeric.length > 0 &&
      numeric.every((c) => {
        const column = this.#column(c);
        const value = this.view.number(r, c) as number;
        return !column.words && column.count >= 3 && column.min >= 0 && value > column.max;
      })
    );
  }

  /**
   * Whether row `r` closes these rows with sums in some columns and, in the others, values
   * within the parts' range (the means, rates and shares of a total row): at least two sums,
   * each of three parts or more.
   */
  partlyClosedBy(r: number, skip: number | undefined): boolean {
    if (this.rows < 3) return false;
    const numeric = this.#numeric(r, skip);
    let sums = 0;
    for (const c of numeric) {
      const column = this.#column(c);
      if (column.count < 2 || column.words) return false;
      if (column.nonZero >= 3 && this.#adds(r, c, false)) {
        sums++;
        continue;
      }
      const value = this.view.number(r, c) as number;
      if (value < column.min || value > column.max) return false;
    }
    return sums >= 2 && sums < numeric.length;
  }
}

function decimalsOf(text: string, mark: "." | ","): number {
  const places = mark === "," ? /,(\d+)\D*$/ : /\.(\d+)\D*$/;
  return places.exec(text)?.[1]?.length ?? 0;
}
