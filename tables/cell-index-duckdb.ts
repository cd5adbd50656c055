import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import type { TableRef } from "../blackboard/schemas.js";
import {
  type CellEntry,
  type ColumnStats,
  capCells,
  completeness,
  KEPT_FIRST_ROWS,
  type TableIndex,
  TOP_VALUES,
} from "./cell-index.js";
import { isNumericDtype, NA_VALUES } from "./dtypes.js";
import { csvScan, sqlIdentifier, sqlString, verifyArtifact } from "./duckdb-csv.js";
import { duckDbProblem, openDuckDb } from "./duckdb-scan.js";
import { storedTableError, TableLoadError } from "./errors.js";

/** One way a row can match a keyword, with the points it gets. */
export type RowCondition = {
  column: number;
  /** Which keyword it matches: a row scores each keyword's best condition once. */
  keyword: number;
  weight: number;
} & (
  | { kind: "equals"; value: string }
  | { kind: "contains"; text: string }
  | { kind: "number"; value: number }
);

export interface FoundRow {
  row: number;
  cells: string[];
}

/** Rows of a large table, looked up by conditions; see DuckDbTable. */
export interface RowSearch {
  search(conditions: readonly RowCondition[], limit: number): Promise<FoundRow[]>;
}

/** How long the loaded table stays in DuckDB after its last use. */
const IDLE_CLOSE_MS = 30_000;
/** Searches whose rows a table keeps, the latest ones. */
const KEPT_SEARCHES = 16;

function missingSql(column: string): string {
  // The scan reads every missing spelling as NULL.
  return `(${column} IS NULL)`;
}

function numberSql(column: string): string {
  return `TRY_CAST(replace(trim(${column}), ',', '') AS DOUBLE)`;
}

function conditionSql(condition: RowCondition, identifiers: readonly string[]): string {
  const c = identifiers[condition.column] ?? "NULL";
  switch (condition.kind) {
    case "equals":
      return `${c} = ${sqlString(condition.value)}`;
    case "contains":
      return `contains(lower(${c}), ${sqlString(condition.text)})`;
    case "number":
      return `${numberSql(c)} = ${condition.value}`;
  }
}

/** Row score: for each keyword the best weight among its conditions a row meets, summed. */
function scoreSql(conditions: readonly RowCondition[], identifiers: readonly string[]): string {
  const byKeyword = new Map<number, string[]>();
  for (const condition of conditions) {
    const cases = byKeyword.get(condition.keyword) ?? [];
    cases.push(
      `CASE WHEN ${conditionSql(condition, identifiers)} THEN ${condition.weight} ELSE 0 END`,
    );
    byKeyword.set(condition.keyword, cases);
  }
  const terms = [...byKeyword.values()].map((cases) =>
    cases.length === 1 ? cases[0] : `greatest(${cases.join(", ")})`,
  );
  return terms.map((term) => `coalesce(${term}, 0)`).join(" + ");
}

function asCount(value: unknown): number {
  return Number(value ?? 0);
}

function cellText(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}

/**
 * A large table loaded into an in-memory DuckDB database for indexing and searching. The
 * database is closed after IDLE_CLOSE_MS unused; a later search then scans the CSV artifact
 * instead (its rows numbered by `WITH ORDINALITY`), so memory is not held for a whole session.
 */
