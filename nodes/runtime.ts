import type { Runtime } from "@langchain/langgraph";
import { type Configuration, ensureConfiguration } from "../blackboard/configuration.js";
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
  return ensureConfiguration({ ...(runtime?.configurable ?? {}), ...(runtime?.context ?? {}) });
}
