import { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { readDerived, writeDerived } from "./derived-cache.js";
import { isMissing, isNumericDtype, isTrue, numericValue } from "./dtypes.js";
import type { TableData } from "./read.js";

/** Distinct (column, value) pairs an index keeps by default, as TableRAG's cell budget. */
export const DEFAULT_MAX_CELLS = 10_000;
/** Most frequent values kept per column for its statistics. */
export const TOP_VALUES = 3;
/** First rows kept, the most any configuration shows as samples. */
export const KEPT_FIRST_ROWS = 50;

const ValueCountSchema = z.object({ value: z.string(), count: z.number() });
export type ValueCount = z.infer<typeof ValueCountSchema>;

/** One column's statistics. */
const ColumnStatsSchema = z.object({
  name: z.string(),
  dtype: z.string(),
  missing: z.number(),
  /** Distinct present values. */
  distinct: z.number(),
  /** Lowest and highest number as written, for numeric columns with numbers. */
  range: z.object({ low: z.string(), high: z.string() }).optional(),
  /** For bool columns. */
  booleans: z.object({ trueCount: z.number(), falseCount: z.number() }).optional(),
  /** The most frequent present values, most frequent first (ties: first seen). */
  top: z.array(ValueCountSchema),
});
export type ColumnStats = z.infer<typeof ColumnStatsSchema>;

/** A distinct (column, value) pair with how many rows hold it. */
const CellEntrySchema = z.object({ column: z.number(), value: z.string(), count: z.number() });
export type CellEntry = z.infer<typeof CellEntrySchema>;

/**
 * What is known about a table before any question: statistics per column, and the cell index
 * of distinct (column, value) pairs, most frequent first, capped at a budget of cells. Kept on
 * disk for large tables (derived-cache.ts), hence a schema.
 */
export const TableIndexSchema = z.object({
  rowCount: z.number(),
  columns: z.array(ColumnStatsSchema),
  cells: z.array(CellEntrySchema),
  /** Per column: every distinct value of it is in `cells`. */
  complete: z.array(z.boolean()),
  /** The first rows (at most KEPT_FIRST_ROWS), missing cells empty. */
  firstRows: z.array(z.array(z.string())),
});
export type TableIndex = z.infer<typeof TableIndexSchema>;

/** The global cap over per-column counts, most frequent first; ties by column then value. */
export function capCells(perColumn: CellEntry[][], maxCells: number): CellEntry[] {
  return perColumn
    .flat()
    .sort(
      (a, b) =>
        b.count - a.count ||
        a.column - b.column ||
        (a.value < b.value ? -1 : a.value > b.value ? 1 : 0),
    )
    .slice(0, Math.max(maxCells, 0));
}

/** Whether each column's distinct values all made it into `cells`. */
export function completeness(cells: CellEntry[], distinct: number[]): boolean[] {
  const kept = distinct.map(() => 0);
  for (const cell of cells) kept[cell.column] = (kept[cell.column] ?? 0) + 1;
  return distinct.map((d, i) => (kept[i] ?? 0) >= d);
}

/** Builds the index of a table held in memory (one below the large-table threshold). */
export function buildIndexInNode(
  data: TableData,
  dtypes: readonly string[],
  maxCells = DEFAULT_MAX_CELLS,
): TableIndex {
  const perColumn: CellEntry[][] = [];
  const columns = data.columns.map((name, c): ColumnStats => {
    const dtype = dtypes[c] ?? "object";
    const counts = new Map<string, number>();
    let missing = 0;
    let low: { n: number; text: string } | null = null;
    let high: { n: number; text: string } | null = null;
    const numeric = isNumericDtype(dtype);
    for (const row of data.rows) {
      const value = row[c] ?? "";
      if (isMissing(value)) {
        missing++;
        continue;
      }
      counts.set(value, (counts.get(value) ?? 0) + 1);
      if (!numeric) continue;
      const n = numericValue(value);
      if (n === null || Number.isNaN(n)) continue;
      if (low === null || n < low.n) low = { n, text: value.trim() };
      if (high === null || n > high.n) high = { n, text: value.trim() };
    }
    // Map order is first appearance, and the sort is stable: ties keep row order.
    const entries = [...counts].map(([value, count]) => ({ column: c, value, count }));
    entries.sort((a, b) => b.count - a.count);
    perColumn.push(entries.slice(0, maxCells));
    const stats: ColumnStats = {
      name,
      dtype,
      missing,
      distinct: counts.size,
      top: entries.slice(0, TOP_VALUES).map(({ value, count }) => ({ value, count })),
    };
    if (low && high) stats.range = { low: low.text, high: high.text };
    if (dtype === "bool") {
      let trueCount = 0;
      for (const [value, count] of counts) if (isTrue(value)) trueCount += count;
      stats.booleans = { trueCount, falseCount: data.rows.length - missing - trueCount };
    }
    return stats;
  });
  const cells = capCells(perColumn, maxCells);
  return {
    rowCount: data.rows.length,
    columns,
    cells,
    complete: completeness(
      cells,
      columns.map((column) => column.distinct),
    ),
    firstRows: data.rows.slice(0, KEPT_FIRST_ROWS),
  };
}

/** The derived cache's kind for cell indexes; bump when the same table would index otherwise. */
const CELL_INDEX = "cells-1";

function cellIndexKey(ref: TableRef, maxCells: number): unknown[] {
  return [ref.sha256, ref.columns, maxCells];
}

/** The index kept on disk for this table content, columns and budget, by any process; or null. */
export function keptIndex(ref: TableRef, maxCells: number): Promise<TableIndex | null> {
  return readDerived(CELL_INDEX, cellIndexKey(ref, maxCells), TableIndexSchema);
}

/** Keeps a table's index on disk for any later process (a failure only loses the reuse). */
export function keepIndex(ref: TableRef, maxCells: number, index: TableIndex): Promise<void> {
  return writeDerived(CELL_INDEX, cellIndexKey(ref, maxCells), index);
}
