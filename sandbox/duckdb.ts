import os from "node:os";
import {
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBPreparedStatement,
  DuckDBResultReader,
  DuckDBTypeId,
  StatementType,
} from "@duckdb/node-api";
import { z } from "zod";
import type { Evidence, Lineage, TableRef } from "../blackboard/schemas.js";
import { NA_VALUES } from "../tables/dtypes.js";
import { csvScan, sqlIdentifier, sqlString, verifyArtifact } from "../tables/duckdb-csv.js";
import { duckDbProblem } from "../tables/duckdb-scan.js";
import { storedTableError } from "../tables/errors.js";
import {
  appendToSelectList,
  columnsRead,
  judgeSerialized,
  type Node,
  namedTables,
  namesDatabase,
  ordersRows,
  referencedTables,
  rowIdColumnJson,
  traceTarget,
} from "./duckdb-ast.js";
import {
  CHANGED,
  COLUMN_CATALOG,
  canonicalRows,
  DERIVE_BUDGET_MS,
  NOT_DETERMINISTIC,
  PERTURBED_COPIES,
  perturbedCatalog,
  perturbedColumnSql,
  perturbedCopySql,
  type SourceColumn,
  STABLE,
  unchangedViewSql,
} from "./duckdb-perturb.js";
import { plainCell, type SqlCell } from "./duckdb-values.js";

export type { SqlCell } from "./duckdb-values.js";

export type SqlErrorKind = "not-read-only" | "syntax" | "timeout" | "runtime" | "too-many-rows";

/** A query that was refused or failed; the message is meant for the model that wrote it. */
export class SqlError extends Error {
  override name = "SqlError";
  readonly kind: SqlErrorKind;

