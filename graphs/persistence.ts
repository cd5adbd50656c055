import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { tablemindsHome } from "../tools/artifacts.js";

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
