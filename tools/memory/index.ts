import path from "node:path";
import { tablemindsHome } from "../../blackboard/artifacts.js";
import { SqliteStore } from "./sqlite-store.js";

export { createEmbedder, type Embedder, OfflineEmbeddings, offlineEmbed } from "./embeddings.js";
export * from "./episodes.js";
export { cosine, SqliteStore } from "./sqlite-store.js";

export function memoryFile(): string {
  return path.join(tablemindsHome(), "memory.sqlite");
}

/** The persistent long-term memory: `$TABLEMINDS_HOME/memory.sqlite` unless told otherwise. */
export function openMemoryStore(file = memoryFile()): SqliteStore {
  return new SqliteStore(file);
}
