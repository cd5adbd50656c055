import { sqlIdentifier } from "../tables/duckdb-csv.js";
import type { SqlCell } from "./duckdb-values.js";

/*
 * Perturbed copies of a run's tables in DuckDB, to tell whether a query's result depends on
 * the tables' values (DESIGN.md, "Evidence that proves"; the same idea as the local sandbox's
 * lineage.py): every number scaled cell by cell by a random factor in [0.5, 2] plus a small
 * offset (so that a minimum many rows hold still moves), dates shifted, text, truth values and
 * everything else shuffled among the rows, one row dropped when there are two or more. The
 * randomness is DuckDB's `hash` of a fixed seed, the copy, the column and the row: the same
 * table gives the same copies every time.
 */

/** How many perturbed copies a result is re-run on. */
export const PERTURBED_COPIES = 3;
/** The seed of every copy's randomness. */
export const PERTURB_SEED = 20_261_125;
/** The longest a derivation takes (the query's own timeout bounds it further). */
export const DERIVE_BUDGET_MS = 3_000;

export const CHANGED = "changed when the tables' values were perturbed: computed from the table";
export const STABLE =
  "unchanged when the table's values were perturbed: a literal or metadata, not a computation over the table";
export const NOT_DETERMINISTIC =
  "not deterministic: a re-run on the unchanged tables gave a different result";

/** The in-memory database that holds perturbed copy `copy` (0-based) of the tables. */
export function perturbedCatalog(copy: number): string {
  return `tableminds_perturbed_${copy + 1}`;
}

/** A source column as DuckDB stores it. */
export interface SourceColumn {
  name: string;
  /** DuckDB's type: BIGINT, DOUBLE, DECIMAL(18,3), VARCHAR, DATE, ... */
  type: string;
}

const INTEGER = /^(?:U?(?:TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT))$/;
const FRACTIONAL = /^(?:FLOAT|DOUBLE|REAL|DECIMAL\(\d+,\s*\d+\))$/;
const DATE = /^DATE$/;
const TIMESTAMP = /^TIMESTAMP(?:_S|_MS|_NS| WITH TIME ZONE)?$/;

const RID = "__tableminds_rid";
const POS = "__tableminds_pos";
const VALUE = "__tableminds_value";

/** A uniform number in [0, 1) for each row, fixed by the seed, the copy and `salt`. */
function uniform(copy: number, salt: string): string {
  return `(CAST(hash(${PERTURB_SEED}, ${copy}, '${salt}', b.${sqlIdentifier(RID)}) AS DOUBLE) / 18446744073709551616.0)`;
}

/** The perturbed value of column `i` (`x`), or null when the column is shuffled instead. */
function perturbedValue(column: SourceColumn, i: number, copy: number): string | null {
  const x = `b.${sqlIdentifier(column.name)}`;
  const type = column.type.trim().toUpperCase();
  // A factor in [0.5, 2], log-uniform: as likely to halve a value as to double it.
  const factor = `(0.5 * pow(4.0, ${uniform(copy, `f${i}`)}))`;
  const offset = uniform(copy, `o${i}`);
  if (INTEGER.test(type)) {
    return `TRY_CAST(round(CAST(${x} AS DOUBLE) * ${factor}) + (1 + floor(${offset} * 9)) AS ${type})`;
  }
  if (FRACTIONAL.test(type)) {
    return `TRY_CAST(CAST(${x} AS DOUBLE) * ${factor} + (0.5 + 1.5 * ${offset}) AS ${type})`;
  }
  // Dates move by 1 to 365 days, earlier or later.
  const days = `CAST((1 + floor(${uniform(copy, `d${i}`)} * 365)) * (CASE WHEN ${offset} < 0.5 THEN -1 ELSE 1 END) AS INTEGER)`;
  if (DATE.test(type)) return `TRY_CAST(${x} + ${days} AS DATE)`;
  if (TIMESTAMP.test(type)) return `TRY_CAST(${x} + to_days(${days}) AS ${type})`;
  return null;
}

/**
 * The statement that writes perturbed copy `copy` of table `table` (its columns as DuckDB
 * stores them, `rows` rows) into that copy's database under the same name, its rows in their
 * order. `traceable` says whether DuckDB's `rowid` numbers the rows 0..rows-1 (a real column
 * named rowid hides it; rows are then numbered as they are scanned).
 */
