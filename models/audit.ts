import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { z } from "zod";
import { tablemindsHome } from "../storage/artifacts.js";
import { readJsonLines } from "../storage/jsonl.js";

/*
 * The audit log: every request body that leaves this machine for a model endpoint, with where it
 * went, when, and for which run; one JSON line per request in $TABLEMINDS_HOME/audit/<run>.jsonl,
 * appended before the request is sent (a crash loses none). Headers are never written, so no key
 * is. Calls to the embedded model send nothing; they are noted as `local` lines.
 */

export const AuditEntrySchema = z.object({
  id: z.string(),
  /** `request`: a body sent to an endpoint; `local`: a call to the embedded model, nothing sent. */
  kind: z.enum(["request", "local"]),
  time: z.string(),
  run: z.string(),
  /** The URL the body went to, or `local:<file>` for the embedded model. */
  endpoint: z.string(),
  /** The model the body names, when it names one. */
  model: z.string().nullable(),
  /** Bytes sent (UTF-8); 0 for a local call. */
  bytes: z.number().int().nonnegative(),
  /** The body as sent; null for a local call or a body that was not text. */
  body: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

const scope = new AsyncLocalStorage<string>();
let processRun: string | undefined;
let failedOnce = false;

/** Runs `fn` with every model request it makes logged under run `id`. */
export function auditRun<T>(id: string, fn: () => Promise<T>): Promise<T> {
  return scope.run(safeRunId(id), fn);
}

/** A run id as a file name: letters, digits, `.`, `_` and `-` only. */
export function safeRunId(id: string): string {
  const safe = id.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  return safe.slice(0, 120) || "run";
}

/**
 * The run a request belongs to: the scope `auditRun` set, else the LangGraph run (its
 * `run_id`, which the API server sets), else this process, which a CLI command is.
 */
export function currentAuditRun(): string {
  const scoped = scope.getStore();
  if (scoped) return scoped;
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { configurable?: Record<string, unknown> }
    | undefined;
  const graphRun = config?.configurable?.run_id;
  if (typeof graphRun === "string" && graphRun) return safeRunId(graphRun);
  processRun ??= `${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}`;
  return processRun;
}

export function auditDir(): string {
  return path.join(tablemindsHome(), "audit");
}

function append(entry: Omit<AuditEntry, "id" | "time" | "run">): void {
  const run = currentAuditRun();
  const line = `${JSON.stringify({ id: randomUUID(), time: new Date().toISOString(), run, ...entry })}\n`;
  try {
    mkdirSync(auditDir(), { recursive: true, mode: 0o700 });
    // One write per line, so lines of concurrent requests never interleave.
    appendFileSync(path.join(auditDir(), `${run}.jsonl`), line, { mode: 0o600 });
  } catch (error) {
    if (failedOnce) return;
    failedOnce = true;
    process.emitWarning(
      `the audit log in ${auditDir()} cannot be written (${(error as Error).message}); requests go on unlogged`,
      "TablemindsWarning",
    );
  }
}

function modelOf(body: string | null): string | null {
  if (!body) return null;
  const named = /"model"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(body)?.[1];
  return named === undefined ? null : named;
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  const url = input instanceof Request ? input.url : String(input);
  try {
    // Credentials in a URL are not for the log.
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Logs a request about to be sent: its URL and body, never its headers. */
export function recordRequest(input: Parameters<typeof fetch>[0], init?: RequestInit): void {
  const raw = init?.body;
  const body =
    typeof raw === "string"
      ? raw
      : raw instanceof Uint8Array
        ? Buffer.from(raw).toString("utf8")
        : null;
  append({
    kind: "request",
    endpoint: urlOf(input),
    model: modelOf(body),
    bytes: body === null ? 0 : Buffer.byteLength(body),
    body,
  });
}

/** Notes a call answered by the embedded model: nothing left the machine. */
export function recordLocalCall(model: string, file: string): void {
  append({ kind: "local", endpoint: `local:${file}`, model, bytes: 0, body: null });
}

export interface AuditRunSummary {
  run: string;
  file: string;
  first: string | null;
  last: string | null;
  requests: number;
  localCalls: number;
  bytes: number;
  endpoints: string[];
}

/** The entries of one run, in the order they were written (a line cut by a crash is skipped). */
export function readAuditRun(run: string): AuditEntry[] {
  const file = path.join(auditDir(), `${safeRunId(run)}.jsonl`);
  return readJsonLines(file, AuditEntrySchema).records;
}

/** Every run the audit log holds, oldest first. */
export function listAuditRuns(): AuditRunSummary[] {
  let names: string[];
  try {
    names = readdirSync(auditDir()).filter((name) => name.endsWith(".jsonl"));
  } catch {
    return [];
  }
  const runs = names.map((name) => {
    const run = name.slice(0, -".jsonl".length);
    const entries = readAuditRun(run);
    const requests = entries.filter((e) => e.kind === "request");
    return {
      run,
      file: path.join(auditDir(), name),
      first: entries[0]?.time ?? null,
      last: entries.at(-1)?.time ?? null,
      requests: requests.length,
      localCalls: entries.length - requests.length,
      bytes: requests.reduce((sum, e) => sum + e.bytes, 0),
      endpoints: [...new Set(entries.map((e) => e.endpoint))],
    };
  });
  const started = (r: AuditRunSummary) =>
    r.first ?? new Date(statSync(r.file).mtimeMs).toISOString();
  return runs.sort((a, b) => started(a).localeCompare(started(b)));
}