export class DuckDbTable implements RowSearch {
  private instance: DuckDBInstance | null = null;
  private connection: DuckDBConnection | null = null;
  private identifiers: string[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private readonly found = new Map<string, Promise<FoundRow[]>>();

  private constructor(private readonly ref: TableRef) {}

  /** A table known by an index built before: searches scan the artifact. */
  static scanning(ref: TableRef): DuckDbTable {
    return new DuckDbTable(ref);
  }

  /** Loads the artifact (checked against its sha256) and builds its index. */
  static async open(
    ref: TableRef,
    maxCells: number,
  ): Promise<{ table: DuckDbTable; index: TableIndex }> {
    const local = { ...ref, uri: await verifyArtifact(ref) };
    const table = new DuckDbTable(local);
    try {
      table.instance = await openDuckDb();
      table.connection = await table.instance.connect();
      const index = await table.build(table.connection, maxCells);
      table.touch();
      return { table, index };
    } catch (error) {
      table.close();
      if (error instanceof TableLoadError) throw error;
      throw storedTableError(local, `DuckDB could not index it: ${duckDbProblem(error)}`, {
        cause: error,
      });
    }
  }

  private scan(): string {
    return csvScan(this.ref.uri, { header: true, allVarchar: true, nullStrings: [...NA_VALUES] });
  }

  private async build(connection: DuckDBConnection, maxCells: number): Promise<TableIndex> {
    await connection.run(`CREATE TABLE cells AS FROM ${this.scan()}`);
    const described = await connection.runAndReadAll("SELECT column_name FROM (DESCRIBE cells)");
    this.identifiers = described.getRows().map((row) => sqlIdentifier(String(row[0])));
    const names = this.identifiers.map((_, i) => this.ref.columns[i]?.name ?? `column${i}`);
    const dtypes = this.identifiers.map((_, i) => this.ref.columns[i]?.dtype ?? "object");

    const aggregates = ["count(*) AS row_count"];
    for (const [i, c] of this.identifiers.entries()) {
      aggregates.push(`count(${c}) AS present${i}`);
      if (isNumericDtype(dtypes[i] ?? "")) {
        // The first row with the lowest (highest) number wins ties, as in the Node index.
        const numeric = `WHERE NOT ${missingSql(c)} AND NOT isnan(${numberSql(c)})`;
        aggregates.push(
          `arg_min(trim(${c}), (${numberSql(c)}, rowid)) FILTER (${numeric}) AS low${i}`,
          `arg_max(trim(${c}), (${numberSql(c)}, -rowid)) FILTER (${numeric}) AS high${i}`,
        );
      }
      if (dtypes[i] === "bool") {
        aggregates.push(`count(*) FILTER (WHERE ${c} IN ('True', 'TRUE', 'true')) AS yes${i}`);
      }
    }
    const stats = await connection.runAndReadAll(`SELECT ${aggregates.join(", ")} FROM cells`);
    const [totals = {}] = stats.getRowObjects();
    const rowCount = asCount(totals.row_count);

    // Each column's most frequent values (ties: first seen) and its distinct count.
    const perColumn = this.identifiers.map(
      (c, i) =>
        `SELECT ${i} AS col, v, n, distinct_values, first FROM (SELECT ${c} AS v, count(*) AS n, ` +
        `count(*) OVER () AS distinct_values, min(rowid) AS first FROM cells ` +
        `WHERE NOT ${missingSql(c)} GROUP BY ${c} ORDER BY n DESC, first LIMIT ${Math.max(maxCells, TOP_VALUES)})`,
    );
    await connection.run(`CREATE TEMP TABLE tops AS ${perColumn.join(" UNION ALL ")}`);
    const distinct = new Map<number, number>();
    const top = new Map<number, { value: string; count: number }[]>();
    const firsts = await connection.runAndReadAll(
      "SELECT col, v, n, distinct_values FROM tops " +
        `QUALIFY row_number() OVER (PARTITION BY col ORDER BY n DESC, first) <= ${TOP_VALUES} ` +
        "ORDER BY col, n DESC, first",
    );
    for (const [col, v, n, d] of firsts.getRows()) {
      const i = Number(col);
      distinct.set(i, asCount(d));
      top.set(i, [...(top.get(i) ?? []), { value: cellText(v), count: asCount(n) }]);
    }
    const kept = await connection.runAndReadAll(
      `SELECT col, v, n FROM tops ORDER BY n DESC, col, v LIMIT ${Math.max(maxCells, 0)}`,
    );
    const entries: CellEntry[] = kept
      .getRows()
      .map(([col, v, n]) => ({ column: Number(col), value: cellText(v), count: asCount(n) }));
    await connection.run("DROP TABLE tops");

    const columns = names.map((name, i): ColumnStats => {
      const present = asCount(totals[`present${i}`]);
      const stats: ColumnStats = {
        name,
        dtype: dtypes[i] ?? "object",
        missing: rowCount - present,
        distinct: distinct.get(i) ?? 0,
        top: top.get(i) ?? [],
      };
      const low = totals[`low${i}`];
      const high = totals[`high${i}`];
      if (typeof low === "string" && typeof high === "string") stats.range = { low, high };
      if (dtypes[i] === "bool") {
        const trueCount = asCount(totals[`yes${i}`]);
        stats.booleans = { trueCount, falseCount: present - trueCount };
      }
      return stats;
    });
    const head = await connection.runAndReadAll(
      `SELECT * FROM cells WHERE rowid < ${KEPT_FIRST_ROWS} ORDER BY rowid`,
    );
    const cells = capCells([entries], maxCells);
    return {
      rowCount,
      columns,
      cells,
      complete: completeness(
        cells,
        columns.map((column) => column.distinct),
      ),
      firstRows: head.getRows().map((row) => row.map(cellText)),
    };
  }

  /** Rows by score (highest first, then row order), at most `limit`, none scoring 0. */
  search(conditions: readonly RowCondition[], limit: number): Promise<FoundRow[]> {
    if (conditions.length === 0 || limit <= 0) return Promise.resolve([]);
    // The prompts of one question search alike: a scan of the whole file is done once for them.
    const key = JSON.stringify([conditions, limit]);
    const known = this.found.get(key);
    if (known) return known;
    const run = this.queue.then(() => this.searchNow(conditions, limit));
    this.queue = run.catch(() => undefined);
    this.found.set(key, run);
    run.catch(() => this.found.delete(key));
    for (const oldest of this.found.keys()) {
      if (this.found.size <= KEPT_SEARCHES) break;
      this.found.delete(oldest);
    }
    return run;
  }

  private async searchNow(conditions: readonly RowCondition[], limit: number): Promise<FoundRow[]> {
    const score = scoreSql(conditions, this.identifiers);
    // Scores are computed for the rows some condition holds for only.
    const any = conditions.map((c) => conditionSql(c, this.identifiers)).join(" OR ");
    // Columns by position: the row, its score, then the table's own columns.
    const query = (source: string, row: string, columns: string) =>
      `SELECT * FROM (SELECT ${row} AS _row, ${score} AS _score, ${columns} FROM ${source} ` +
      `WHERE ${any}) WHERE _score > 0 ORDER BY _score DESC, _row LIMIT ${Math.floor(limit)}`;
    let rows: unknown[][];
    if (this.connection) {
      this.stopTimer();
      try {
        rows = (await this.connection.runAndReadAll(query("cells", "rowid", "*"))).getRows();
      } finally {
        this.touch();
      }
    } else {
      const instance = await openDuckDb();
      try {
        const connection = await instance.connect();
        try {
          // The 0-based data row of the file, counted by ORDINALITY (1-based).
          const numbered = `(SELECT ordinality - 1 AS _pos, * EXCLUDE (ordinality) FROM ${this.scan()} WITH ORDINALITY)`;
          const sql = query(numbered, "_pos", "* EXCLUDE (_pos)");
          rows = (await connection.runAndReadAll(sql)).getRows();
        } finally {
          connection.closeSync();
        }
      } finally {
        instance.closeSync();
      }
    }
    return rows.map((row) => ({ row: Number(row[0]), cells: row.slice(2).map(cellText) }));
  }

  private touch(): void {
    this.stopTimer();
    this.timer = setTimeout(() => this.close(), IDLE_CLOSE_MS);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Frees the loaded table; searches go on by scanning the artifact. */
  close(): void {
    this.stopTimer();
    this.connection?.closeSync();
    this.instance?.closeSync();
    this.connection = null;
    this.instance = null;
  }
}
