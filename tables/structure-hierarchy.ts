/**
 * Hierarchies the data writes itself, in any language (structure-rows.ts): a "belongs to"
 * column naming each row's parent by its code, or a group column whose blocks each hold one row
 * adding up the others. Parents are found by their sums, never by their labels.
 */

import type { TableBlock } from "./structure.js";
import { Sums } from "./structure-sums.js";
import type { View } from "./structure-view.js";

interface Parent {
  row: number;
  children: number[];
}

const codeOf = (view: View, r: number, c: number) => view.text(r, c).trim();

/**
 * Whether a parent's numbers add up its children within rounding: all of them, or (`partly`)
 * two at least with nine in ten of the others within the children's range (rates, densities).
 */
function addsUp(
  view: View,
  row: number,
  children: readonly number[],
  skip: Set<number>,
  label: number,
  partly: boolean,
): boolean {
  const sums = new Sums(view, skip);
  for (const r of children) sums.add(r);
  const { adds, misses, outside } = sums.tally(row, label);
  if (!partly) return adds >= 1 && misses === 0;
  return adds >= 2 && outside * 10 <= adds + misses;
}

/** Rows by their text in column `c`, for rows that fill it. */
function byText(view: View, rows: readonly number[], c: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const code = codeOf(view, r, c);
    if (code === "") continue;
    const list = out.get(code);
    if (list) list.push(r);
    else out.set(code, [r]);
  }
  return out;
}

/**
 * A "belongs to" column `parent` naming, for most rows, the code another row holds in column
 * `key` (an election file's constituencies under their state, the states under the nation).
 * The row holding a code is the parent of the rows naming it when it is not one of them and
 * its numbers (the code columns aside) add up theirs; codes may repeat across levels (state 1
 * and seat 1): the sums decide.
 */
function codedParents(view: View, rows: readonly number[], label: number): Parent[] | undefined {
  const candidates = view.cols.filter((c) => c !== label);
  const texts = new Map<number, Map<string, number[]>>();
  const textsOf = (c: number) => {
    let known = texts.get(c);
    if (!known) {
      known = byText(view, rows, c);
      texts.set(c, known);
    }
    return known;
  };
  let best: Parent[] | undefined;
  for (const parent of candidates) {
    const groups = textsOf(parent);
    const named = [...groups.values()].reduce((n, list) => n + list.length, 0);
    if (named < rows.length * 0.8 || groups.size < 2 || groups.size * 2 > named) continue;
    const wanted = [...groups].filter(([, children]) => children.length >= 2);
    for (const key of candidates) {
      if (key === parent) continue;
      const codes = new Set([key, parent]);
      const holders = textsOf(key);
      const parents: Parent[] = [];
      for (const [code, children] of wanted) {
        const own = (holders.get(code) ?? []).find(
          (r) => !children.includes(r) && addsUp(view, r, children, codes, label, false),
        );
        if (own !== undefined) parents.push({ row: own, children });
      }
      if (parents.length >= 2 && parents.length * 2 >= wanted.length) {
        if (!best || parents.length > best.length) best = parents;
      }
    }
  }
  return best;
}

/** Columns numbering the rows (1, 2, 3, ... with the parents' codes between): never summed. */
function numbering(view: View, rows: readonly number[]): number[] {
  return view.cols.filter((c) => {
    let steps = 0;
    for (let i = 1; i < rows.length; i++) {
      const a = view.number(rows[i - 1] as number, c);
      const b = view.number(rows[i] as number, c);
      if (a === null || b === null || !Number.isInteger(a) || !Number.isInteger(b)) return false;
      if (b === a + 1) steps++;
    }
    return steps * 2 >= rows.length - 1;
  });
}

/**
 * A group column (a state's name on each of its rows) whose blocks of adjacent rows each hold,
 * first or last, a row whose numbers add up the block's other rows in two columns at least
 * (its others may be rates or densities; columns numbering the rows aside): in most blocks,
 * two at least.
 */
