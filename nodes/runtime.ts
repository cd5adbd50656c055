import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { namesLocalPath } from "../models/local-spec.js";
import {
  type Configuration,
  ConfigurationSchema,
  ensureConfiguration,
  isModelField,
  OPERATOR_FIELDS,
  OPERATOR_SOURCE,
} from "../settings/configuration.js";
import { operatorSettings } from "../settings/operator.js";
import { userMemoryPrefix } from "../storage/memory/episodes.js";
import { stricterPrivacy } from "../tables/privacy.js";

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
  let caller: Configuration;
  if (fromConfigurable) caller = checked({ ...fromConfigurable, ...(context ?? {}) });
  else if (!context) caller = defaults ??= Object.freeze(checked({}));
  else {
    // Every node of a run reads the same context object: it is validated once per run.
    let parsed = parsedContexts.get(context);
    if (!parsed) {
      parsed = Object.freeze(checked(context));
      parsedContexts.set(context, parsed);
    }
    caller = parsed;
  }
  return withOperator(caller, authUserOf(runtime?.configurable));
}

/** The user the API server authenticated for this run (it sets this itself), if any. */
function authUserOf(configurable: object | undefined): string | undefined {
  const user = (configurable as Record<string, unknown> | undefined)?.langgraph_auth_user_id;
  return typeof user === "string" && user ? user : undefined;
}

/**
 * The caller's configuration with the operator's fields in force, privacy at least the
 * operator's, and, on a server, memory kept per authenticated user.
 */
function withOperator(caller: Configuration, user: string | undefined): Configuration {
  const operator = operatorSettings();
  const own = user ? userMemoryPrefix(user) : "";
  const memoryNamespace = caller.memoryNamespace.startsWith(own)
    ? caller.memoryNamespace
    : own + caller.memoryNamespace;
  const fields = Object.fromEntries(OPERATOR_FIELDS.map((key) => [key, operator[key]]));
  const privacy = stricterPrivacy(caller.privacy, operator.privacy);
  return { ...caller, ...fields, memoryNamespace, privacy };
}

/** A run configuration that is not one: every problem, in one line. */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

function checked(context: object): Configuration {
  const problems = callerProblems(context);
  if (problems.length)
    throw new ConfigurationError(`invalid run configuration: ${problems.join("; ")}`);
  try {
    return ensureConfiguration(context);
  } catch (error) {
    if (!(error instanceof z.ZodError)) throw error;
    const problems = error.issues.map((i) => `${i.path.join(".") || "(the whole)"}: ${i.message}`);
    throw new ConfigurationError(`invalid run configuration: ${problems.join("; ")}`);
  }
}

/**
 * What a run's context may not set: the operator's fields, and (on a server) a local model
 * named by its path. Empty when it sets none of them. The API server's authorization asks too.
 */
export function callerProblems(context: object): string[] {
  const given = context as Record<string, unknown>;
  const problems = OPERATOR_FIELDS.filter((key) => given[key] !== undefined).map(
    (key) => `${key}: set by the operator (${OPERATOR_SOURCE[key]}), not by a run`,
  );
  if (!operatorSettings().localModelPaths) {
    for (const [key, value] of Object.entries(given)) {
      if (isModelField(key) && typeof value === "string" && namesLocalPath(value)) {
        problems.push(
          `${key}: a local model is named here by its name in the models folder, not by a path`,
        );
      }
    }
  }
  return problems;
}

const parsedContexts = new WeakMap<object, Configuration>();
/** The configuration of a run given no context: the schema's defaults, parsed once. */
let defaults: Configuration | undefined;
const SETTINGS = Object.keys(ConfigurationSchema.shape);

/** Our settings among `configurable`'s keys (which also carry LangGraph's own), or null. */
function knownSettings(configurable: object | undefined): Record<string, unknown> | null {
  if (!configurable) return null;
  const entries = Object.entries(configurable).filter(([key]) => SETTINGS.includes(key));
  return entries.length ? Object.fromEntries(entries) : null;
}