  constructor(kind: SqlErrorKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

/**
 * Whether a query's result depends on the tables' values (DESIGN.md, "Evidence that
 * proves"): "yes" when a re-run on a perturbed copy of the tables changed it or failed, "no"
 * when no copy changed it (a literal, metadata) or a re-run on the unchanged tables did, and
 * "unknown" when that could not be tried. `derivation` says why, in words; `lineage` which
 * rows (the result rows' source rows, where DuckDB keeps them) and columns (those the query
 * names) of each table it reads the result rests on, null where not traced.
 */
export interface SqlDerivation {
  derived: "yes" | "no" | "unknown";
  derivation: string;
  lineage: Lineage[];
}

export interface SqlResult {
  /** Result columns with their DuckDB types (BIGINT, DOUBLE, VARCHAR, DATE, ...). */
  columns: { name: string; dtype: string }[];
  rows: SqlCell[][];
  /** The 0-based source row of each result row in `table`, when the query keeps rows whole. */
  rowIds: number[] | null;
  /** More rows existed than the row limit let through. */
  truncated: boolean;
  durationMs: number;
  /** The one registered table the query reads, if it reads exactly one. */
  table: string | null;
  /** Every registered table the query reads. */
  tables: string[];
  /** Whether the result is derived from the tables, when the query asked (`derive`). */
  derivation?: SqlDerivation;
}

const OpenOptionsSchema = z.object({
  rowLimit: z.number().int().positive().default(10_000),
  timeoutMs: z.number().int().positive().default(10_000),
  memoryLimitMb: z.number().int().positive().default(1024),
  threads: z
    .number()
    .int()
    .positive()
    .default(() => Math.min(os.availableParallelism(), 4)),
});
export type DuckDbSqlOptions = z.input<typeof OpenOptionsSchema>;

const QueryOptionsSchema = z.object({
  timeoutMs: z.number().int().positive().optional(),
  rowLimit: z.number().int().positive().optional(),
  /**
   * After the query succeeds, re-run it on perturbed copies of the tables it reads to tell
   * whether its result is derived from them (`SqlResult.derivation`), within `deriveMs`
   * (at most DERIVE_BUDGET_MS and the query's timeout by default).
   */
  derive: z.boolean().default(false),
  deriveMs: z.number().int().positive().optional(),
});
export type SqlQueryOptions = z.input<typeof QueryOptionsSchema>;

const ROW_ID_ALIAS = "__tableminds_row_id";

/** DuckDB types for pandas dtypes, which the loader computed over every row. */
const TYPE_FOR_DTYPE: Record<string, string> = {
  int64: "BIGINT",
  uint64: "UBIGINT",
  float64: "DOUBLE",
  bool: "BOOLEAN",
};

/**
 * The ways to read a table, tried in order: pandas' dtypes for numeric and boolean
 * columns with the rest detected by DuckDB (dates become DATE); the rest as VARCHAR
 * when detection guessed from a sample and a later row disagreed; all VARCHAR.
 * Names that differ only in case (DuckDB renames the second) force types by position.
 */
function typingPlans(ref: TableRef): (Record<string, string> | string[])[] {
  const known = ref.columns.map((column) => TYPE_FOR_DTYPE[column.dtype]);
  const allVarchar = ref.columns.map(() => "VARCHAR");
  const mostlyKnown = known.map((type) => type ?? "VARCHAR");
  const lowered = new Set(ref.columns.map((column) => column.name.toLowerCase()));
  if (lowered.size < ref.columns.length) return [mostlyKnown, allVarchar];
  const byName = (types: (string | undefined)[]) =>
    Object.fromEntries(
      ref.columns.flatMap((column, i) => (types[i] ? [[column.name, types[i]]] : [])),
    );
  return [byName(known), byName(mostlyKnown), byName(allVarchar)];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Read-only SQL over a run's tables in an in-process DuckDB. Each table is loaded from
 * its artifact under its own name; then file access, extension loading and
 * configuration changes are switched off, and every query must parse as a single
 * SELECT. Each query runs on its own connection, interrupted at its deadline.
 */
export class DuckDbSql {
  private readonly instance: DuckDBInstance;
  private readonly options: z.output<typeof OpenOptionsSchema>;
  /** Lower-cased name -> name, as DuckDB resolves identifiers. */
  private readonly registered: ReadonlyMap<string, string>;
  /** Tables with a real column named rowid, which hides DuckDB's row number. */
  private readonly untraceable: ReadonlySet<string>;
  private readonly running = new Set<DuckDBConnection>();
  /** The tables by name, for lineage. */
  private readonly refs: ReadonlyMap<string, TableRef>;
  /** Perturbed copies of tables made, as `copy/table`. */
  private readonly copies = new Set<string>();
  /** Each table's columns as DuckDB stores them and its rows, once read. */
  private readonly shapes = new Map<string, { columns: SourceColumn[]; rows: number }>();
  /** The derivation running (they run one at a time: they switch views and copies). */
  private deriving: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    instance: DuckDBInstance,
    options: z.output<typeof OpenOptionsSchema>,
    tables: TableRef[],
  ) {
    this.instance = instance;
    this.options = options;
    this.registered = new Map(tables.map((t) => [t.name.toLowerCase(), t.name]));
    this.refs = new Map(tables.map((t) => [t.name, t]));
    this.untraceable = new Set(
      tables
        .filter((t) => t.columns.some((c) => c.name.toLowerCase() === "rowid"))
        .map((t) => t.name),
    );
  }

  static async open(tables: TableRef[], opts: DuckDbSqlOptions = {}): Promise<DuckDbSql> {
    const options = OpenOptionsSchema.parse(opts);
    const names = new Set<string>();
    for (const table of tables) {
      const key = table.name.toLowerCase();
      if (names.has(key)) throw new Error(`two tables are named ${table.name} (names ignore case)`);
      names.add(key);
    }
    const instance = await DuckDBInstance.create(":memory:", {
      threads: String(options.threads),
      memory_limit: `${options.memoryLimitMb}MB`,
      // Never spill to disk, never fetch or load extensions.
      temp_directory: "",
      autoinstall_known_extensions: "false",
      autoload_known_extensions: "false",
      allow_community_extensions: "false",
    });
    try {
      const connection = await instance.connect();
      try {
        for (const table of tables) await loadTable(connection, table);
        // Empty in-memory databases for the perturbed copies of tables (see `derive`).
        const catalogs = [...Array(PERTURBED_COPIES).keys()].map(perturbedCatalog);
        for (const catalog of [...catalogs, COLUMN_CATALOG]) {
          await connection.run(`ATTACH ':memory:' AS ${sqlIdentifier(catalog)}`);
        }
        await connection.run("SET enable_external_access = false");
        await connection.run("SET lock_configuration = true");
      } finally {
        connection.closeSync();
      }
    } catch (error) {
      instance.closeSync();
      throw error;
    }
    return new DuckDbSql(instance, options, tables);
  }

  /** Runs one read-only query; throws SqlError. */
  async query(sql: string, opts: SqlQueryOptions = {}): Promise<SqlResult> {
    if (this.closed) throw new Error("the DuckDB SQL backend is closed");
    const parsed = QueryOptionsSchema.parse(opts);
    const { timeoutMs = this.options.timeoutMs, rowLimit = this.options.rowLimit } = parsed;
    const started = performance.now();
    const connection = await this.instance.connect();
    this.running.add(connection);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
    }, timeoutMs);
    let ran: Awaited<ReturnType<DuckDbSql["run"]>>;
    try {
      ran = await this.run(connection, sql, rowLimit);
    } catch (error) {
      if (error instanceof SqlError) throw error;
      if (this.closed) {
        throw new SqlError("runtime", "the SQL backend was closed while the query ran", {
          cause: error,
        });
      }
      if (timedOut) {
        throw new SqlError("timeout", `the query ran longer than ${timeoutMs} ms and was stopped`, {
          cause: error,
        });
      }
      const message = messageOf(error);
      const kind = /^Parser Error/i.test(message) ? "syntax" : "runtime";
      throw new SqlError(kind, message, { cause: error });
    } finally {
      clearTimeout(timer);
      this.running.delete(connection);
      connection.closeSync();
    }
    const { statement, ...rest } = ran;
    const result: SqlResult = { ...rest, durationMs: performance.now() - started };
    if (!parsed.derive) return result;
    const budget = parsed.deriveMs ?? Math.min(DERIVE_BUDGET_MS, timeoutMs);
    return { ...result, derivation: await this.derive(sql, statement, result, rowLimit, budget) };
  }

