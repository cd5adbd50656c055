import { z } from "zod";
import { hostOf } from "../models/activity.js";
import { type Env, OPENAI_DEFAULT_BASE_URL, type Role, resolveModel } from "../models/config.js";
import { modelsOf } from "../nodes/llm.js";
import { type Configuration, ensureConfiguration } from "../settings/configuration.js";
import { ROLES, roleEnvVar, roleModelField } from "../settings/roles.js";
import { describeSelection, type Selection, SelectionSchema } from "./selection.js";

/** Model fields of the configuration: recorded as the models they resolve to instead. */
const MODEL_KEYS: readonly (keyof Configuration)[] = ["model", ...ROLES.map(roleModelField)];

/** Fields that change how a run goes (speed, where code runs, caching), not what it answers. */
export const OPERATIONAL_KEYS = [
  "replayCache",
  "llmTimeoutMs",
  "llmMaxRetries",
  "streaming",
  "sandbox",
] as const satisfies readonly (keyof Configuration)[];

/** What a run's results depend on; a directory's results must all share one. */
export const RunConfigSchema = z.object({
  dataset: z.string().min(1),
  /** The dataset file or directory given with --data. */
  data: z.string().optional(),
  graph: z.string().min(1),
  selection: SelectionSchema,
  /** The model every role uses unless it has its own: flag, else TABLEMINDS_MODEL, else default. */
  model: z.string().min(1),
  /** Roles whose model differs from `model` (per-role flags or TABLEMINDS_<ROLE>_MODEL). */
  roleModels: z.partialRecord(z.enum(ROLES), z.string()).default({}),
  /** The model endpoint's host (and port); never a key or a path. */
  endpoint: z.string().min(1),
  /** The effective configuration, defaults filled, without model and operational fields. */
  settings: z.record(z.string(), z.unknown()),
});
export type RunConfig = z.infer<typeof RunConfigSchema>;

/**
 * The configuration a run's results depend on, with models and endpoint resolved as the model
 * client resolves them. Throws ModelConfigError when no endpoint is configured, so such a run
 * stops before any question instead of recording each as failed.
 */
export function resolveRunConfig(
  run: { dataset: string; data?: string; graph: string; selection: Selection },
  context: Partial<Configuration>,
  env: Env = process.env,
): RunConfig {
  const config = ensureConfiguration(context);
  const settings = modelsOf(config);
  // Without the role's own sources, a role resolves to flag, TABLEMINDS_MODEL, default.
  const base = resolveModel(
    "planner",
    { model: config.model },
    {
      ...env,
      [roleEnvVar("planner")]: undefined,
    },
  );
  const roleModels: Partial<Record<Role, string>> = {};
  for (const role of ROLES) {
    const model = resolveModel(role, settings, env).model;
    if (model !== base.model) roleModels[role] = model;
  }
  const dropped = new Set<string>([...MODEL_KEYS, ...OPERATIONAL_KEYS]);
  return {
    ...run,
    model: base.model,
    roleModels,
    endpoint: hostOf(base.baseUrl ?? OPENAI_DEFAULT_BASE_URL),
    settings: Object.fromEntries(Object.entries(config).filter(([key]) => !dropped.has(key))),
  };
}

const show = (value: unknown) => (value === undefined ? "(unset)" : JSON.stringify(value));

/** What differs from `before` to `after`, one "name: old -> new" per difference. */
export function diffRunConfigs(before: RunConfig, after: RunConfig): string[] {
  const changes: string[] = [];
  const compare = (name: string, a: unknown, b: unknown, text = show) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) changes.push(`${name}: ${text(a)} -> ${text(b)}`);
  };
  compare("dataset", before.dataset, after.dataset);
  compare("data", before.data, after.data);
  compare("graph", before.graph, after.graph);
  compare("selection", before.selection, after.selection, (s) => describeSelection(s as Selection));
  compare("model", before.model, after.model);
  for (const role of ROLES) {
    compare(`${role} model`, before.roleModels[role], after.roleModels[role]);
  }
  compare("endpoint", before.endpoint, after.endpoint);
  // A field only one side has came or went with a new version of the code, not a flag.
  const keys = Object.keys(after.settings).filter((key) => key in before.settings);
  for (const key of keys.sort()) compare(key, before.settings[key], after.settings[key]);
  return changes;
}

/** One line: graph, models, endpoint and selection, for the report and messages. */
export function describeRunConfig(config: RunConfig): string {
  const roles = Object.entries(config.roleModels).map(([role, model]) => `${role} ${model}`);
  const models = roles.length > 0 ? ` (${roles.join(", ")})` : "";
  return `graph ${config.graph}, model ${config.model}${models} at ${config.endpoint}, questions: ${describeSelection(config.selection)}`;
}
