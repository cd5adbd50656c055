import type { Runtime } from "@langchain/langgraph";
import {
  type Configuration,
  ConfigurationSchema,
  ensureConfiguration,
} from "../blackboard/configuration.js";
import type { TableQAStateValue, TableQAUpdate } from "../blackboard/state.js";

export type NodeRuntime = Runtime<Partial<Configuration>>;

/** Every node of table_qa has this shape. */
export type TableQANode = (
  state: TableQAStateValue,
  runtime: NodeRuntime,
) => Promise<TableQAUpdate>;

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