  /**
   * Whether `result`, what `sql` returned, is derived from the tables: the query re-run once
   * on the unchanged tables (it must give the same result), then on each perturbed copy of
   * the tables it reads (DuckDB's search path switched to the copy's database); when no copy
   * changed it, once more per column it names with only that column changed (as lineage.py
   * traces columns), which can still find it derived. Within `budgetMs`, one derivation at a
   * time. Never throws: what could not be tried is "unknown".
   */
  private async derive(
    sql: string,
    statement: Node,
    result: Omit<SqlResult, "derivation">,
    rowLimit: number,
    budgetMs: number,
  ): Promise<SqlDerivation> {
    const previous = this.deriving;
    let release = () => {};
    this.deriving = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await this.deriveAlone(sql, statement, result, rowLimit, budgetMs);
    } finally {
      release();
    }
  }

  private async deriveAlone(
    sql: string,
    statement: Node,
    result: Omit<SqlResult, "derivation">,
    rowLimit: number,
    budgetMs: number,
  ): Promise<SqlDerivation> {
    const lineage = this.lineage(statement, result);
    const unknown = (why: string): SqlDerivation => ({
      derived: "unknown",
      derivation: `not known: ${why}`,
      lineage,
    });
    if (this.closed) return unknown("the SQL backend was closed");
    if (namesDatabase(statement)) {
      return unknown(
        "the query names a table's schema or database, so perturbed copies cannot stand in for it",
      );
    }
    const ordered = ordersRows(statement);
    const base = canonicalRows(result.rows, result.truncated, ordered);
    const differs = (rows: { rows: SqlCell[][]; truncated: boolean }) =>
      canonicalRows(rows.rows, rows.truncated, ordered) !== base;
    let named = namedTables(statement, this.registered);
    let connection: DuckDBConnection;
    try {
      connection = await this.instance.connect();
    } catch (error) {
      return unknown(`no connection for the re-runs (${firstLine(error)})`);
    }
    this.running.add(connection);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
    }, budgetMs);
    const stopped = () => timedOut || this.closed;
    const outOfTime = (done: string) =>
      this.closed
        ? unknown("the SQL backend was closed during the re-runs")
        : unknown(`the re-runs ran out of their ${budgetMs} ms (${done})`);
    try {
      try {
        if (differs(await readRows(connection, sql, rowLimit))) {
          return { derived: "no", derivation: NOT_DETERMINISTIC, lineage };
        }
      } catch (error) {
        if (stopped()) return outOfTime("before any perturbed copy");
        return unknown(
          `the query failed when re-run on the unchanged tables (${firstLine(error)})`,
        );
      }
      let failed: string | undefined;
      for (let copy = 0; copy < PERTURBED_COPIES; copy++) {
        const tried = `${copy} of ${PERTURBED_COPIES} perturbed copies tried`;
        // An interrupt between two statements may not stop the next one.
        if (stopped()) return outOfTime(tried);
        try {
          for (const table of named) {
            if (stopped()) return outOfTime(tried);
            await this.perturbedCopy(connection, copy, table);
          }
          await connection.run(`USE ${sqlIdentifier(perturbedCatalog(copy))}`);
        } catch (error) {
          if (stopped()) return outOfTime(tried);
          return unknown(`no perturbed copy of the tables could be made (${firstLine(error)})`);
        }
        let rerun: { rows: SqlCell[][]; truncated: boolean };
        try {
          rerun = await readRows(connection, sql, rowLimit);
        } catch (error) {
          if (stopped()) return outOfTime(tried);
          const message = firstLine(error);
          // A table the copies do not hold, read by a name the parse tree does not show
          // (`query_table('t')`): once more with copies of every table.
          if (/^Catalog Error/i.test(message)) {
            if (named.length < this.registered.size) {
              named = [...this.registered.values()];
              copy--;
              continue;
            }
            return unknown(`the query reads a table its perturbed copies do not hold (${message})`);
          }
          // A failure says nothing about dependence: the next copy may still show it.
          failed ??= message;
          continue;
        }
        if (differs(rerun)) return { derived: "yes", derivation: CHANGED, lineage };
      }
      if (failed !== undefined) {
        return unknown(
          `the query failed on perturbed copies of the tables (${failed}) and did not change on the others`,
        );
      }
      const none = named.length === 0 ? " (the query reads no table)" : "";
      const stable: SqlDerivation = { derived: "no", derivation: `${STABLE}${none}`, lineage };
      // Shuffles keep what a column holds (a count of Japan's rows, of true flags): changing
      // one column at a time, as lineage.py's column tracing does, can still move the result.
      const changed = await this.columnTrials(connection, sql, rowLimit, named, lineage, {
        differs,
        stopped,
      });
      return changed ? { ...stable, derived: "yes", derivation: changed } : stable;
    } finally {
      clearTimeout(timer);
      this.running.delete(connection);
      connection.closeSync();
    }
  }

  /**
   * Re-runs the query with one column it names changed at a time (views in the column
   * database); the sentence saying which changed the result, or null when none did or time
   * ran out (the copies' verdict stands).
   */
  private async columnTrials(
    connection: DuckDBConnection,
    sql: string,
    rowLimit: number,
    named: string[],
    lineage: Lineage[],
    judge: {
      differs: (rows: { rows: SqlCell[][]; truncated: boolean }) => boolean;
      stopped: () => boolean;
    },
  ): Promise<string | null> {
    const trials = lineage.flatMap(({ table, columns }) => {
      const ref = this.refs.get(table);
      if (!ref || !named.includes(table)) return [];
      return (columns ?? []).map((column) => ({
        table,
        column,
        position: ref.columns.findIndex((c) => c.name === column),
      }));
    });
    if (trials.length === 0) return null;
    try {
      for (const table of named) await connection.run(unchangedViewSql(table));
      await connection.run(`USE ${sqlIdentifier(COLUMN_CATALOG)}`);
    } catch {
      return null;
    }
    for (const { table, column, position } of trials) {
      if (judge.stopped()) return null;
      try {
        const { columns } = await this.described(connection, table);
        const view = perturbedColumnSql(table, columns, position);
        if (view === null) continue;
        await connection.run(view);
      } catch {
        // A column this cannot change (a type it does not know how to); the next one.
        continue;
      }
      let changed = false;
      try {
        changed = judge.differs(await readRows(connection, sql, rowLimit));
      } catch {
        // A query that fails on the perturbed column shows nothing about dependence.
      } finally {
        // The view shows the table unchanged again, whatever happened.
        await connection.run(unchangedViewSql(table)).catch(() => {});
      }
      if (changed) {
        return `changed when column ${column} of ${table} was perturbed: computed from the table`;
      }
      if (judge.stopped()) return null;
    }
    return null;
  }

  /** The columns of `table` as DuckDB stores them (name and type, in order), and its rows. */
  private async described(
    connection: DuckDBConnection,
    table: string,
  ): Promise<{ columns: SourceColumn[]; rows: number }> {
    const known = this.shapes.get(table);
    if (known) return known;
    const read = await connection.runAndReadAll(
      `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'memory' AND schema_name = 'main' AND table_name = ${sqlString(table)} ORDER BY column_index`,
    );
    const columns = read
      .getRows()
      .map(([name, type]) => ({ name: String(name), type: String(type) }));
    if (columns.length === 0) throw new Error(`table ${table} has no columns`);
    const counted = await connection.runAndReadAll(
      `SELECT count(*) FROM memory.main.${sqlIdentifier(table)}`,
    );
    const described = { columns, rows: Number(counted.getRows()[0]?.[0] ?? 0) };
    this.shapes.set(table, described);
    return described;
  }

  /** Makes perturbed copy `copy` of `table` unless it was made before. */
  private async perturbedCopy(
    connection: DuckDBConnection,
    copy: number,
    table: string,
  ): Promise<void> {
    const key = `${copy}/${table}`;
    if (this.copies.has(key)) return;
    const { columns, rows } = await this.described(connection, table);
    await connection.run(
      perturbedCopySql(table, columns, copy, !this.untraceable.has(table), rows),
    );
    this.copies.add(key);
  }

  /**
   * Per table the query reads: the source rows of the result's rows when DuckDB kept them
   * (one table, rows whole, none cut by the row limit), and the columns the query names.
   */
  private lineage(statement: Node, result: Omit<SqlResult, "derivation">): Lineage[] {
    const tables = result.tables.map((name) => ({
      name,
      columns: this.refs.get(name)?.columns.map((c) => c.name) ?? [],
    }));
    const columns = columnsRead(statement, tables, this.registered);
    return result.tables.map((table) => {
      const traced = table === result.table && result.rowIds !== null && !result.truncated;
      const rows = traced ? [...new Set(result.rowIds)].sort((a, b) => a - b) : null;
      return { table, rows, columns: columns.get(table) ?? null };
    });
  }

  /** Stops running queries and frees the database; later queries fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const connection of this.running) connection.interrupt();
    this.instance.closeSync();
  }

  private async run(
    connection: DuckDBConnection,
    sql: string,
    rowLimit: number,
  ): Promise<Omit<SqlResult, "durationMs"> & { statement: Node }> {
    const serialized = await connection.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR)", [
      sql,
    ]);
    const json = String(serialized.getRows()[0]?.[0] ?? "");
    const verdict = judgeSerialized(json);
    if (!verdict.ok) throw new SqlError(verdict.kind, verdict.message);
    const prepared = await prepareSelect(connection, sql);
    const tables = referencedTables(verdict.statement, this.registered);
    const table = tables.length === 1 ? (tables[0] ?? null) : null;
    const traced = await this.traced(connection, json, verdict.statement, prepared);
    const statement = traced ?? prepared;
    const reader = new DuckDBResultReader(await statement.stream());
    await reader.readUntil(rowLimit + 1);
    const fetched = reader.getRows().slice(0, rowLimit + 1);
    const truncated = fetched.length > rowLimit;
    const kept = fetched.slice(0, rowLimit);
    const width = prepared.columnCount;
    const columns = Array.from({ length: width }, (_, i) => ({
      name: reader.columnName(i),
      dtype: reader.columnType(i).toString(),
    }));
    const rows = kept.map((row) => row.slice(0, width).map(plainCell));
    const rowIds = traced ? kept.map((row) => Number(row[width])) : null;
    return { columns, rows, rowIds, truncated, table, tables, statement: verdict.statement };
  }

  /**
   * The query with `rowid` of its one table added as a last column, prepared, when the
   * query keeps source rows whole and the extended query binds to the same columns.
   */
  private async traced(
    connection: DuckDBConnection,
    json: string,
    statement: Node,
    original: DuckDBPreparedStatement,
  ): Promise<DuckDBPreparedStatement | null> {
    const target = traceTarget(statement, this.registered);
    if (!target || this.untraceable.has(target.table)) return null;
    const extended = appendToSelectList(json, rowIdColumnJson(target.qualifier, ROW_ID_ALIAS));
    if (!extended) return null;
    try {
      const back = await connection.runAndReadAll("SELECT json_deserialize_sql($1::VARCHAR)", [
        extended,
      ]);
      const prepared = await prepareSelect(connection, String(back.getRows()[0]?.[0] ?? ""));
      const width = original.columnCount;
      const same =
        prepared.columnCount === width + 1 &&
        prepared.columnName(width) === ROW_ID_ALIAS &&
        prepared.columnTypeId(width) === DuckDBTypeId.BIGINT &&
        Array.from({ length: width }, (_, i) => i).every(
          (i) =>
            prepared.columnName(i) === original.columnName(i) &&
            prepared.columnType(i).toString() === original.columnType(i).toString(),
        );
      return same ? prepared : null;
    } catch {
      // Typically an aggregate without GROUP BY: the query has no row per source row.
      return null;
    }
  }
}

