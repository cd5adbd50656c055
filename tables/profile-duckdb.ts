import { stat } from "node:fs/promises";
import type { DuckDBConnection } from "@duckdb/node-api";
import { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { localArtifact } from "../storage/artifacts.js";
import { readDerived, writeDerived } from "./derived-cache.js";
import { isMissing, isNumericDtype, NA_VALUES } from "./dtypes.js";
import { csvScan, sqlIdentifier, sqlString, verifyArtifact } from "./duckdb-csv.js";
import { duckDbProblem, withDuckDb } from "./duckdb-scan.js";
import { storedTableError, TableLoadError } from "./errors.js";
import type { ColumnSummary, TableSummary, ValueSummary } from "./profile.js";

const ValueSummarySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("no-values") }),
  z.object({ kind: z.literal("range"), low: z.string(), high: z.string() }),
  z.object({ kind: z.literal("unranged") }),
  z.object({ kind: z.literal("booleans"), trueCount: z.number(), falseCount: z.number() }),
  z.object({ kind: z.literal("examples"), distinct: z.number(), examples: z.array(z.string()) }),
]);

const TableSummarySchema = z.object({
  rowCount: z.number().int().nonnegative(),
  columns: z.array(
    z.object({
      name: z.string(),
      dtype: z.string(),
      missing: z.number().int().nonnegative(),
      values: ValueSummarySchema,
    }),
  ),
  firstRows: z.array(z.array(z.string())),
});

/** Bump when a summary of the same table would come out otherwise. */
const SUMMARY = "summary-1";

/** Rows read in file order to find example values before scanning a column for them. */
const EXAMPLE_PREFIX_ROWS = 1_000;
const TRUE_SPELLINGS = ["True", "TRUE", "true"];

type Cell = string | null;

/** SQL for "this stored cell is missing", as pandas reads the CSV. */
function missingSql(column: string): string {
  return `(${column} IS NULL OR ${column} IN (${[...NA_VALUES].map(sqlString).join(", ")}))`;
}

/** The cell as a number the way the Node profile reads it; NULL when it is not one. */
function numberSql(column: string): string {
  return `TRY_CAST(trim(${column}) AS DOUBLE)`;
}

interface ColumnPlan {
  name: string;
  dtype: string;
  /** Identifier of the column in the scratch table. */
  sql: string;
}

/** The aggregates a column needs, each aliased `<prefix><index>`. */
function aggregatesFor(column: ColumnPlan, i: number): string[] {
  const c = column.sql;
  const present = `count(*) FILTER (WHERE NOT ${missingSql(c)}) AS present${i}`;
  if (isNumericDtype(column.dtype)) {
    // The first row holding the lowest (highest) number wins ties, as in the Node path.
    const numeric = `WHERE NOT ${missingSql(c)} AND NOT isnan(${numberSql(c)})`;
    return [
      present,
      `arg_min(trim(${c}), (${numberSql(c)}, rowid)) FILTER (${numeric}) AS low${i}`,
      `arg_max(trim(${c}), (${numberSql(c)}, -rowid)) FILTER (${numeric}) AS high${i}`,
    ];
  }
  if (column.dtype === "bool") {
    const spellings = TRUE_SPELLINGS.map(sqlString).join(", ");
    return [present, `count(*) FILTER (WHERE ${c} IN (${spellings})) AS yes${i}`];
  }
  return [present, `count(DISTINCT ${c}) FILTER (WHERE NOT ${missingSql(c)}) AS distinct${i}`];
}

function asCount(value: unknown): number {
  return Number(value ?? 0);
}

/** The first `limit` distinct present values of column `i` among `rows`. */
function firstDistinct(rows: Cell[][], i: number, limit: number): string[] {
  const seen = new Set<string>();
  for (const row of rows) {
    const value = row[i] ?? "";
    if (!isMissing(value)) seen.add(value);
    if (seen.size >= limit) break;
  }
  return [...seen];
}

