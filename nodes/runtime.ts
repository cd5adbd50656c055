import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  type Configuration,
  ConfigurationSchema,
  ensureConfiguration,
} from "../blackboard/configuration.js";

/** What a caller may set for a run: any part of the configuration. */
export type NodeContext = Partial<Configuration>;

/** What a node or router receives beside the state: context, store, signal, configurable. */
export type NodeRuntime = LangGraphRunnableConfig<NodeContext>;

/**
 * The run configuration as the node sees it: `context` (LangGraph 1.x, Studio's
 * form, the SDK) over `configurable` (older clients), with defaults filled in.
 */
export function configurationOf(
  runtime: { context?: object; configurable?: object } | undefined,
): Configuration {
  const context = runtime?.context;
  const fromConfigurable = knownSettings(runtime?.configurable);
  if (fromConfigurable) return ensureConfiguration({ ...fromConfigurable, ...(context ?? {}) });
  if (!context) return ensureConfiguration({});
  // Every node of a run reads the same context object: it is validated once per run.
  let parsed = parsedContexts.get(context);
  if (!parsed) {
    parsed = Object.freeze(ensureConfiguration(context));
    parsedContexts.set(context, parsed);
  }
  return parsed;
}

const parsedContexts = new WeakMap<object, Configuration>();
const SETTINGS = Object.keys(ConfigurationSchema.shape);

/** Our settings among `configurable`'s keys (which also carry LangGraph's own), or null. */
function knownSettings(configurable: object | undefined): Record<string, unknown> | null {
  if (!configurable) return null;
  const entries = Object.entries(configurable).filter(([key]) => SETTINGS.includes(key));
  return entries.length ? Object.fromEntries(entries) : null;
}