/** The first line of an error's message. */
function firstLine(error: unknown): string {
  return messageOf(error).split("\n")[0] ?? "";
}

/** Runs a query already judged read-only; its first `rowLimit` rows as plain cells. */
async function readRows(
  connection: DuckDBConnection,
  sql: string,
  rowLimit: number,
): Promise<{ rows: SqlCell[][]; truncated: boolean }> {
  const prepared = await prepareSelect(connection, sql);
  const reader = new DuckDBResultReader(await prepared.stream());
  await reader.readUntil(rowLimit + 1);
  const fetched = reader.getRows().slice(0, rowLimit + 1);
  return {
    rows: fetched.slice(0, rowLimit).map((row) => row.map(plainCell)),
    truncated: fetched.length > rowLimit,
  };
}

/** Prepares `sql`, insisting that DuckDB sees exactly one SELECT statement. */
async function prepareSelect(
  connection: DuckDBConnection,
  sql: string,
): Promise<DuckDBPreparedStatement> {
  const extracted = await connection.extractStatements(sql);
  if (extracted.count !== 1) {
    throw new SqlError("not-read-only", `exactly one statement is allowed, got ${extracted.count}`);
  }
  const prepared = await extracted.prepare(0);
  if (prepared.statementType !== StatementType.SELECT) {
    throw new SqlError(
      "not-read-only",
      "only a read-only query (SELECT, WITH ... SELECT, VALUES, ...) is allowed",
    );
  }
  return prepared;
}

