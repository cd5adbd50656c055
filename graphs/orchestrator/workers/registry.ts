import { readdir, stat } from "node:fs/promises";
import { register } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Configuration } from "../../../settings/configuration.js";
import { workerFolders } from "../../../settings/operator.js";
import { WorkCache } from "../../../storage/bounded-cache.js";
import { type Worker, WorkerDeclarationSchema } from "./contract.js";

/*
 * Finds the workers: every module in `builtin/`, then in the folders the configuration
 * (`workersDir`) and TABLEMINDS_WORKERS name. Adding a worker is adding a file; nothing else
 * is edited.
 */

const BUILTIN_DIR = fileURLToPath(new URL("./builtin/", import.meta.url));
const MODULE = /^[^._].*\.(ts|mts|js|mjs)$/;
const NOT_A_WORKER = /\.(d|test|spec)\.[^.]+$/;

/** A worker file that cannot be used; the message names the file. */
export class WorkerRegistryError extends Error {
  override name = "WorkerRegistryError";
}

/** The folders searched for workers, built-ins first. */
export function workerDirs(config: Pick<Configuration, "workersDir">): string[] {
  const extra = [config.workersDir, ...workerFolders()].filter((dir): dir is string =>
    Boolean(dir),
  );
  return [BUILTIN_DIR, ...new Set(extra.map((dir) => path.resolve(dir)))];
}

async function moduleFiles(dir: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(dir);
  } catch {
    throw new WorkerRegistryError(`${dir}: the workers folder does not exist`);
  }
  if (!info.isDirectory()) throw new WorkerRegistryError(`${dir}: the workers folder is a file`);
  const names = await readdir(dir);
  return names
    .filter((name) => MODULE.test(name) && !NOT_A_WORKER.test(name))
    .sort()
    .map((name) => path.join(dir, name));
}

/** The specifier a worker file imports the contract by. */
export const CONTRACT = "tableminds/workers";

/** tsx's own TypeScript transform: a checkout has it, the npm package does not. */
const CHECKOUT_TRANSFORM = "esbuild";

/** esbuild, where installed. */
function esbuildUrl(): string | undefined {
  try {
    return import.meta.resolve(CHECKOUT_TRANSFORM);
  } catch {
    return undefined;
  }
}

const hooked = new Set<string>();

/**
 * Module hooks for the workers of `dir`. `tableminds/workers` resolves to the contract module
 * this runtime itself loaded (its sources through tsx, its checkout build, or the package's
 * dist), so a worker works from a clone with no build and no install and shares the runtime's
 * module rather than a second copy. A `.ts` or `.mts` file there is TypeScript in an ES module,
 * whatever the folder's package.json says (or without one), when esbuild is at hand to strip its
 * types: so it loads whether or not the running CLI registered a loader (the checkout build
 * registers none).
 */
function hookWorkersOf(dir: string): void {
  if (hooked.has(dir)) return;
  hooked.add(dir);
  const own = new URL(import.meta.url);
  const contract = new URL(`./contract${path.extname(own.pathname)}`, own).href;
  const folder = pathToFileURL(`${dir}${path.sep}`).href;
  const esbuild = esbuildUrl();
  const hook = `export async function resolve(specifier, context, next) {
  return specifier === ${JSON.stringify(CONTRACT)}
    ? { url: ${JSON.stringify(contract)}, shortCircuit: true }
    : next(specifier, context);
}
export async function load(url, context, next) {
  if (${JSON.stringify(esbuild ?? "")} === "" || !url.startsWith(${JSON.stringify(folder)}) || !/\\.m?ts$/.test(url)) {
    return next(url, context);
  }
  const { readFile } = await import("node:fs/promises");
  const { transform } = await import(${JSON.stringify(esbuild ?? "")});
  const text = await readFile(new URL(url), "utf8");
  const { code } = await transform(text, { loader: "ts", format: "esm", sourcefile: url });
  return { format: "module", source: code, shortCircuit: true };
}`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
}

async function workerOf(file: string): Promise<Worker> {
  let loaded: Record<string, unknown>;
  if (!file.startsWith(BUILTIN_DIR)) hookWorkersOf(path.dirname(file));
  try {
    loaded = await import(pathToFileURL(file).href);
  } catch (error) {
    throw new WorkerRegistryError(`${file}: could not be loaded: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const declared = loaded.default ?? loaded.worker;
  if (declared === undefined) {
    throw new WorkerRegistryError(
      `${file}: exports no worker (export default defineWorker({...}), or export const worker)`,
    );
  }
  const parsed = WorkerDeclarationSchema.safeParse(declared);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "it"}: ${i.message}`);
    throw new WorkerRegistryError(`${file}: not a worker: ${problems.join("; ")}`);
  }
  if (!("task" in parsed.data.input.shape)) {
    throw new WorkerRegistryError(`${file}: its input schema has no \`task\` field`);
  }
  return declared as Worker;
}

const registries = new WorkCache<ReadonlyMap<string, Worker>>(Number.POSITIVE_INFINITY);

/** The workers in `dirs`, by name; a name declared twice is an error naming both files. */
export function loadWorkers(dirs: string[]): Promise<ReadonlyMap<string, Worker>> {
  return registries.obtain(dirs.join("\0"), () => collect(dirs));
}

async function collect(dirs: string[]): Promise<ReadonlyMap<string, Worker>> {
  const workers = new Map<string, Worker>();
  const origin = new Map<string, string>();
  for (const dir of dirs) {
    for (const file of await moduleFiles(dir)) {
      const worker = await workerOf(file);
      const first = origin.get(worker.name);
      if (first) {
        throw new WorkerRegistryError(
          `${file}: a worker named "${worker.name}" is already declared in ${first}`,
        );
      }
      origin.set(worker.name, file);
      workers.set(worker.name, worker);
    }
  }
  return workers;
}
