import { rmSync } from "node:fs";
import { DuckDBInstance } from "@duckdb/node-api";
import { writeJsonl } from "../mining/journal.js";
import { type VerlRow, VerlRowSchema } from "./rows.js";

/** verl's columns as DuckDB types: chat messages, the rule reward and what it needs. */
const COLUMNS = {
  data_source: "VARCHAR",
  prompt: "STRUCT(role VARCHAR, content VARCHAR)[]",
  ability: "VARCHAR",
  reward_model: "STRUCT(style VARCHAR, ground_truth VARCHAR)",
  extra_info:
    "STRUCT(split VARCHAR, index INTEGER, question_id VARCHAR, branch VARCHAR, qtype VARCHAR, qsubtype VARCHAR, question VARCHAR, answer VARCHAR, tables VARCHAR, role VARCHAR)",
};

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;
const columnsSql = `{${Object.entries(COLUMNS)
  .map(([name, type]) => `${quoted(name)}: ${quoted(type)}`)
  .join(", ")}}`;

async function withConnection<T>(
  work: (run: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    return await work(async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson());
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Writes verl rows as a parquet file (through a JSONL file DuckDB reads with fixed types). */
export async function writeVerlParquet(file: string, rows: readonly VerlRow[]): Promise<void> {
  const staged = `${file}.jsonl`;
  writeJsonl(
    staged,
    rows.map((row) => VerlRowSchema.parse(row)),
  );
  try {
    await withConnection((run) =>
      run(
        `COPY (SELECT * FROM read_json(${quoted(staged)}, format = 'newline_delimited', columns = ${columnsSql})) TO ${quoted(file)} (FORMAT parquet)`,
      ),
    );
  } finally {
    rmSync(staged, { force: true });
  }
}

/** The rows of a verl parquet file, checked against the schema. */
export async function readVerlParquet(file: string): Promise<VerlRow[]> {
  const rows = await withConnection((run) => run(`SELECT * FROM read_parquet(${quoted(file)})`));
  return rows.map((row) => VerlRowSchema.parse(row));
}

/** The parquet file's column names and DuckDB types, in order. */
export async function parquetSchema(file: string): Promise<{ name: string; type: string }[]> {
  const rows = await withConnection((run) =>
    run(
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${quoted(file)}))`,
    ),
  );
  return rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
}
