import { z } from "zod";
import type { TableRef } from "../../blackboard/schemas.js";

/*
 * The shape of the tables an episode was solved over, kept with the entry so a lesson is only
 * recalled for tables of a similar schema: column names normalized, types as broad kinds.
 */

export const ColumnKindSchema = z.enum(["number", "text", "date", "boolean"]);
export type ColumnKind = z.infer<typeof ColumnKindSchema>;

export const SchemaColumnSchema = z.object({ name: z.string(), type: ColumnKindSchema });
export type SchemaColumn = z.infer<typeof SchemaColumnSchema>;

/** "Gold Medals", "gold_medals" and "GOLD-medals " are one name: "gold medals". */
export function normalizeColumnName(name: string): string {
  return name
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** The broad kind of a dtype as pandas, DuckDB or the loader spell it. */
export function columnKind(dtype: string): ColumnKind {
  const d = dtype.toLowerCase();
  if (/^bool/.test(d)) return "boolean";
  if (/date|time|period/.test(d)) return "date";
  if (/^(?:u?int|float|double|decimal|numeric|real|big|small|tiny|hugeint|number)/.test(d))
    return "number";
  return "text";
}

/** The columns of a run's tables, each name once (the first table that has it gives its kind). */
export function tableSchema(tables: readonly Pick<TableRef, "columns">[]): SchemaColumn[] {
  const out = new Map<string, SchemaColumn>();
  for (const table of tables)
    for (const column of table.columns) {
      const name = normalizeColumnName(column.name);
      if (!out.has(name)) out.set(name, { name, type: columnKind(column.dtype) });
    }
  return [...out.values()];
}

/**
 * How alike two schemas are, 0-1: the Jaccard index of their column names, where a name both
 * have counts whole when its kind agrees and half when it does not. No columns on either side: 0.
 */
export function schemaSimilarity(a: readonly SchemaColumn[], b: readonly SchemaColumn[]): number {
  const left = new Map(a.map((c) => [c.name, c.type]));
  const right = new Map(b.map((c) => [c.name, c.type]));
  let shared = 0;
  let common = 0;
  for (const [name, type] of right) {
    const kind = left.get(name);
    if (kind === undefined) continue;
    common += 1;
    shared += kind === type ? 1 : 0.5;
  }
  const union = left.size + right.size - common;
  return union === 0 ? 0 : shared / union;
}
