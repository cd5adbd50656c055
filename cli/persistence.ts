import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BaseStore } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { tablemindsHome } from "../tools/artifacts.js";

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

/** What a graph needs to run with persistence; LangGraph's compiled graphs have it. */
export interface PersistableGraph {
  withConfig(config: Record<string, unknown>): PersistableGraph;
  checkpointer?: unknown;
  store?: unknown;
}

/**
 * A copy of a compiled graph that saves its checkpoints and memories where the CLI says.
 * The graph exported for Studio stays as it is: the server brings its own of both.
 */
export function withPersistence<G extends PersistableGraph>(
  graph: G,
  persistence: { checkpointer?: SqliteSaver; store?: BaseStore },
): G {
  const copy = graph.withConfig({}) as G;
  if (persistence.checkpointer) copy.checkpointer = persistence.checkpointer;
  if (persistence.store) copy.store = persistence.store;
  return copy;
}
