import type { BaseStore } from "@langchain/langgraph";
import type { TableSource } from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { loadGraph, type RunnableGraph, runLimits } from "../graphs/registry.js";
import { RunEventSchema } from "../nodes/events.js";
import { insideBranch } from "../nodes/progress.js";
import { configurationOf } from "../nodes/runtime.js";
import type { Configuration } from "../settings/configuration.js";

/*
 * One question run through a graph for the MCP `ask` tool: the same run as `tableminds ask`,
 * its node updates told as progress, stopped by the caller's cancellation or its deadline.
 */

export interface AskRun {
  question: string;
  sources: TableSource[];
  graph: string;
  /** The caller's settings, already checked (callerSettings). */
  context: Partial<Configuration>;
  /** The authenticated user on a served transport: memory is kept per user. */
  user?: string;
  /** Aborted when the client cancels the request. */
  signal: AbortSignal;
  /** Told one line per node update, when the client asked for progress. */
  progress?: (message: string) => void;
}

/** Compiled graphs by name, each with the server's memory store; compiled once per process. */
export class GraphShelf {
  private readonly graphs = new Map<string, Promise<RunnableGraph>>();

  constructor(private readonly store: BaseStore | undefined) {}

  get(name: string): Promise<RunnableGraph> {
    let graph = this.graphs.get(name);
    if (!graph) {
      graph = loadGraph(name, { persistence: { store: this.store } });
      this.graphs.set(name, graph);
      graph.catch(() => this.graphs.delete(name));
    }
    return graph;
  }
}

/** A node's progress event as one message: its line (`node: ...`), else the node's name. */
export function progressMessage(payload: unknown, namespace: string[]): string | null {
  const event = RunEventSchema.safeParse(payload);
  if (!event.success || event.data.event !== "progress") return null;
  if (insideBranch(namespace)) return event.data.node;
  return event.data.line ? event.data.line.replace(/^(\S+)\s+/, "$1: ") : event.data.node;
}

/** The run passed its deadline (`runTimeoutMs`). */
export class AskDeadlineError extends Error {
  override name = "AskDeadlineError";
  constructor(ms: number) {
    super(`the run did not finish within its deadline of ${ms} ms (runTimeoutMs; 0 for none)`);
  }
}

/** Runs the question; the final state, or an error (cancelled, past its deadline, failed). */
export async function runAsk(shelf: GraphShelf, run: AskRun): Promise<TableQAStateValue> {
  const config = configurationOf({ context: run.context });
  const graph = await shelf.get(run.graph);
  const limits = await runLimits(run.graph, config);
  const deadline = config.runTimeoutMs > 0 ? AbortSignal.timeout(config.runTimeoutMs) : undefined;
  const signal = deadline ? AbortSignal.any([run.signal, deadline]) : run.signal;
  let state: TableQAStateValue | undefined;
  try {
    const stream = await graph.stream(
      { question: run.question, sources: run.sources },
      {
        streamMode: ["custom", "values"],
        subgraphs: true,
        context: run.context,
        recursionLimit: limits.recursionLimit,
        maxConcurrency: limits.maxConcurrency,
        signal,
        // Read by configurationOf: on a server, memory is kept per authenticated user.
        ...(run.user ? { configurable: { langgraph_auth_user_id: run.user } } : {}),
      },
    );
    for await (const chunk of stream) {
      if (!Array.isArray(chunk)) continue;
      const [namespace, mode, payload] = chunk as [string[], string, unknown];
      if (mode === "values" && namespace.length === 0) state = payload as TableQAStateValue;
      const message =
        mode === "custom" && run.progress ? progressMessage(payload, namespace) : null;
      if (message) run.progress?.(message);
    }
  } catch (error) {
    if (deadline?.aborted && !run.signal.aborted) throw new AskDeadlineError(config.runTimeoutMs);
    throw error;
  }
  if (!state) throw new Error("the graph produced no state");
  return state;
}
