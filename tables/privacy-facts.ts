import type { DuckDBConnection } from "@duckdb/node-api";
import type { TableRef } from "../blackboard/schemas.js";
import { WorkCache } from "../storage/bounded-cache.js";
import {
  inferDtype,
  isMissing,
  isNumericDtype,
  isTrue,
  NA_VALUES,
  numericValue,
} from "./dtypes.js";
import { csvScan, sqlIdentifier, sqlString, verifyArtifact } from "./duckdb-csv.js";
import { withDuckDb } from "./duckdb-scan.js";
import { isLargeTable } from "./profile.js";
import { readTable } from "./read.js";

/*
 * What the privacy modes need to know of a table, read once per table: the aggregates the
 * `values` mode may show (counts, missing, min/max/mean of numbers), and every distinct cell,
 * which prompts are scrubbed of before they leave (tables/privacy-scrub.ts).
 */

/** A large table's distinct cells are read up to this many; past it the scrub is not complete. */
export const MAX_DISTINCT_CELLS = 1_000_000;

export interface ColumnFacts {
  name: string;
  dtype: string;
  missing: number;
  /** A numeric column's present numbers. */
  numbers?: { min: number; max: number; mean: number };
  booleans?: { trueCount: number; falseCount: number };
  /** Distinct present values of any other column. */
  distinct?: number;
}

export interface TableFacts {
  rows: number;
  columns: ColumnFacts[];
  /** Distinct non-numeric cells, trimmed. */
  texts: string[];
  /** Distinct numeric cells (of any column). */
  numbers: number[];
  /** False when a large table had more distinct cells than were read. */
  complete: boolean;
}

interface Tally {
  count: number;
  sum: number;
  min: number;
  max: number;
}

function factsInNode(ref: TableRef, columns: string[], rows: string[][]): TableFacts {
  const texts = new Set<string>();
  const numbers = new Set<number>();
  const facts = columns.map((name, i): ColumnFacts => {
    const dtype = ref.columns[i]?.dtype ?? inferDtype(rows, i);
    let missing = 0;
    let yes = 0;
    const tally: Tally = { count: 0, sum: 0, min: Infinity, max: -Infinity };
    const distinct = new Set<string>();
    for (const row of rows) {
      const cell = row[i] ?? "";
      if (isMissing(cell)) {
        missing += 1;
        continue;
      }
      const n = numericValue(cell);
      if (n !== null && Number.isFinite(n)) {
        numbers.add(n);
        tally.count += 1;
        tally.sum += n;
        tally.min = Math.min(tally.min, n);
        tally.max = Math.max(tally.max, n);
      } else if (dtype !== "bool") texts.add(cell.trim());
      if (dtype === "bool" && isTrue(cell)) yes += 1;
      distinct.add(cell);
    }
    const present = rows.length - missing;
    if (isNumericDtype(dtype)) {
      return {
        name,
        dtype,
        missing,
        ...(tally.count > 0
          ? { numbers: { min: tally.min, max: tally.max, mean: tally.sum / tally.count } }
          : {}),
      };
    }
    if (dtype === "bool") {
      return { name, dtype, missing, booleans: { trueCount: yes, falseCount: present - yes } };
    }
    return { name, dtype, missing, distinct: distinct.size };
  });
  return {
    rows: rows.length,
    columns: facts,
    texts: [...texts],
    numbers: [...numbers],
    complete: true,
  };
}

function missingSql(column: string): string {
  return `(${column} IS NULL OR ${column} IN (${[...NA_VALUES].map(sqlString).join(", ")}))`;
}

const asNumber = (value: unknown): number => Number(value ?? 0);

