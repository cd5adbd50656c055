import { rm } from "node:fs/promises";
import { adoptArtifact, artifactTempPath, hashFile } from "../artifacts.js";
import { sqlIdentifier, sqlString } from "../sandbox/duckdb-csv.js";
import type { Dtype } from "./dtypes.js";
import { duckDbProblem, scanCsv, withDuckDb } from "./duckdb-scan.js";
import { TableLoadError } from "./errors.js";
import { uniqueColumnNames } from "./names.js";

export interface StoredParquet {
  header: string[];
  rows: number;
  dtypes: Dtype[];
  sha256: string;
  uri: string;
  warnings: string[];
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
