import type { TableRef } from "../blackboard/schemas.js";
import { localArtifact, readArtifact, sha256 } from "../storage/artifacts.js";
import { BoundedCache } from "../storage/bounded-cache.js";
import { CsvSyntaxError, parseDelimited } from "./csv.js";
import { decodeText, fileProblem, TableLoadError } from "./errors.js";

/** A table's cells as stored: every value a string, empty when missing. Treat as read-only. */
export interface TableData {
  columns: string[];
  rows: string[][];
}

/** Parsed tables by sha256, the most recently used kept. */
const cache = new BoundedCache<TableData>(16);

/** Forgets every cached table (for tests, or after artifacts were removed). */
export function clearTableCache(): void {
  cache.clear();
}

async function readFromArtifact(ref: TableRef): Promise<TableData> {
  if (!ref.uri.endsWith(".csv")) {
    throw new TableLoadError(ref.uri, "only CSV artifacts can be read so far");
  }
  let bytes: Buffer;
  try {
    bytes = await readArtifact(await localArtifact(ref));
  } catch (error) {
    throw new TableLoadError(ref.uri, `artifact missing or unreadable: ${fileProblem(error)}`, {
      cause: error,
    });
  }
  if (sha256(bytes) !== ref.sha256) {
    throw new TableLoadError(ref.uri, `the artifact's content does not match sha256 ${ref.sha256}`);
  }
  try {
    const [header, ...rest] = parseDelimited(decodeText(bytes, ref.uri), ",");
    return { columns: header?.fields ?? [], rows: rest.map((record) => record.fields) };
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new TableLoadError(ref.uri, error.message);
    throw error;
  }
}

/** The cells of a stored table, checked against its sha256; recent tables are cached. */
export async function readTable(ref: TableRef): Promise<TableData> {
  const cached = cache.get(ref.sha256);
  if (cached) return cached;
  const data = await readFromArtifact(ref);
  cache.set(ref.sha256, data);
  return data;
}
