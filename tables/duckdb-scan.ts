import os from "node:os";
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { type Dtype, NA_VALUES } from "./dtypes.js";
import { sqlIdentifier, sqlString } from "./duckdb-csv.js";
import { duckDbLineOptions } from "./line-limits.js";

/**
 * A fresh in-memory DuckDB that spills nothing to disk and loads no extension by itself. The
 * native module (about a third of a second to load) loads on the first call, not with ours.
 */
export async function openDuckDb(): Promise<DuckDBInstance> {
  const { DuckDBInstance } = await import("@duckdb/node-api");
  return DuckDBInstance.create(":memory:", {
    threads: String(Math.min(os.availableParallelism(), 4)),
    temp_directory: "",
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
}

/** Runs `work` on a fresh in-memory DuckDB (openDuckDb), closed afterwards. */
export async function withDuckDb<T>(
  work: (connection: DuckDBConnection) => Promise<T>,
): Promise<T> {
  const instance = await openDuckDb();
  try {
    const connection = await instance.connect();
    try {
      return await work(connection);
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/**
 * DuckDB's error on one line, without its "Invalid Input Error: " style prefix. A CSV error
 * ("CSV Error on Line: 1", then the line itself, the reason, a hint and the reader's settings,
 * the file's path among them) keeps its first line and the reason.
 */
export function duckDbProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split("\n").map((line) => line.trim());
  const first = (lines[0] ?? message).replace(/^[A-Za-z ]*Error: /, "").trim();
  if (!/^CSV Error on Line/i.test(first)) return first;
  const reason = lines
    .slice(1)
    .find(
      (line) => line !== "" && !/^Original Line:/i.test(line) && !/^Possible Solution/i.test(line),
    );
  return reason ? `${first}: ${reason}` : first;
}

/** A strict, typed `read_csv` of a comma-separated UTF-8 file with a header line. */
function typedCsvScan(file: string, fullSample: boolean): string {
  const nulls = [...NA_VALUES].map(sqlString).join(", ");
  return (
    `read_csv(${sqlString(file)}, header = true, delim = ',', quote = '"', escape = '"', ` +
    `strict_mode = true, encoding = 'utf-8', nullstr = [${nulls}], ${duckDbLineOptions()}` +
    `${fullSample ? ", sample_size = -1" : ""})`
  );
}

const INTEGER_TYPES = /^(?:U?(?:TINYINT|SMALLINT|INTEGER)|BIGINT)$/;
const FLOAT_TYPES = /^(?:FLOAT|DOUBLE|DECIMAL.*)$/;
const PANDAS_TRUE_FALSE = ["True", "TRUE", "true", "False", "FALSE", "false"];

/** The pandas dtype of a column DuckDB typed `type`, with `present` of `rows` values. */
function dtypeOf(type: string, present: number, rows: number, pandasBools: boolean): Dtype {
  if (rows === 0) return "object";
  if (present === 0) return "float64";
  const complete = present === rows;
  if (INTEGER_TYPES.test(type)) return complete ? "int64" : "float64";
  if (type === "UBIGINT") return complete ? "uint64" : "float64";
  if (FLOAT_TYPES.test(type)) return "float64";
  if (type === "BOOLEAN") return complete && pandasBools ? "bool" : "object";
  return "object";
}

export interface CsvScan {
  header: string[];
  rows: number;
  dtypes: Dtype[];
}

async function scanWith(
  connection: DuckDBConnection,
  file: string,
  fullSample: boolean,
): Promise<CsvScan> {
  const scan = typedCsvScan(file, fullSample);
  const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${scan}`);
  const columns = described
    .getRows()
    .map((row) => ({ name: String(row[0]), type: String(row[1]) }));
  const present = columns.map((c, i) => `count(${sqlIdentifier(c.name)}) AS p${i}`);
  const counted = await connection.runAndReadAll(
    `SELECT count(*) AS n${present.map((p) => `, ${p}`).join("")} FROM ${scan}`,
  );
  const totals = counted.getRowObjects()[0] ?? {};
  const rows = Number(totals.n ?? 0);
  // DuckDB also reads t/f, yes/no as booleans; pandas only these spellings.
  const booleans = columns.filter((c) => c.type === "BOOLEAN");
  let spelledAsPandas = new Set(booleans.map((c) => c.name));
  if (booleans.length > 0) {
    const spellings = PANDAS_TRUE_FALSE.map(sqlString).join(", ");
    const text = `read_csv(${sqlString(file)}, header = true, delim = ',', quote = '"', escape = '"', all_varchar = true, ${duckDbLineOptions()})`;
    const checks = booleans.map(
      (c, i) => `bool_and(${sqlIdentifier(c.name)} IN (${spellings})) AS b${i}`,
    );
    const found = (
      await connection.runAndReadAll(`SELECT ${checks.join(", ")} FROM ${text}`)
    ).getRowObjects()[0];
    spelledAsPandas = new Set(
      booleans.filter((_, i) => found?.[`b${i}`] === true).map((c) => c.name),
    );
  }
  return {
    header: columns.map((c) => c.name),
    rows,
    dtypes: columns.map((c, i) =>
      dtypeOf(c.type, Number(totals[`p${i}`] ?? 0), rows, spelledAsPandas.has(c.name)),
    ),
  };
}

/**
 * Reads a comma-separated UTF-8 file with a header strictly (a ragged line, a stray quote or
 * bad UTF-8 is an error, not a guess) and returns its header, row count and the dtypes pandas
 * infers for its columns, from the types DuckDB detects: integers without a missing value
 * are int64, with one float64; numbers float64; true/false bool; the rest object. Types are
 * guessed from a sample first, and from the whole file when a later value does not fit.
 */
export async function scanCsv(connection: DuckDBConnection, file: string): Promise<CsvScan> {
  try {
    return await scanWith(connection, file, false);
  } catch (error) {
    if (!/convert|cast/i.test(duckDbProblem(error))) throw error;
    return scanWith(connection, file, true);
  }
}
