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
import type { Evidence, TableRef } from "../../blackboard/schemas.js";
import { NA_VALUES } from "../tables/dtypes.js";
import { TableLoadError } from "../tables/errors.js";
import {
  appendToSelectList,
  judgeSerialized,
  type Node,
  referencedTables,
  rowIdColumnJson,
  traceTarget,
} from "./duckdb-ast.js";
import { csvScan, sqlIdentifier, verifyArtifact } from "./duckdb-csv.js";
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
  private closed = false;

  private constructor(
    instance: DuckDBInstance,
    options: z.output<typeof OpenOptionsSchema>,
    tables: TableRef[],
  ) {
    this.instance = instance;
    this.options = options;
    this.registered = new Map(tables.map((t) => [t.name.toLowerCase(), t.name]));
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
    const { timeoutMs = this.options.timeoutMs, rowLimit = this.options.rowLimit } =
      QueryOptionsSchema.parse(opts);
    const started = performance.now();
    const connection = await this.instance.connect();
    this.running.add(connection);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
    }, timeoutMs);
    try {
      const result = await this.run(connection, sql, rowLimit);
      return { ...result, durationMs: performance.now() - started };
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
  ): Promise<Omit<SqlResult, "durationMs">> {
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
    return { columns, rows, rowIds, truncated, table, tables };
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
  await verifyArtifact(ref);
  const failures: string[] = [];
  for (const types of typingPlans(ref)) {
    const scan = csvScan(ref.uri, { header: true, nullStrings: [...NA_VALUES], types });
    try {
      await connection.run(`CREATE OR REPLACE TABLE ${sqlIdentifier(ref.name)} AS FROM ${scan}`);
      return;
    } catch (error) {
      failures.push(messageOf(error));
    }
  }
  throw new TableLoadError(ref.uri, `DuckDB could not read it: ${failures.at(-1) ?? "unknown"}`);
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
