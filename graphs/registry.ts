import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { z } from "zod";
import type { Configuration } from "../settings/configuration.js";
import type { Persistence } from "./persistence.js";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const LangGraphJsonSchema = z.object({ graphs: z.record(z.string(), z.string()) });

/** The graphs of langgraph.json, name -> "./file.ts:export". */
export function listGraphs(root = PROJECT_ROOT): Record<string, string> {
  const file = path.join(root, "langgraph.json");
  return LangGraphJsonSchema.parse(JSON.parse(readFileSync(file, "utf8"))).graphs;
}

/** A graph's "./file.ts:export" in langgraph.json; an unknown name is refused with the known ones. */
export function graphSpec(name: string, root = PROJECT_ROOT): string {
  const graphs = listGraphs(root);
  const spec = graphs[name];
  if (!spec) {
    throw new Error(
      `unknown graph "${name}"; langgraph.json has: ${Object.keys(graphs).join(", ")}`,
    );
  }
  return spec;
}

/** A thread's saved state; with `subgraphs`, each task holds its subgraph's snapshot too. */
export interface GraphSnapshot {
  values: unknown;
  next: readonly string[];
  tasks?: readonly { name: string; state?: unknown }[];
}

/** A runnable graph as the CLI and the evaluation drive it: a compiled LangGraph graph. */
export interface RunnableGraph {
  stream(
    input: Record<string, unknown> | null,
    options: Record<string, unknown>,
  ): Promise<AsyncIterable<unknown>>;
  invoke(input: Record<string, unknown> | null, options: Record<string, unknown>): Promise<unknown>;
  getState(
    config: { configurable: { thread_id: string } },
    options?: { subgraphs?: boolean },
  ): Promise<GraphSnapshot>;
}

/**
 * What a module of langgraph.json exports: `graph` (compiled, for Studio), `builder` (the
 * uncompiled StateGraph) and `RECURSION_LIMIT`, the step limit `graph` was given.
 */
export type GraphModule = Readonly<Record<string, unknown>>;

interface GraphBuilder {
  compile(options: Persistence & { name?: string }): {
    withConfig(config: { recursionLimit: number }): unknown;
  };
}

function isRunnable(value: unknown): value is RunnableGraph {
  return typeof (value as Partial<RunnableGraph> | undefined)?.stream === "function";
}

function isBuilder(value: unknown): value is GraphBuilder {
  return typeof (value as Partial<GraphBuilder> | undefined)?.compile === "function";
}

const RecursionLimitSchema = z.number().int().positive();
const NamedSchema = z.object({ name: z.string() });

/**
 * The graph a module exports; given a checkpointer or a store, its `builder` compiled with
 * them instead, with the exported graph's name and the module's RECURSION_LIMIT. The graph
 * exported for Studio stays as it is: the server brings its own of both.
 */
export function graphFromModule(
  module: GraphModule,
  persistence: Persistence = {},
  options: { exported?: string; where?: string } = {},
): RunnableGraph {
  const { exported = "graph", where = "the graph module" } = options;
  const graph = module[exported];
  if (!isRunnable(graph)) {
    throw new Error(`${where} does not export a compiled graph named "${exported}"`);
  }
  if (!persistence.checkpointer && !persistence.store) return graph;
  const { builder, RECURSION_LIMIT } = module;
  if (!isBuilder(builder)) {
    throw new Error(
      `${where} does not export "builder" (its uncompiled StateGraph), so it cannot run with a checkpointer or store`,
    );
  }
  const limit = RecursionLimitSchema.safeParse(RECURSION_LIMIT);
  if (!limit.success) {
    throw new Error(`${where} does not export "RECURSION_LIMIT" (the step limit of its graph)`);
  }
  const name = NamedSchema.safeParse(graph);
  const compiled = builder
    .compile({ ...persistence, name: name.success ? name.data.name : undefined })
    .withConfig({ recursionLimit: limit.data });
  if (!isRunnable(compiled)) throw new Error(`${where}: builder.compile() gave no runnable graph`);
  return compiled;
}

/**
 * The module file of a spec's "./file.ts": the file itself, or, when only the compiled module
 * is there (the npm package ships dist/ without the sources), the ".js" beside it.
 */
export function graphModuleFile(file: string, root = PROJECT_ROOT): string {
  const source = path.resolve(root, file);
  const compiled = source.replace(/\.([cm]?)ts$/, ".$1js");
  if (compiled !== source && !existsSync(source) && existsSync(compiled)) return compiled;
  return source;
}

async function importGraph(name: string, root: string) {
  const spec = graphSpec(name, root);
  const [file = "", exported = "graph"] = spec.split(":");
  const module: GraphModule = await import(pathToFileURL(graphModuleFile(file, root)).href);
  return { module, exported, where: `langgraph.json: ${file}` };
}

/** A graph of langgraph.json, by name; with a checkpointer or store, see graphFromModule. */
export async function loadGraph(
  name: string,
  options: { persistence?: Persistence; root?: string } = {},
): Promise<RunnableGraph> {
  const { module, exported, where } = await importGraph(name, options.root ?? PROJECT_ROOT);
  return graphFromModule(module, options.persistence, { exported, where });
}

/** What LangGraph needs to run a graph with a configuration. */
export interface RunLimits {
  /** The module's `stepBound(configuration)`, else its RECURSION_LIMIT. */
  recursionLimit: number;
  /** How many branches (tasks of one step) may run at once. */
  maxConcurrency: number;
}

/**
 * The concurrency LangGraph is given: at least 2. LangGraph.js 1.7 runs only the first task of a
 * step when it is given 1, and drops the rest of a `Send` fan-out without an error
 * (langgraphjs#2656), so mom and the orchestrator lost branches and workers. mcts, which runs
 * its branches itself, grows one at a time with 1.
 */
export function pregelConcurrency(config: Pick<Configuration, "maxConcurrency">): number {
  return Math.max(config.maxConcurrency, 2);
}

/** The step limit and concurrency one run of a graph needs with this configuration. */
export async function runLimits(
  name: string,
  config: Configuration,
  root = PROJECT_ROOT,
): Promise<RunLimits> {
  const { module, where } = await importGraph(name, root);
  const bound = module.stepBound;
  const limit =
    typeof bound === "function"
      ? bound(config)
      : RecursionLimitSchema.parse(module.RECURSION_LIMIT);
  const recursionLimit = RecursionLimitSchema.safeParse(limit);
  if (!recursionLimit.success) throw new Error(`${where}: stepBound gave no step limit`);
  return { recursionLimit: recursionLimit.data, maxConcurrency: pregelConcurrency(config) };
}
