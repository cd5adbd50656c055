import type { TableRef } from "../../blackboard/schemas.js";
import { readArtifact, sha256 } from "../artifacts.js";
import { CsvSyntaxError, parseDelimited } from "./csv.js";
import { decodeUtf8, fileProblem, TableLoadError } from "./errors.js";

/** A table's cells as stored: every value a string, empty when missing. Treat as read-only. */
export interface TableData {
  columns: string[];
  rows: string[][];
}

const MAX_CACHED_TABLES = 16;
/** Parsed tables by sha256; Map order is recency of use, oldest first. */
const cache = new Map<string, TableData>();

/** Forgets every cached table (for tests, or after artifacts were removed). */
export function clearTableCache(): void {
  cache.clear();
}

function remember(digest: string, data: TableData): void {
  cache.delete(digest);
  cache.set(digest, data);
  for (const oldest of cache.keys()) {
    if (cache.size <= MAX_CACHED_TABLES) break;
    cache.delete(oldest);
  }
}

async function readFromArtifact(ref: TableRef): Promise<TableData> {
  if (!ref.uri.endsWith(".csv")) {
    throw new TableLoadError(ref.uri, "only CSV artifacts can be read so far");
  }
  let bytes: Buffer;
  try {
    bytes = await readArtifact(ref.uri);
  } catch (error) {
    throw new TableLoadError(ref.uri, `artifact missing or unreadable: ${fileProblem(error)}`, {
      cause: error,
    });
  }
  if (sha256(bytes) !== ref.sha256) {
    throw new TableLoadError(ref.uri, `the artifact's content does not match sha256 ${ref.sha256}`);
  }
  try {
    const [header, ...rest] = parseDelimited(decodeUtf8(bytes, ref.uri), ",");
    return { columns: header?.fields ?? [], rows: rest.map((record) => record.fields) };
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new TableLoadError(ref.uri, error.message);
    throw error;
  }
}

/** The cells of a stored table, checked against its sha256; recent tables are cached. */
export async function readTable(ref: TableRef): Promise<TableData> {
  const cached = cache.get(ref.sha256);
  const data = cached ?? (await readFromArtifact(ref));
  remember(ref.sha256, data);
  return data;
}
