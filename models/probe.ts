import { z } from "zod";
import { callModel } from "./chat.js";
import {
  type Env,
  ModelConfigError,
  OPENAI_DEFAULT_BASE_URL,
  type ResolvedModel,
  ROLES,
  type Role,
  resolveModel,
} from "./config.js";
import { describeCause, EmptyReplyError, ModelCallError } from "./errors.js";
import { LOCAL_CATALOG, LOCAL_PREFIX } from "./local-spec.js";

/** Each request of a probe gives up after this long; the requests run side by side. */
export const PROBE_TIMEOUT_MS = 10_000;
/** Loading an embedded model reads its whole file: a 1 GB model takes seconds on a busy disk. */
export const LOCAL_PROBE_TIMEOUT_MS = 120_000;

/** A model the roles use, and which roles use it. */
export interface ModelUse {
  model: string;
  roles: Role[];
}

/** An embedded GGUF model the roles use, and whether llama.cpp loads it. */
export type LocalModelProbe = {
  /** The catalog name (the default model's) or the spec's own target. */
  name: string;
  file: string;
  roles: Role[];
} & ({ ok: true; loadMs: number } | { ok: false; problem: string });

export type EndpointProbe = {
  /**
   * The endpoint, without credentials, query or fragment; undefined when none is configured,
   * or when every role runs on an embedded model.
   */
  baseUrl?: string;
  /** The models the roles ask of the endpoint (none when every role runs embedded). */
  models: ModelUse[];
  /**
   * The embedded models the other roles run (`local`, or no endpoint and the default installed).
   * When every role runs embedded, ok and problem are theirs; else the endpoint's alone.
   */
  local?: LocalModelProbe[];
  /** What GET /models listed (undefined when it failed: a note, not a failure). */
  listed?: string[];
  /** Why GET /models failed, when it did. */
  listProblem?: string;
} & ({ ok: true; completionMs?: number } | { ok: false; problem: string });

const ModelList = z.looseObject({ data: z.array(z.looseObject({ id: z.string() })) });

/** A URL fit to print: no user, password, query or fragment. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "(not a URL)";
  }
}

const firstLine = (text: string) => text.split("\n")[0]?.trim() ?? "";

/**
 * Checks that the configured endpoint works: lists its models and asks each model the roles
 * use for a tiny completion (at most 16 tokens, no retries), all within `timeoutMs`.
 */
export async function probeEndpoint(
  env: Env = process.env,
  timeoutMs: number = PROBE_TIMEOUT_MS,
): Promise<EndpointProbe> {
  let resolved: Map<Role, ResolvedModel>;
  try {
    resolved = new Map(ROLES.map((role) => [role, resolveModel(role, {}, env)]));
  } catch (error) {
    if (!(error instanceof ModelConfigError)) throw error;
    return { models: [], ok: false, problem: firstLine(error.message) };
  }
  const remote = new Map([...resolved].filter(([, r]) => r.local === undefined));
  const locals = probeLocalModels(resolved);
  const first = remote.values().next().value;
  if (first === undefined) {
    const local = await locals;
    const failed = local.find((l) => !l.ok);
    return failed && !failed.ok
      ? { models: [], local, ok: false, problem: failed.problem }
      : { models: [], local, ok: true };
  }
  // With roles on both, ok and problem are the endpoint's; each embedded model says its own.
  const [probed, local] = await Promise.all([probeRemote(remote, first, timeoutMs), locals]);
  return local.length === 0 ? probed : { ...probed, local };
}

/** The endpoint part of a probe: the roles that ask it, all asking `first`'s endpoint. */
async function probeRemote(
  resolved: Map<Role, ResolvedModel>,
  first: ResolvedModel,
  timeoutMs: number,
): Promise<EndpointProbe> {
  const baseUrl = first.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const models = modelUses(resolved);
  const [list, completion] = await Promise.all([
    listModels(baseUrl, first.apiKey, timeoutMs),
    tryCompletions(models, first, timeoutMs),
  ]);
  const shown = { baseUrl: displayUrl(baseUrl), models, ...list };
  if (completion.ok) return { ...shown, ...completion };
  const missing = list.listed
    ? models.map((m) => m.model).filter((m) => !list.listed?.includes(m))
    : [];
  const hint =
    missing.length > 0 && list.listed
      ? `; the server lists ${list.listed.length ? list.listed.slice(0, 5).join(", ") : "no models"}`
      : "";
  return { ...shown, ok: false, problem: `${completion.problem}${hint}` };
}