async function summarize(
  connection: DuckDBConnection,
  ref: TableRef,
  opts: { sampleRows: number; examples: number },
): Promise<TableSummary> {
  // Read without a header so that every cell stays text and row 0 holds the names.
  const scan = csvScan(ref.uri, { header: false, allVarchar: true });
  await connection.run(`CREATE TABLE cells AS FROM ${scan}`);
  const described = await connection.runAndReadAll("SELECT column_name FROM (DESCRIBE cells)");
  const identifiers = described.getRows().map((row) => sqlIdentifier(String(row[0])));
  const prefixRows = Math.max(opts.sampleRows + 1, EXAMPLE_PREFIX_ROWS);
  const head = await connection.runAndReadAll(
    `SELECT * FROM cells WHERE rowid <= ${prefixRows} ORDER BY rowid`,
  );
  const [header = [], ...prefix] = head.getRows() as Cell[][];
  const plans: ColumnPlan[] = identifiers.map((sql, i) => ({
    name: header[i] ?? "",
    dtype: ref.columns[i]?.dtype ?? "object",
    sql,
  }));

  const aggregates = ["count(*) AS row_count", ...plans.flatMap(aggregatesFor)];
  const stats = await connection.runAndReadAll(
    `SELECT ${aggregates.join(", ")} FROM cells WHERE rowid > 0`,
  );
  const [totals = {}] = stats.getRowObjects();
  const rowCount = asCount(totals.row_count);

  const columns: ColumnSummary[] = [];
  for (const [i, plan] of plans.entries()) {
    const present = asCount(totals[`present${i}`]);
    let values: ValueSummary;
    if (present === 0) {
      values = { kind: "no-values" };
    } else if (isNumericDtype(plan.dtype)) {
      const low = totals[`low${i}`];
      const high = totals[`high${i}`];
      values =
        typeof low === "string" && typeof high === "string"
          ? { kind: "range", low, high }
          : { kind: "unranged" };
    } else if (plan.dtype === "bool") {
      const trueCount = asCount(totals[`yes${i}`]);
      values = { kind: "booleans", trueCount, falseCount: present - trueCount };
    } else {
      const distinct = asCount(totals[`distinct${i}`]);
      const wanted = Math.min(opts.examples, distinct);
      let examples = firstDistinct(prefix, i, wanted);
      if (examples.length < wanted) {
        // Few distinct values early on: look through the whole column, in row order.
        const found = await connection.runAndReadAll(
          `SELECT ${plan.sql} FROM cells WHERE rowid > 0 AND NOT ${missingSql(plan.sql)} ` +
            `GROUP BY ${plan.sql} ORDER BY min(rowid) LIMIT ${wanted}`,
        );
        examples = found.getRows().map((row) => String(row[0]));
      }
      values = { kind: "examples", distinct, examples };
    }
    columns.push({ name: plan.name, dtype: plan.dtype, missing: rowCount - present, values });
  }
  const firstRows = prefix
    .slice(0, Math.max(opts.sampleRows, 0) + 1)
    .map((row) => plans.map((_, i) => row[i] ?? ""));
  return { rowCount, columns, firstRows };
}

const MAX_CACHED_SUMMARIES = 16;
/** Summaries by table content and options; Map order is recency of use, oldest first. */
const cache = new Map<string, TableSummary>();

/**
 * Summarizes a stored table with DuckDB, for tables too large to parse whole in Node:
 * counts, ranges and distinct values come from aggregate queries, the first rows from
 * the start of the file. The result matches what the Node path computes. Recent
 * summaries are kept, since prompts for one table are built again and again.
 */
export async function summarizeWithDuckDb(
  ref: TableRef,
  opts: { sampleRows: number; examples: number },
): Promise<TableSummary> {
  const parts = [ref.sha256, ref.columns, opts.sampleRows, opts.examples];
  const key = JSON.stringify(parts);
  const cached = cache.get(key) ?? (await summarizeStored(ref, opts, parts));
  cache.delete(key);
  cache.set(key, cached);
  for (const oldest of cache.keys()) {
    if (cache.size <= MAX_CACHED_SUMMARIES) break;
    cache.delete(oldest);
  }
  return cached;
}

/** A summary kept on disk by an earlier process, while its table is still stored, or a new one. */
async function summarizeStored(
  ref: TableRef,
  opts: { sampleRows: number; examples: number },
  key: readonly unknown[],
): Promise<TableSummary> {
  const kept = await readDerived(SUMMARY, key, TableSummarySchema);
  if (kept && (await stat(await localArtifact(ref)).catch(() => null))) return kept;
  const made = await summarizeUncached(ref, opts);
  await writeDerived(SUMMARY, key, made);
  return made;
}

async function summarizeUncached(
  ref: TableRef,
  opts: { sampleRows: number; examples: number },
): Promise<TableSummary> {
  const local = { ...ref, uri: await verifyArtifact(ref) };
  try {
    return await withDuckDb((connection) => summarize(connection, local, opts));
  } catch (error) {
    if (error instanceof TableLoadError) throw error;
    throw storedTableError(local, `DuckDB could not profile it: ${duckDbProblem(error)}`, {
      cause: error,
    });
  }
}