function blockParents(view: View, rows: readonly number[], label: number): Parent[] | undefined {
  let best: Parent[] | undefined;
  const codes = numbering(view, rows);
  for (const group of view.cols) {
    const blocks: number[][] = [];
    for (const r of rows) {
      const last = blocks.at(-1);
      const code = codeOf(view, r, group);
      if (last && code !== "" && code === codeOf(view, last[0] as number, group)) last.push(r);
      else blocks.push([r]);
    }
    const long = blocks.filter((block) => block.length >= 3);
    if (long.length < 2 || blocks.length * 2 > rows.length) continue;
    const skip = new Set([group, ...codes]);
    const parents: Parent[] = [];
    for (const block of long) {
      const first = block[0] as number;
      const last = block.at(-1) as number;
      if (addsUp(view, last, block.slice(0, -1), skip, label, true)) {
        parents.push({ row: last, children: block.slice(0, -1) });
      } else if (addsUp(view, first, block.slice(1), skip, label, true)) {
        parents.push({ row: first, children: block.slice(1) });
      }
    }
    if (parents.length >= 2 && parents.length * 2 >= long.length) {
      if (!best || parents.length > best.length) best = parents;
    }
  }
  return best;
}

/**
 * Blocks of a group column (a region's rows of flows) with the same keys in another column,
 * one block whose every row adds up the rows of its key in the other blocks (the whole
 * country's block): its rows are totals, each the parent of its key's rows.
 */
function crossBlockParents(
  view: View,
  rows: readonly number[],
  label: number,
): Parent[] | undefined {
  if (rows.length > 5000) return undefined;
  for (const group of view.cols.slice(0, 3)) {
    const blocks: number[][] = [];
    for (const r of rows) {
      const last = blocks.at(-1);
      const code = codeOf(view, r, group);
      if (code === "") return undefined;
      if (last && code === codeOf(view, last[0] as number, group)) last.push(r);
      else blocks.push([r]);
    }
    if (blocks.length < 3 || blocks.length * 2 > rows.length) continue;
    for (const key of view.cols) {
      if (key === group || !rows.every((r) => view.word(r, key))) continue;
      const keyOf = (r: number) => codeOf(view, r, key);
      const skip = new Set([group, key]);
      const totals = blocks.filter((block) =>
        block.every((r) => {
          const parts = blocks
            .filter((b) => b !== block)
            .flatMap((b) => b.filter((p) => keyOf(p) === keyOf(r)));
          return parts.length >= 2 && addsUp(view, r, parts, skip, label, false);
        }),
      );
      if (totals.length !== 1) continue;
      const [total] = totals as [number[]];
      return total.map((row) => ({
        row,
        children: rows.filter((r) => !total.includes(r) && keyOf(r) === keyOf(row)),
      }));
    }
  }
  return undefined;
}

/**
 * The parents of a hierarchy the data writes (by codes, else by blocks), and a row adding up
 * all the parents (the nation over its states): all are totals. Under coded parents every other
 * row's group is its parent's label.
 */
export function hierarchyGroups(
  view: View,
  rows: readonly number[],
  label: number,
  totals: TableBlock["totals"],
): Map<number, string> | undefined {
  if (rows.length < 6) return undefined;
  const coded = codedParents(view, rows, label);
  const parents = coded ?? blockParents(view, rows, label) ?? crossBlockParents(view, rows, label);
  if (!parents) return undefined;
  const isParent = new Set(parents.map((p) => p.row));
  const children = new Set(parents.flatMap((p) => p.children));
  const top = rows.filter((r) => !isParent.has(r) && !children.has(r));
  const tops = parents.filter((p) => !children.has(p.row)).map((p) => p.row);
  for (const r of top) {
    if (tops.length >= 2 && addsUp(view, r, tops, new Set(), label, true)) {
      parents.push({ row: r, children: tops });
    }
  }
  const groups = new Map<number, string>();
  for (const { row, children: under } of parents) {
    totals.push({ row, label: view.text(row, label), by: "arithmetic" });
    // Blocks are named by their own column already; codes name a parent only by its number.
    if (coded) for (const r of under) if (!groups.has(r)) groups.set(r, view.text(row, label));
  }
  return groups;
}