async function factsWithDuckDb(connection: DuckDBConnection, ref: TableRef): Promise<TableFacts> {
  // Read without a header so that every cell stays text and row 0 holds the names.
  const scan = csvScan(ref.uri, { header: false, allVarchar: true });
  await connection.run(`CREATE TABLE cells AS FROM ${scan}`);
  const described = await connection.runAndReadAll("SELECT column_name FROM (DESCRIBE cells)");
  const identifiers = described.getRows().map((row) => sqlIdentifier(String(row[0])));
  const head = await connection.runAndReadAll("SELECT * FROM cells WHERE rowid = 0");
  const header = (head.getRows()[0] ?? []) as (string | null)[];
  const number = (c: string) => `TRY_CAST(trim(${c}) AS DOUBLE)`;
  const aggregates = identifiers.flatMap((c, i) => [
    `count(*) FILTER (WHERE NOT ${missingSql(c)}) AS present${i}`,
    `min(${number(c)}) FILTER (WHERE isfinite(${number(c)})) AS low${i}`,
    `max(${number(c)}) FILTER (WHERE isfinite(${number(c)})) AS high${i}`,
    `avg(${number(c)}) FILTER (WHERE isfinite(${number(c)})) AS mean${i}`,
    `count(*) FILTER (WHERE ${c} IN ('True', 'TRUE', 'true')) AS yes${i}`,
    `count(DISTINCT ${c}) FILTER (WHERE NOT ${missingSql(c)}) AS distinct${i}`,
  ]);
  const stats = await connection.runAndReadAll(
    `SELECT count(*) AS row_count, ${aggregates.join(", ")} FROM cells WHERE rowid > 0`,
  );
  const totals = stats.getRowObjects()[0] ?? {};
  const rows = asNumber(totals.row_count);
  const texts = new Set<string>();
  const numbers = new Set<number>();
  let complete = true;
  const columns = identifiers.map((_, i): ColumnFacts => {
    const name = header[i] ?? "";
    const dtype = ref.columns[i]?.dtype ?? "object";
    const missing = rows - asNumber(totals[`present${i}`]);
    if (isNumericDtype(dtype)) {
      const low = totals[`low${i}`];
      return {
        name,
        dtype,
        missing,
        ...(low === null || low === undefined
          ? {}
          : {
              numbers: {
                min: asNumber(low),
                max: asNumber(totals[`high${i}`]),
                mean: asNumber(totals[`mean${i}`]),
              },
            }),
      };
    }
    if (dtype === "bool") {
      const yes = asNumber(totals[`yes${i}`]);
      return {
        name,
        dtype,
        missing,
        booleans: { trueCount: yes, falseCount: rows - missing - yes },
      };
    }
    return { name, dtype, missing, distinct: asNumber(totals[`distinct${i}`]) };
  });
  for (const [i, c] of identifiers.entries()) {
    const left = MAX_DISTINCT_CELLS - texts.size - numbers.size;
    if (left <= 0) {
      complete = false;
      break;
    }
    const found = await connection.runAndReadAll(
      `SELECT DISTINCT trim(${c}) FROM cells WHERE rowid > 0 AND NOT ${missingSql(c)} LIMIT ${left + 1}`,
    );
    const values = found.getRows().map((row) => String(row[0] ?? ""));
    if (values.length > left) complete = false;
    for (const value of values.slice(0, left)) {
      const n = numericValue(value);
      if (n !== null && Number.isFinite(n)) numbers.add(n);
      else if (columns[i]?.dtype !== "bool") texts.add(value);
    }
  }
  return { rows, columns, texts: [...texts], numbers: [...numbers], complete };
}

async function computeFacts(ref: TableRef): Promise<TableFacts> {
  if (await isLargeTable(ref)) {
    const local = { ...ref, uri: await verifyArtifact(ref) };
    return withDuckDb((connection) => factsWithDuckDb(connection, local));
  }
  const data = await readTable(ref);
  return factsInNode(ref, data.columns, data.rows);
}

const facts = new WorkCache<TableFacts>(32);

/** The aggregates and distinct cells of a stored table; recent tables' are kept. */
export function tableFacts(ref: TableRef): Promise<TableFacts> {
  return facts.obtain(JSON.stringify([ref.sha256, ref.columns.map((c) => c.dtype)]), () =>
    computeFacts(ref),
  );
}
