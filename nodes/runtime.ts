import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
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
  if (fromConfigurable) return checked({ ...fromConfigurable, ...(context ?? {}) });
  if (!context) return checked({});
  // Every node of a run reads the same context object: it is validated once per run.
  let parsed = parsedContexts.get(context);
  if (!parsed) {
    parsed = Object.freeze(checked(context));
    parsedContexts.set(context, parsed);
  }
  return parsed;
}

/** A run configuration that is not one: every problem, in one line. */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

function checked(context: object): Configuration {
  try {
    return ensureConfiguration(context);
  } catch (error) {
    if (!(error instanceof z.ZodError)) throw error;
    const problems = error.issues.map((i) => `${i.path.join(".") || "(the whole)"}: ${i.message}`);
    throw new ConfigurationError(`invalid run configuration: ${problems.join("; ")}`);
  }
}

const parsedContexts = new WeakMap<object, Configuration>();
const SETTINGS = Object.keys(ConfigurationSchema.shape);

/** Our settings among `configurable`'s keys (which also carry LangGraph's own), or null. */
function knownSettings(configurable: object | undefined): Record<string, unknown> | null {
  if (!configurable) return null;
  const entries = Object.entries(configurable).filter(([key]) => SETTINGS.includes(key));
  return entries.length ? Object.fromEntries(entries) : null;
}
