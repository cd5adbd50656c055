import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { z } from "zod";
import { TableRefSchema, TableSourceSchema } from "../blackboard/schemas.js";
import { callerProblems } from "../nodes/runtime.js";
import { enterServedMode, operatorSettings } from "../settings/operator.js";
import { MEMORY_ROOT, memoryNamespace, userMemoryPrefix } from "../storage/memory/episodes.js";
import { allowedSource, assertStoredTable } from "../tables/sources.js";
import { accessFromEnv, decide } from "./access.js";

/*
 * The API server's authentication and authorization (langgraph.json's `auth.path`). Each
 * request is a user's (server/access.ts); each thread belongs to the user who made it, and no
 * one else can see, run or resume it; a run's input and context must keep to the input policy,
 * checked here first so that a refusal is an HTTP error, and again by the graph itself.
 */

enterServedMode();
const access = accessFromEnv();

const RunInputSchema = z.looseObject({
  sources: z.array(TableSourceSchema).optional(),
  tables: z.array(TableRefSchema).optional(),
});

const RunKwargsSchema = z.looseObject({
  input: z.unknown().optional(),
  webhook: z.unknown().optional(),
  context: z.record(z.string(), z.unknown()).nullish(),
  config: z.looseObject({ configurable: z.record(z.string(), z.unknown()).nullish() }).nullish(),
});

function refuse(message: string): never {
  throw new HTTPException(403, { message });
}

/** What a run (or an assistant) would be started with, checked against the input policy. */
export function checkRunSettings(kwargs: unknown): void {
  const parsed = RunKwargsSchema.safeParse(kwargs ?? {});
  if (!parsed.success) return;
  const { context, config, input, webhook } = parsed.data;
  // The server would call the URL itself: a way to reach what only it can reach.
  if (webhook) refuse("webhooks are not served");
  const problems = [
    ...callerProblems(context ?? {}),
    ...callerProblems(config?.configurable ?? {}),
  ];
  if (problems.length) refuse(`invalid run configuration: ${problems.join("; ")}`);
  const tables = RunInputSchema.safeParse(input ?? {});
  if (!tables.success) return;
  try {
    for (const source of tables.data.sources ?? []) allowedSource(source, operatorSettings());
    for (const table of tables.data.tables ?? []) assertStoredTable(table);
  } catch (error) {
    refuse((error as Error).message);
  }
}

/** The memory namespaces a user may reach through the store API: their own. */
function ownsNamespace(user: string, namespace: readonly string[] | null | undefined): boolean {
  const own = memoryNamespace(userMemoryPrefix(user)).at(-1) ?? "";
  return (
    !!namespace &&
    namespace.length > MEMORY_ROOT.length &&
    MEMORY_ROOT.every((part, i) => namespace[i] === part) &&
    (namespace[MEMORY_ROOT.length] ?? "").startsWith(own)
  );
}

export const auth = new Auth()
  .authenticate(async (request) => {
    // The development server's /internal routes wipe every user's threads.
    if (new URL(request.url).pathname.startsWith("/internal/")) refuse("not served");
    const verdict = decide(access, request.headers);
    if ("user" in verdict) return { identity: verdict.user, permissions: [] };
    throw new HTTPException(verdict.status, { message: verdict.message });
  })
  .on("threads:create", ({ value, user }) => {
    value.metadata = { ...value.metadata, owner: user.identity };
    return { owner: user.identity };
  })
  .on("threads:create_run", ({ value, user }) => {
    checkRunSettings(value.kwargs);
    // A run without a thread makes one: it is the caller's too.
    value.metadata = { ...value.metadata, owner: user.identity };
    return { owner: user.identity };
  })
  .on("threads", ({ user }) => ({ owner: user.identity }))
  .on("assistants:create", ({ value, user }) => {
    checkRunSettings({ context: value.context, config: value.config });
    value.metadata = { ...value.metadata, owner: user.identity };
    return { owner: user.identity };
  })
  .on("assistants:update", ({ value, user }) => {
    checkRunSettings({ context: value.context, config: value.config });
    return { owner: user.identity };
  })
  .on("assistants:delete", ({ user }) => ({ owner: user.identity }))
  // The graphs' own assistants are everyone's to read and run.
  .on("assistants:read", () => true)
  .on("assistants:search", () => true)
  .on("store", ({ value, user }) => {
    if (!ownsNamespace(user.identity, (value as { namespace?: string[] | null }).namespace)) {
      refuse(`the store answers only under ${[...MEMORY_ROOT, `${user.identity}/…`].join("/")}`);
    }
    return true;
  })
  .on("crons", () => refuse("scheduled runs are not served"));
