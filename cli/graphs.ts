import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import type { PersistableGraph } from "./persistence.js";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const LangGraphJsonSchema = z.object({ graphs: z.record(z.string(), z.string()) });

/** The graphs of langgraph.json, name -> "./file.ts:export". */
export function listGraphs(root = PROJECT_ROOT): Record<string, string> {
  const file = path.join(root, "langgraph.json");
  return LangGraphJsonSchema.parse(JSON.parse(readFileSync(file, "utf8"))).graphs;
}

/** A runnable graph as the CLI drives it: a compiled LangGraph graph. */
export interface RunnableGraph extends PersistableGraph {
  stream(
    input: Record<string, unknown> | null,
    options: Record<string, unknown>,
  ): Promise<AsyncIterable<unknown>>;
  invoke(input: Record<string, unknown> | null, options: Record<string, unknown>): Promise<unknown>;
  getState(config: {
    configurable: { thread_id: string };
  }): Promise<{ values: unknown; next: readonly string[] }>;
}

export async function loadGraph(name: string, root = PROJECT_ROOT): Promise<RunnableGraph> {
  const graphs = listGraphs(root);
  const spec = graphs[name];
  if (!spec) {
    throw new Error(
      `unknown graph "${name}"; langgraph.json has: ${Object.keys(graphs).join(", ")}`,
    );
  }
  const [file, exported = "graph"] = spec.split(":");
  const module: Record<string, unknown> = await import(
    pathToFileURL(path.resolve(root, file ?? "")).href
  );
  const graph = module[exported];
  if (!graph || typeof (graph as RunnableGraph).stream !== "function") {
    throw new Error(`langgraph.json: ${spec} does not export a compiled graph named "${exported}"`);
  }
  return graph as RunnableGraph;
}
