import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import type { TableRef } from "../blackboard/schemas.js";
import { localArtifact } from "../storage/artifacts.js";
import { fileProblem, TableLoadError } from "./errors.js";
import { duckDbLineOptions } from "./line-limits.js";

/** A SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A quoted SQL identifier, so any table or column name is taken literally. */
export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export interface CsvScanOptions {
  header: boolean;
  /** Every column as VARCHAR, no type detection. */
  allVarchar?: boolean;
  /** Spellings read as NULL; DuckDB's default is the empty string only. */
  nullStrings?: readonly string[];
  /** DuckDB types for some columns by name (the others are detected), or for all by position. */
  types?: Readonly<Record<string, string>> | readonly string[];
}

/**
 * A `read_csv` call for a stored artifact. The dialect is fixed to the canonical form
 * the loader writes (comma, double quotes doubled inside quotes), so DuckDB's sniffer
 * only has to guess column types.
 */
export function csvScan(uri: string, opts: CsvScanOptions): string {
  const args = [
    sqlString(uri),
    `header = ${opts.header}`,
    "delim = ','",
    `quote = '"'`,
    `escape = '"'`,
    // Lines as long as the loader lets in (DuckDB's default stops at 2 MB).
    duckDbLineOptions(),
  ];
  if (opts.allVarchar) args.push("all_varchar = true");
  if (opts.nullStrings) args.push(`nullstr = [${opts.nullStrings.map(sqlString).join(", ")}]`);
  const types = opts.types ?? {};
  if (Array.isArray(types)) {
    args.push(`types = [${types.map(sqlString).join(", ")}]`);
  } else {
    const fields = Object.entries(types).map(
      ([name, type]) => `${sqlString(name)}: ${sqlString(type)}`,
    );
    if (fields.length > 0) args.push(`types = {${fields.join(", ")}}`);
  }
  return `read_csv(${args.join(", ")})`;
}

/**
 * Checks that an artifact still holds the bytes its TableRef names, hashing it as a
 * stream so a large table is never held in memory whole, and returns the file checked (in
 * this machine's artifact folder: localArtifact), the one to scan. Throws TableLoadError.
 */
export async function verifyArtifact(ref: TableRef): Promise<string> {
  if (!ref.uri.endsWith(".csv")) {
    throw new TableLoadError(ref.uri, "only CSV artifacts can be read so far");
  }
  const hash = createHash("sha256");
  let file: string;
  try {
    file = await localArtifact(ref);
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  } catch (error) {
    throw new TableLoadError(ref.uri, `artifact missing or unreadable: ${fileProblem(error)}`, {
      cause: error,
    });
  }
  if (hash.digest("hex") !== ref.sha256) {
    throw new TableLoadError(ref.uri, `the artifact's content does not match sha256 ${ref.sha256}`);
  }
  return file;
}
