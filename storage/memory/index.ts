import { existsSync } from "node:fs";
import path from "node:path";
import { tablemindsHome } from "../artifacts.js";
import { EPISODE_VERSION, isCurrentEpisode, MEMORY_ROOT } from "./episodes.js";
import {
  type Retirement,
  SqliteStore,
  type SqliteStoreOptions,
  type Sweep,
} from "./sqlite-store.js";

export {
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
  type Retirement,
  SqliteStore,
  type SqliteStoreOptions,
  STORE_SCHEMA_VERSION,
  type Sweep,
} from "./sqlite-store.js";
export * from "./table-schema.js";

/** `$TABLEMINDS_HOME/memory.sqlite`, TABLEMINDS_HOME defaulting to ./.tableminds. */
export function memoryFile(): string {
  return path.join(tablemindsHome(), "memory.sqlite");
}

/**
 * Entries archived by an older tableminds (before EPISODE_VERSION: no table schema, no
 * verification marks, so possibly from runs that were wrong): dropped once when a memory file
 * opens, and by `tableminds prune` whenever it runs.
 */
export const OUTDATED_EPISODES: Retirement = {
  name: "episodes",
  prefix: MEMORY_ROOT,
  version: EPISODE_VERSION,
  keep: isCurrentEpisode,
};

const entries = (n: number) => `${n} ${n === 1 ? "entry" : "entries"}`;

/** The line that says what a sweep of outdated entries did (or would do, with `dryRun`). */
export function describeSweep(file: string, sweep: Sweep, dryRun = false): string {
  return `memory: ${dryRun ? "would drop" : "dropped"} ${entries(sweep.dropped)} archived by an older tableminds (no table schema or verification) from ${file}; kept ${entries(sweep.kept)}`;
}

/**
 * The persistent long-term memory: `$TABLEMINDS_HOME/memory.sqlite` unless told otherwise.
 * Opening a file written before EPISODE_VERSION drops its outdated entries once, with a warning
 * saying how many.
 */
export function openMemoryStore(
  file = memoryFile(),
  options: SqliteStoreOptions = {},
): SqliteStore {
  const store = new SqliteStore(file, { retire: OUTDATED_EPISODES, ...options });
  if (store.retired > 0) {
    process.emitWarning(
      `memory: dropped ${entries(store.retired)} of ${file} archived by an older tableminds (no table schema or verification)`,
      "TablemindsWarning",
    );
  }
  return store;
}

/** `tableminds prune`: drops (or, with `dryRun`, counts) the outdated entries of a memory store. */
export function sweepOutdatedEpisodes(store: SqliteStore, dryRun = false): Sweep {
  return store.sweep(OUTDATED_EPISODES.prefix, OUTDATED_EPISODES.keep, dryRun);
}

/**
 * The memory entries an older tableminds archived (no table schema, no verification), dropped
 * from `$TABLEMINDS_HOME/memory.sqlite`: the line that says how many, or null without a file.
 */
export function pruneMemory(dryRun: boolean, file = memoryFile()): string | null {
  if (!existsSync(file)) return null;
  const store = new SqliteStore(file);
  try {
    return describeSweep(file, sweepOutdatedEpisodes(store, dryRun), dryRun);
  } finally {
    store.close();
  }
}