export function perturbedCopySql(
  table: string,
  columns: readonly SourceColumn[],
  copy: number,
  traceable: boolean,
  rows: number,
): string {
  const id = sqlIdentifier;
  const rid = traceable ? "rowid" : "row_number() OVER () - 1";
  const shuffles: string[] = [];
  const joins: string[] = [];
  const select = columns.map((column, i) => {
    const changed = perturbedValue(column, i, copy);
    if (changed !== null) return `${changed} AS ${id(column.name)}`;
    // Its own order for each shuffled column: row r takes the value of the row at r in it.
    const s = id(`__tableminds_s${i}`);
    const order = `hash(${PERTURB_SEED}, ${copy}, 's${i}', ${id(RID)}), ${id(RID)}`;
    shuffles.push(
      `, ${s} AS (SELECT row_number() OVER (ORDER BY ${order}) - 1 AS ${id(POS)}, ${id(column.name)} AS ${id(VALUE)} FROM src)`,
    );
    joins.push(`LEFT JOIN ${s} ON ${s}.${id(POS)} = b.${id(RID)}`);
    return `${s}.${id(VALUE)} AS ${id(column.name)}`;
  });
  const drop =
    rows >= 2
      ? `WHERE b.${id(RID)} <> ${`CAST(hash(${PERTURB_SEED}, ${copy}, 'drop') % ${rows} AS BIGINT)`}`
      : "";
  return [
    `CREATE OR REPLACE TABLE ${id(perturbedCatalog(copy))}.main.${id(table)} AS`,
    `WITH src AS (SELECT *, ${rid} AS ${id(RID)} FROM memory.main.${id(table)})`,
    ...shuffles,
    `SELECT ${select.join(", ")} FROM src AS b ${joins.join(" ")}`,
    drop,
    `ORDER BY b.${id(RID)}`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** One cell as results are compared: numbers to 9 significant digits, as lineage.py does. */
function cellKey(cell: SqlCell): string {
  if (typeof cell === "number") return `n${Number(cell.toPrecision(9))}`;
  if (typeof cell === "boolean") return `b${cell}`;
  if (cell === null) return "z";
  return `s${cell}`;
}

/**
 * What two results of one query must share to be the same: their rows, in order when the
 * query orders them, else as a multiset (DuckDB may return unordered rows in any order).
 */
export function canonicalRows(rows: readonly SqlCell[][], truncated: boolean, ordered: boolean) {
  const keys = rows.map((row) => JSON.stringify(row.map(cellKey)));
  if (!ordered) keys.sort();
  return JSON.stringify([truncated, keys]);
}

/** The in-memory database where one column at a time is perturbed (views over the tables). */
export const COLUMN_CATALOG = "tableminds_column";

/** A view in the column database that shows `table` unchanged. */
export function unchangedViewSql(table: string): string {
  const id = sqlIdentifier;
  return `CREATE OR REPLACE VIEW ${id(COLUMN_CATALOG)}.main.${id(table)} AS SELECT * FROM memory.main.${id(table)}`;
}

/**
 * A view in the column database that shows `table` with only column `position` changed, the
 * way lineage.py's second trial changes one: numbers and dates reflected (max + min - x; plus
 * one when all are equal), truth values negated, text collapsed to one value; null for other
 * types. Rows keep their order and their number.
 */
export function perturbedColumnSql(
  table: string,
  columns: readonly SourceColumn[],
  position: number,
): string | null {
  const id = sqlIdentifier;
  const column = columns[position];
  if (!column) return null;
  const x = id(column.name);
  const type = column.type.trim().toUpperCase();
  const of = (aggregate: string) => `(SELECT ${aggregate}(${x}) FROM memory.main.${id(table)})`;
  const later = DATE.test(type) ? `${x} + 1` : `${x} + INTERVAL 1 DAY`;
  const reflected = `CASE WHEN ${of("max")} > ${of("min")} THEN ${of("max")} - (${x} - ${of("min")}) ELSE ${later} END`;
  let changed: string;
  if (INTEGER.test(type) || FRACTIONAL.test(type)) {
    changed = `TRY_CAST(CAST(${of("max")} AS DOUBLE) + CAST(${of("min")} AS DOUBLE) - CAST(${x} AS DOUBLE) + CASE WHEN ${of("max")} > ${of("min")} THEN 0 ELSE 1 END AS ${type})`;
  } else if (DATE.test(type) || TIMESTAMP.test(type)) {
    changed = `TRY_CAST(${reflected} AS ${type})`;
  } else if (type === "BOOLEAN") {
    changed = `NOT ${x}`;
  } else if (type === "VARCHAR") {
    changed = of("min");
  } else {
    return null;
  }
  const select = columns.map((c, i) => (i === position ? `${changed} AS ${x}` : id(c.name)));
  return `CREATE OR REPLACE VIEW ${id(COLUMN_CATALOG)}.main.${id(table)} AS SELECT ${select.join(", ")} FROM memory.main.${id(table)}`;
}
