import path from "node:path";
import { tablemindsHome } from "../artifacts.js";
import { SqliteStore, type SqliteStoreOptions } from "./sqlite-store.js";

export {
  createEmbedder,
  decodeVector,
  type Embedder,
  encodeVector,
  maskValues,
  OFFLINE_ID,
  OfflineEmbeddings,
  offlineEmbed,
} from "./embeddings.js";
export * from "./episodes.js";
export {
  cosine,
  SqliteStore,
  type SqliteStoreOptions,
  STORE_SCHEMA_VERSION,
} from "./sqlite-store.js";

/** `$TABLEMINDS_HOME/memory.sqlite`, TABLEMINDS_HOME defaulting to ./.tableminds. */
export function memoryFile(): string {
  return path.join(tablemindsHome(), "memory.sqlite");
}

/** The persistent long-term memory: `$TABLEMINDS_HOME/memory.sqlite` unless told otherwise. */
export function openMemoryStore(
  file = memoryFile(),
  options: SqliteStoreOptions = {},
): SqliteStore {
  return new SqliteStore(file, options);
}
