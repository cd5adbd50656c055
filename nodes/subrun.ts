import type { NodeRuntime } from "./runtime.js";

/** Where LangGraph hands a run's abort signals down to the subgraphs its nodes run. */
const INHERITED_SIGNALS = "__pregel_abort_signals";

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
