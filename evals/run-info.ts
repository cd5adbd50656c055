import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { replaceFile } from "../storage/jsonl.js";
import { diffRunConfigs, RunConfigSchema } from "./run-config.js";
import { type Selection, SelectionSchema } from "./selection.js";

/** runs/NAME/run.json: what was run, how, and from which commit. */
export const RunInfoSchema = z.object({
  /** "run": answered by a graph here; "scored": predictions made elsewhere (`eval score --out`). */
  kind: z.enum(["run", "scored"]).default("run"),
  dataset: z.string().min(1),
  /** The dataset file or directory given with --data. */
  data: z.string().optional(),
  limit: z.number().int().positive().optional(),
  /** Which questions: all, the first n, or a stratified sample (absent in older files: --limit). */
  selection: SelectionSchema.optional(),
  graph: z.string().optional(),
  /** What the results depend on; a resumed run must have the same (absent in older files). */
  config: RunConfigSchema.optional(),
  /** Changes accepted with --allow-config-change, by the invocation that made them. */
  configChanges: z
    .array(
      z.object({
        invocation: z.number().int().positive(),
        at: z.string(),
        changes: z.array(z.string()),
      }),
    )
    .optional(),
  /** The command line of the latest invocation. */
  command: z.array(z.string()).optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  concurrency: z.number().int().positive().optional(),
  timeoutMs: z.number().int().positive().optional(),
  retries: z.number().int().nonnegative().optional(),
  questions: z.number().int().nonnegative().optional(),
  git: z.object({ commit: z.string(), dirty: z.boolean() }).nullable().optional(),
  /** The first invocation's start; resumed runs keep it. */
  started: z.string().optional(),
  updated: z.string().optional(),
  /** Set once every question has a result. */
  finished: z.string().nullable().optional(),
  invocations: z.number().int().nonnegative().optional(),
  /** Why the latest invocation stopped early (the model endpoint failing), or null. */
  stopped: z.object({ at: z.string(), reason: z.string() }).nullable().optional(),
});
export type RunInfo = z.infer<typeof RunInfoSchema>;

/** The selection a run.json records; files of older versions say only --limit. */
export function selectionOf(info: RunInfo): Selection {
  return info.selection ?? (info.limit ? { kind: "first", n: info.limit } : { kind: "all" });
}

export function runInfoFile(dir: string): string {
  return path.join(dir, "run.json");
}

/** The run.json of a directory, or null when there is none. */
export function readRunInfo(dir: string): RunInfo | null {
  const file = runInfoFile(dir);
  if (!existsSync(file)) return null;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file} is not JSON (${(error as Error).message})`);
  }
  const parsed = RunInfoSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${file} is not a run description: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Replaces run.json whole (synced temporary file + rename), so a crash never leaves half of it. */
export function writeRunInfo(dir: string, info: RunInfo): void {
  replaceFile(runInfoFile(dir), `${JSON.stringify(RunInfoSchema.parse(info), null, 2)}\n`);
}

/** The commit the code runs from, and whether the work tree differs from it; null outside git. */
export function gitState(cwd: string): { commit: string; dirty: boolean } | null {
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd, encoding: "utf8", timeout: 5_000, stdio: "pipe" }).trim();
  try {
    return { commit: git("rev-parse", "HEAD"), dirty: git("status", "--porcelain") !== "" };
  } catch {
    return null;
  }
}

export interface BeginOptions {
  /** Whether the directory already holds results (a configuration change would mix them). */
  hasResults?: boolean;
  /** Accept a configuration that differs from the results' one, and record the change. */
  allowConfigChange?: boolean;
}

/**
 * Starts (or resumes) a run in `dir`: refuses a directory that holds a run of another dataset
 * or graph, or results of another configuration (unless allowed, then the change is
 * recorded), whose results would otherwise be mixed with these; records this invocation.
 */
export function beginRun(dir: string, fresh: RunInfo, options: BeginOptions = {}): RunInfo {
  const existing = readRunInfo(dir);
  if (existing) {
    for (const key of ["kind", "dataset", "graph"] as const) {
      if (existing[key] !== undefined && existing[key] !== fresh[key]) {
        throw new Error(
          `${dir} holds a run with ${key} "${existing[key]}", not "${fresh[key]}"; ` +
            "use another --out directory",
        );
      }
    }
  }
  const now = new Date().toISOString();
  const invocations = (existing?.invocations ?? 0) + 1;
  const changes =
    existing?.config && fresh.config && options.hasResults
      ? diffRunConfigs(existing.config, fresh.config)
      : [];
  if (changes.length > 0 && !options.allowConfigChange) {
    throw new Error(
      `${dir} holds results of another configuration (${changes.join("; ")}); ` +
        "use another --out directory, or --allow-config-change to go on and record the change",
    );
  }
  const history = existing?.configChanges;
  const info: RunInfo = {
    ...fresh,
    configChanges:
      changes.length > 0
        ? [...(history ?? []), { invocation: invocations, at: now, changes }]
        : history,
    started: existing?.started ?? now,
    updated: now,
    finished: null,
    invocations,
    stopped: null,
  };
  writeRunInfo(dir, info);
  return info;
}