/**
 * Loads each embedded model the roles run, once per file, within LOCAL_PROBE_TIMEOUT_MS: a load
 * proves the file whole and llama.cpp's binary usable here, without generating.
 */
async function probeLocalModels(resolved: Map<Role, ResolvedModel>): Promise<LocalModelProbe[]> {
  const files = new Map<string, { name: string; contextSize: number; roles: Role[] }>();
  for (const [role, { local }] of resolved) {
    if (!local) continue;
    const target = local.spec === LOCAL_PREFIX ? "" : local.spec.slice(LOCAL_PREFIX.length + 1);
    const known = LOCAL_CATALOG.find((m) => local.path.endsWith(`/${m.file}`));
    const use = files.get(local.path) ?? {
      name: known?.name ?? (target.trim() || local.path),
      contextSize: local.contextSize,
      roles: [],
    };
    use.roles.push(role);
    files.set(local.path, use);
  }
  if (files.size === 0) return [];
  const { loadLocalModel } = await import("./local-runtime.js");
  return Promise.all(
    [...files].map(async ([file, { name, contextSize, roles }]): Promise<LocalModelProbe> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`it did not load within ${LOCAL_PROBE_TIMEOUT_MS / 1000} s`)),
          LOCAL_PROBE_TIMEOUT_MS,
        );
        timer.unref();
      });
      try {
        const runtime = await Promise.race([loadLocalModel(file, contextSize), late]);
        return { name, file, roles, ok: true, loadMs: runtime.loadMs };
      } catch (error) {
        const problem = firstLine(error instanceof Error ? error.message : String(error));
        return { name, file, roles, ok: false, problem };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

function modelUses(resolved: Map<Role, ResolvedModel>): ModelUse[] {
  const uses = new Map<string, Role[]>();
  for (const [role, { model }] of resolved) uses.set(model, [...(uses.get(model) ?? []), role]);
  return [...uses].map(([model, roles]) => ({ model, roles }));
}

async function listModels(
  baseUrl: string,
  apiKey: string,
  timeoutMs: number,
): Promise<{ listed?: string[]; listProblem?: string }> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/$/, "")}/models`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    if (!response.ok) {
      return { listProblem: `GET /models answered ${response.status}: ${quote(body)}` };
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const parsed = ModelList.safeParse(json);
    if (!parsed.success) {
      return { listProblem: `GET /models did not return an OpenAI model list: ${quote(body)}` };
    }
    return { listed: parsed.data.data.map((m) => m.id) };
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError") {
      return { listProblem: `GET /models timed out after ${timeoutMs} ms` };
    }
    return { listProblem: `GET /models failed: ${describeCause(error, timeoutMs)}` };
  }
}

function quote(body: string): string {
  const head = body.replace(/\s+/g, " ").trim();
  return JSON.stringify(head.length > 120 ? `${head.slice(0, 120)}...` : head);
}

async function tryCompletions(
  models: ModelUse[],
  endpoint: ResolvedModel,
  timeoutMs: number,
): Promise<{ ok: true; completionMs: number } | { ok: false; problem: string }> {
  const results = await Promise.all(
    models.map(async ({ model, roles }) => {
      const started = performance.now();
      try {
        await callModel(
          roles[0] as Role,
          [{ role: "user", content: "Reply with the single word OK." }],
          {
            model,
            baseUrl: endpoint.baseUrl,
            apiKey: endpoint.apiKey,
            timeoutMs,
            maxRetries: 0,
            maxTokens: 16,
          },
          // An empty name turns the replay cache off: the probe must reach the server.
          { replayCache: "" },
        );
      } catch (error) {
        // A model that says nothing in 16 tokens (one that reasons first) still answered.
        if (!(error instanceof ModelCallError && error.cause instanceof EmptyReplyError)) {
          return { ok: false as const, problem: describeFailure(error, model) };
        }
      }
      return { ok: true as const, completionMs: performance.now() - started };
    }),
  );
  const failed = results.find((r) => !r.ok);
  if (failed) return failed;
  return { ok: true, completionMs: Math.max(...results.map((r) => (r.ok ? r.completionMs : 0))) };
}

/** The reason of a failed completion, without the role and URL shown beside it. */
function describeFailure(error: unknown, model: string): string {
  const reason = error instanceof ModelCallError ? error.reason : String(error);
  return `a test completion with model "${model}" failed: ${firstLine(reason)}`;
}
