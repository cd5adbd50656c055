import type { BaseStore } from "@langchain/langgraph";
import { type Configuration, ensureConfiguration } from "../blackboard/configuration.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { closeCheckpointer, openCheckpointer } from "../graphs/persistence.js";
import { type GraphSnapshot, loadGraph, type RunnableGraph } from "../graphs/registry.js";
import { stepBound } from "../graphs/table_qa.js";
import { openMemoryStore } from "../tools/memory/index.js";
import { closeSandboxes } from "../tools/sandbox/index.js";
import { describeUpdate } from "./progress.js";
import { jsonResult, renderResult } from "./report.js";

export interface AskOptions {
  tables: string[];
  question: string;
  graph: string;
  json: boolean;
  quiet: boolean;
  context: Partial<Configuration>;
  /** Save every step under this id; asking again with it resumes an interrupted run. */
  thread?: string;
  /** Long-term memory for recall/archive: a given store, else `$TABLEMINDS_HOME/memory.sqlite`. */
  store?: BaseStore;
  /** False: no memory store at all. */
  memory?: boolean;
  /** Step limit of the run. */
  recursionLimit?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Raised when `--thread` names a run that asked something else. */
export class ThreadMismatchError extends Error {
  constructor(thread: string, asked: string) {
    super(
      `thread "${thread}" belongs to another question (${JSON.stringify(asked)}); ` +
        "use a new --thread id for a new question",
    );
    this.name = "ThreadMismatchError";
  }
}

type Start = { kind: "fresh" } | { kind: "resume"; next: readonly string[] } | { kind: "done" };

/** The nodes a stopped run goes on with, inside the subgraph it stopped in, if any. */
function pendingNodes(snapshot: GraphSnapshot): readonly string[] {
  const inner = (snapshot.tasks ?? []).flatMap((task) =>
    isSnapshot(task.state) ? pendingNodes(task.state) : [],
  );
  return inner.length > 0 ? inner : snapshot.next;
}

const isSnapshot = (value: unknown): value is GraphSnapshot =>
  isRecord(value) && Array.isArray(value.next);

/** Whether a threaded run starts, resumes where it stopped, or has already finished. */
async function threadStart(graph: RunnableGraph, thread: string, question: string) {
  const snapshot = await graph.getState(
    { configurable: { thread_id: thread } },
    { subgraphs: true },
  );
  const values = isRecord(snapshot.values) ? snapshot.values : {};
  if (typeof values.question !== "string") return { kind: "fresh" } satisfies Start;
  if (values.question !== question) throw new ThreadMismatchError(thread, values.question);
  if (snapshot.next.length > 0) {
    return { kind: "resume", next: pendingNodes(snapshot) } satisfies Start;
  }
  return { kind: "done" } satisfies Start;
}

/** Runs one question through a graph, progress to stderr, the result to stdout. */
export async function ask(options: AskOptions): Promise<TableQAStateValue> {
  const checkpointer = options.thread ? openCheckpointer() : undefined;
  const ownStore = options.store || options.memory === false ? undefined : openMemoryStore();
  const thread = options.thread;
  const say = (line: string) => {
    if (!options.quiet) process.stderr.write(`${line}\n`);
  };
  let state: TableQAStateValue | undefined;
  try {
    const graph = await loadGraph(options.graph, {
      persistence: { checkpointer, store: options.store ?? ownStore },
    });
    const start = thread
      ? await threadStart(graph, thread, options.question)
      : ({ kind: "fresh" } as Start);
    if (start.kind === "resume") say(`resume thread ${thread} at ${start.next.join(", ")}`);
    if (start.kind === "done") say(`thread ${thread} has finished; its answer:`);
    const input =
      start.kind === "fresh"
        ? { question: options.question, sources: options.tables.map((path) => ({ path })) }
        : null;
    if (start.kind !== "done") {
      const stream = await graph.stream(input, {
        streamMode: ["updates", "values"],
        // Progress of the nodes inside subgraphs too (table_qa's solve).
        subgraphs: true,
        context: options.context,
        recursionLimit: options.recursionLimit ?? stepBound(ensureConfiguration(options.context)),
        ...(thread ? { configurable: { thread_id: thread } } : {}),
      });
      for await (const chunk of stream) {
        if (!Array.isArray(chunk)) continue;
        const [namespace, mode, payload] = chunk as [string[], string, unknown];
        if (mode === "values" && namespace.length === 0) state = payload as TableQAStateValue;
        if (mode === "updates" && isRecord(payload)) {
          for (const [node, update] of Object.entries(payload)) {
            const line = isRecord(update) ? describeUpdate(node, update) : null;
            if (line) say(line);
          }
        }
      }
    }
    if (thread && !state) {
      const snapshot = await graph.getState({ configurable: { thread_id: thread } });
      state = snapshot.values as TableQAStateValue;
    }
  } finally {
    await closeSandboxes();
    closeCheckpointer(checkpointer);
    ownStore?.close();
  }
  if (!state) throw new Error("the graph produced no state");
  if (options.json) {
    process.stdout.write(`${JSON.stringify(jsonResult(state), null, 2)}\n`);
  } else {
    process.stdout.write(`${await renderResult(state)}\n`);
  }
  return state;
}