/**
 * Creates the table `ref.name` from its artifact, rows in file order so that DuckDB's
 * `rowid` is the 0-based row number of the source table.
 */
async function loadTable(connection: DuckDBConnection, ref: TableRef): Promise<void> {
  const file = await verifyArtifact(ref);
  const failures: string[] = [];
  for (const types of typingPlans(ref)) {
    const scan = csvScan(file, { header: true, nullStrings: [...NA_VALUES], types });
    try {
      await connection.run(`CREATE OR REPLACE TABLE ${sqlIdentifier(ref.name)} AS FROM ${scan}`);
      return;
    } catch (error) {
      failures.push(duckDbProblem(error));
    }
  }
  const problem = `DuckDB could not read it: ${failures.at(-1) ?? "unknown"}`;
  throw storedTableError({ ...ref, uri: file }, problem);
}

const MAX_SQL_EVIDENCE = 50;

function cellText(value: SqlCell): string {
  return value === null ? "null" : String(value);
}

/**
 * Evidence packets of a query result: one per result row (the first 50), anchored to
 * the query and the source row it came from (no row ids when the rows were computed,
 * e.g. aggregated or joined). The value is the cell when there is one column, else
 * `column=value; ...`.
 */
export function sqlEvidence(
  result: SqlResult,
  query: string,
  attempt: string,
  time: string,
): Evidence[] {
  const table = result.table ?? result.tables.join(", ");
  return result.rows.slice(0, MAX_SQL_EVIDENCE).map((row, i) => {
    const rowId = result.rowIds?.[i];
    return {
      id: `${attempt}:sql${i + 1}`,
      modality: "sql",
      source: "sql",
      anchor: { kind: "sql", query, table, rowIds: rowId === undefined ? [] : [rowId] },
      value:
        row.length === 1
          ? (row[0] ?? null)
          : result.columns.map((c, j) => `${c.name}=${cellText(row[j] ?? null)}`).join("; "),
      time,
      provenance: { attempt, parents: [] },
      confidence: 1,
    } satisfies Evidence;
  });
}
