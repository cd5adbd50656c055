import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { deploymentSettings } from "../settings/deployment.js";
import { tablemindsHome } from "../storage/artifacts.js";
import { openMemoryStore } from "../storage/memory/index.js";

/** Where a run saves its super-steps and its long-term memories; either may be left out. */
export interface Persistence {
  checkpointer?: BaseCheckpointSaver;
  store?: BaseStore;
}

/** Where `ask --thread` keeps its checkpoints. */
export function checkpointFile(): string {
  return path.join(tablemindsHome(), "checkpoints.sqlite");
}

/** A SQLite checkpointer in TABLEMINDS_HOME; every super-step of a threaded run is saved. */
export function openCheckpointer(file = checkpointFile()): SqliteSaver {
  mkdirSync(path.dirname(file), { recursive: true });
  return SqliteSaver.fromConnString(file);
}

export function closeCheckpointer(saver: SqliteSaver | undefined): void {
  saver?.db.close();
}

/** Persistence opened for a process, and how to let it go. */
export interface OpenPersistence extends Persistence {
  /** `sqlite` (files in TABLEMINDS_HOME) or `postgres` (TABLEMINDS_DATABASE_URL). */
  kind: "sqlite" | "postgres";
  close(): Promise<void>;
}

/**
 * The checkpointer and memory store of a process that runs graphs: PostgreSQL when
 * TABLEMINDS_DATABASE_URL is set (migrated first, under the lock), else the SQLite files in
 * TABLEMINDS_HOME. `checkpoints: false` or `memory: false` leaves either out. PostgreSQL's store
 * is used without a vector index (pgvector is not packaged everywhere): recall ranks entries by
 * its own similarity (storage/memory/ranking.ts), as it does over SQLite.
 */
export async function openPersistence(
  want: { checkpoints?: boolean; memory?: boolean } = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<OpenPersistence> {
  const { checkpoints = true, memory = true } = want;
  const url = deploymentSettings(env).TABLEMINDS_DATABASE_URL;
  if (!url) {
    const checkpointer = checkpoints ? openCheckpointer() : undefined;
    const store = memory ? openMemoryStore() : undefined;
    return {
      kind: "sqlite",
      checkpointer,
      store,
      async close() {
        closeCheckpointer(checkpointer);
        store?.close();
      },
    };
  }
  // PostgreSQL's client is loaded only by a process that uses it.
  const { openPostgresPersistence } = await import("./persistence-postgres.js");
  return openPostgresPersistence(url, { checkpoints, memory });
}
