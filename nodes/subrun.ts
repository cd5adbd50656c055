import type { NodeRuntime } from "./runtime.js";

/** Where LangGraph hands a run's abort signals down to the subgraphs its nodes run. */
const INHERITED_SIGNALS = "__pregel_abort_signals";
/** Where LangGraph lends its checkpointer to the subgraphs a node runs. */
const LENT_CHECKPOINTER = "__pregel_checkpointer";

/**
 * The private keys of LangGraph's config this project touches, here and nowhere else;
 * tests/unit/langgraph-private-keys.test.ts pins them to the installed LangGraph.
 */
export const LANGGRAPH_PRIVATE_KEYS = {
  CONFIG_KEY_ABORT_SIGNALS: INHERITED_SIGNALS,
  CONFIG_KEY_CHECKPOINTER: LENT_CHECKPOINTER,
} as const;

/**
 * The config a node passes to a subgraph it runs itself (a branch's solve, a worker's).
 * LangGraph hangs abort listeners on the run's external signal, which subgraphs inherit, once
 * per nested run and per step of it: branches running side by side on their parent's signal
 * passed Node's limit of 10, and Node printed MaxListenersExceededWarning. Each subrun starts
 * from a signal of its own instead, which `AbortSignal.any` makes follow the node's (the parent
 * run's cancel, timeout and failure) without a listener on it.
 */
export function subrunConfig<T extends NodeRuntime>(runtime: T): T;
export function subrunConfig<T extends NodeRuntime>(runtime: T | undefined): T | undefined;
export function subrunConfig<T extends NodeRuntime>(runtime: T | undefined): T | undefined {
  if (!runtime?.signal) return runtime;
  const configurable: Record<string, unknown> = { ...runtime.configurable };
  delete configurable[INHERITED_SIGNALS];
  return { ...runtime, configurable, signal: AbortSignal.any([runtime.signal]) };
}

/**
 * The config of a subgraph run side by side with others of the same node, stopped by `signal`
 * too, without checkpoints. LangGraph names a lent checkpointer's namespaces by the order the
 * subgraphs start in, which differs from run to run when they run side by side: a node run again
 * (a resumed thread) could start one from another's state. Such a node runs again from its start.
 */
export function sideBySideConfig(
  runtime: NodeRuntime | undefined,
  signal: AbortSignal,
): NodeRuntime {
  const configurable: Record<string, unknown> = { ...runtime?.configurable };
  delete configurable[LENT_CHECKPOINTER];
  return { ...runtime, configurable, signal };
}
