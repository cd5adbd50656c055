import { rm } from "node:fs/promises";
import { adoptArtifact, artifactTempPath, hashFile } from "../storage/artifacts.js";
import type { Dtype } from "./dtypes.js";
import { sqlIdentifier, sqlString } from "./duckdb-csv.js";
import { duckDbProblem, scanCsv, withDuckDb } from "./duckdb-scan.js";
import { TableLoadError, tableLimit } from "./errors.js";
import { uniqueColumnNames } from "./names.js";

/**
 * What a Parquet file may grow into once decoded, checked before it is written out: its cells
 * (rows times columns, from the file's own metadata) and its values' text, counted by DuckDB in
 * one streaming pass. A few kilobytes of repeated strings decode to gigabytes.
 */

export interface StoredParquet {
  header: string[];
  rows: number;
  dtypes: Dtype[];
  sha256: string;
  uri: string;
  warnings: string[];
}

/** Refuses a Parquet file whose cells or decoded text pass the limits, before it is written out. */
async function checkDecodedSize(
  connection: Parameters<Parameters<typeof withDuckDb>[0]>[0],
  file: string,
  source: string,
  names: readonly string[],
): Promise<void> {
  const maxCells = tableLimit("parquetMaxCells", file);
  const maxBytes = tableLimit("parquetMaxBytes", file);
  const meta = await connection.runAndReadAll(
    `SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata(${sqlString(file)})`,
  );
  const rows = Number(meta.getRows()[0]?.[0] ?? 0);
  const cells = rows * names.length;
  if (cells > maxCells) {
    throw new TableLoadError(
      file,
      `the Parquet file holds ${rows} rows of ${names.length} columns (${cells} cells), more than TABLEMINDS_PARQUET_MAX_CELLS (${maxCells})`,
    );
  }
  const text = names
    .map((name) => `coalesce(strlen(CAST(${sqlIdentifier(name)} AS VARCHAR)), 0)`)
    .join(" + ");
  const counted = await connection.runAndReadAll(`SELECT coalesce(sum(${text}), 0) FROM ${source}`);
  const bytes = Number(counted.getRows()[0]?.[0] ?? 0);
  if (bytes > maxBytes) {
    throw new TableLoadError(
      file,
      `the Parquet file's values decode to ${Math.ceil(bytes / 1024 / 1024)} MB of text, more than TABLEMINDS_PARQUET_MAX_BYTES (${Math.floor(maxBytes / 1024 / 1024)} MB)`,
    );
  }
}

/**
 * Reads a Parquet file with DuckDB and stores it as a CSV artifact (the form every reader of
 * the store takes), without holding it in memory; the dtypes are those pandas infers from
 * that CSV. Throws a TableLoadError naming `file` when it is not readable Parquet.
 */
export async function storeParquet(file: string): Promise<StoredParquet> {
  const source = `read_parquet(${sqlString(file)})`;
  const tmp = await artifactTempPath("csv");
  try {
    return await withDuckDb(async (connection) => {
      let names: string[];
      try {
        const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
        names = described.getRows().map((row) => String(row[0]));
      } catch (error) {
        throw new TableLoadError(
          file,
          `not a readable Parquet file (truncated or corrupt?): ${duckDbProblem(error)}`,
          { cause: error },
        );
      }
      if (names.length === 0) throw new TableLoadError(file, "the Parquet file has no columns");
      try {
        await checkDecodedSize(connection, file, source, names);
      } catch (error) {
        if (error instanceof TableLoadError) throw error;
        throw new TableLoadError(
          file,
          `not a readable Parquet file (truncated or corrupt?): ${duckDbProblem(error)}`,
          { cause: error },
        );
      }
      const naming = uniqueColumnNames(names);
      // A lone empty value would be a blank line, which readers skip: quote it.
      const lone = names.length === 1;
      const select = names
        .map((name, i) => {
          const column = sqlIdentifier(name);
          const value = lone ? `coalesce(CAST(${column} AS VARCHAR), '')` : column;
          return `${value} AS ${sqlIdentifier(naming.names[i] ?? name)}`;
        })
        .join(", ");
      const options = ["FORMAT csv", "HEADER true", "DELIMITER ','", `QUOTE '"'`, `ESCAPE '"'`];
      if (lone) options.push(`FORCE_QUOTE (${sqlIdentifier(naming.names[0] ?? "")})`);
      try {
        await connection.run(
          `COPY (SELECT ${select} FROM ${source}) TO ${sqlString(tmp)} (${options.join(", ")})`,
        );
      } catch (error) {
        throw new TableLoadError(
          file,
          `not a readable Parquet file (truncated or corrupt?): ${duckDbProblem(error)}`,
          { cause: error },
        );
      }
      const scanned = await scanCsv(connection, tmp);
      const stored = await adoptArtifact(tmp, await hashFile(tmp), "csv");
      return { ...scanned, header: naming.names, ...stored, warnings: naming.warnings };
    });
  } finally {
    await rm(tmp, { force: true });
  }
}
