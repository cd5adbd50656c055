import { createEmbedServer } from "@langchain/langgraph-api/experimental/embed";
import { type Context, Hono, type HonoRequest } from "hono";
import { z } from "zod";
import { migrateDatabase, openPostgresStore } from "../graphs/persistence-postgres.js";
import { listGraphs, loadGraph, type RunnableGraph } from "../graphs/registry.js";
import { openPool } from "../storage/postgres.js";
import { type Access, allowedOrigins, keysOf } from "./access.js";
import { app as tableRoutes } from "./app.js";
import { checkRunSettings } from "./auth.js";
import { FencedSaver } from "./fenced-saver.js";
import { type Lease, Leases } from "./leases.js";
import { LEDGER_MIGRATIONS, Ledger, type RunStatus } from "./ledger.js";
import { pageRoutes } from "./page.js";
import { checkpointIdOf, finishedAs, startRecovery } from "./recovery.js";
import { assistantRoutes, guardRoutes, type ServerVars, waitRoute } from "./routes.js";
import { ErrorWatch, waitErrorBody } from "./run-errors.js";
import { isTransient } from "./transient.js";

/*
 * `tableminds serve`: the LangGraph API (threads, runs, streams, interrupts) for every graph of
 * langgraph.json, on LangGraph's embeddable server, with checkpoints, memory, threads and runs
 * in PostgreSQL so that any number of replicas can stand behind one load balancer. Around the
 * embedded routes: who is calling (server/access.ts), whose thread it is, the input policy, and
 * a lease on the thread (server/leases.ts) renewed for as long as a run streams, so that one
 * thread never runs on two replicas at once, and checkpoints written only under the lease's
 * current token. A replica that dies stops renewing; another finishes its runs from their last
 * checkpoints once their leases expire (server/recovery.ts).
 */

export interface ReplicaOptions {
  databaseUrl: string;
  /** This replica's name in the runs table (host:port by default). */
  replica: string;
  /** Whether the server listens on loopback only (a keyless server then serves one local user). */
  loopback: boolean;
  /** How often to look for runs a dead replica left; 0 never. */
  recoverEveryMs: number;
  /** How long a thread's lease lasts unrenewed: how soon a dead replica's runs are taken up. */
  leaseMs?: number;
  /** PostgreSQL connections this replica opens (default 40); its runs at once follow from it. */
  poolSize?: number;
  env?: NodeJS.ProcessEnv;
}

export interface Replica {
  app: Hono;
  close(): Promise<void>;
}

/** Seconds a client is told to wait (Retry-After) when this replica or its database is full. */
const RETRY_AFTER_SECONDS = 2;

/**
 * Runs at once a pool of `poolSize` connections carries: a run holds no connection between its
 * writes, but its writes, lease renewals and every other route share the pool, so a fifth of it
 * (at least two) is kept for those.
 */
export function runsFor(poolSize: number): number {
  return Math.max(1, poolSize - Math.max(2, Math.floor(poolSize / 5)));
}

/** An error that says the database cannot take more now, or cannot be reached: worth a retry. */
function databaseBusy(error: unknown): boolean {
  const message = (error as Error | undefined)?.message ?? "";
  return isTransient(error) || /timeout exceeded when trying to connect/i.test(message);
}

/** A compiled graph as LangGraph gives it: configurable with defaults for every run. */
type Durable = { withConfig(config: { durability: "sync" }): RunnableGraph };

/**
 * The one spelling of an id the routes take: a UUID in lower case with its hyphens. PostgreSQL
 * reads others (no hyphens, braces, upper case) as the same id, so any other spelling is
 * refused at the edge, before a query could match another user's row.
 */
const CANONICAL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const RunCreateSchema = z.looseObject({ assistant_id: z.string() });
const ThreadCreateSchema = z.looseObject({
  thread_id: z
    .string()
    .regex(CANONICAL_ID, "thread_id must be a UUID in lower case with its hyphens")
    .optional(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});
const ThreadSearchSchema = z.looseObject({
  metadata: z.record(z.string(), z.unknown()).nullish(),
  limit: z.number().int().positive().max(1000).optional(),
  offset: z.number().int().nonnegative().optional(),
  sort_by: z.string().optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
});
/**
 * A run's user is the one who authenticated, whatever the body says: written into the run's
 * configuration (the field nodes/runtime.ts reads, so that memory is kept per user), and the
 * request the embedded server reads replaced by the stamped one.
 */
function stampUser(request: HonoRequest, body: unknown, user: string): void {
  const run = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
  const config =
    run.config && typeof run.config === "object" ? (run.config as Record<string, unknown>) : {};
  const configurable =
    config.configurable && typeof config.configurable === "object" ? config.configurable : {};
  const stamped = {
    ...run,
    config: { ...config, configurable: { ...configurable, langgraph_auth_user_id: user } },
  };
  request.raw = new Request(request.raw.url, {
    method: request.raw.method,
    headers: request.raw.headers,
    body: JSON.stringify(stamped),
    signal: request.raw.signal,
  });
  request.bodyCache = {};
}

/** A body that fails its schema: its first problem, in one line. */
function badBody(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue?.message ?? "malformed body"}`.replace(/\s+/g, " ");
}

function refusal(error: unknown): { status: 403; message: string } | null {
  const status = (error as { status?: unknown }).status;
  return status === 403 ? { status: 403, message: (error as Error).message } : null;
}

export async function createReplica(options: ReplicaOptions): Promise<Replica> {
  const env = options.env ?? process.env;
  await migrateDatabase(options.databaseUrl, [LEDGER_MIGRATIONS]);
  const poolSize = options.poolSize ?? 40;
  const pool = openPool(options.databaseUrl, poolSize);
  const maxRuns = runsFor(poolSize);
  /** Runs started here and not yet ended (admission control). */
  let admitted = 0;
  /** A slot for one more run, with the call that gives it back (once); none when full. */
  const admit = (): (() => void) | undefined => {
    if (admitted >= maxRuns) return undefined;
    admitted++;
    let left = false;
    return () => {
      if (!left) admitted--;
      left = true;
    };
  };
  const full = (c: Context) => {
    c.header("Retry-After", String(RETRY_AFTER_SECONDS));
    return c.json(
      { detail: `this replica runs ${maxRuns} runs at once, its most; try again shortly` },
      503,
    );
  };
  const ledger = new Ledger(pool);
  const leases = new Leases(pool, { owner: options.replica, ttlMs: options.leaseMs ?? 30_000 });
  const checkpointer = new FencedSaver(pool, leases);
  const store = openPostgresStore(options.databaseUrl);
  const graphIds = Object.keys(listGraphs());
  const graphs: Record<string, RunnableGraph> = {};
  for (const id of graphIds) {
    const graph = await loadGraph(id, { persistence: { checkpointer, store } });
    // Each step's checkpoint is written before the next step starts: a replica that dies loses
    // at most the step in flight (LangGraph's default writes them behind the run).
    graphs[id] = (graph as unknown as Durable).withConfig({ durability: "sync" });
  }
  const access: Access = {
    keys: keysOf(env),
    origins: allowedOrigins(),
    loopback: options.loopback,
  };
  const embed = createEmbedServer({
    graph: graphs as unknown as Parameters<typeof createEmbedServer>[0]["graph"],
    threads: ledger.threads(),
    checkpointer,
    store,
  });
  /** Runs streaming here, by run id: their leases, released when the stream ends. */
  const inHand = new Map<string, Lease>();

  const app = new Hono<ServerVars>();
  app.onError((error, c) => {
    const refused = refusal(error);
    if (refused) return c.json({ detail: refused.message }, 403);
    if (error instanceof z.ZodError) return c.json({ detail: badBody(error) }, 422);
    if (databaseBusy(error)) {
      c.header("Retry-After", String(RETRY_AFTER_SECONDS));
      return c.json({ detail: "the database is busy or unreachable; try again shortly" }, 503);
    }
    // The operator reads what failed; a caller learns nothing of the database or the code.
    process.stderr.write(
      `serve: ${c.req.method} ${c.req.path}: ${(error as Error).stack ?? error}\n`,
    );
    return c.json({ detail: "internal error" }, 500);
  });
  pageRoutes(app);
  guardRoutes(app, access);
  app.get("/info", (c) => c.json({ replica: options.replica, graphs: graphIds }));
  app.route("/", tableRoutes);

  assistantRoutes(app, graphIds);

  // Threads belong to who made them; another user's thread is not there for them.
  app.post("/threads", async (c) => {
    const body = ThreadCreateSchema.parse(await c.req.json().catch(() => ({})));
    const id = body.thread_id ?? crypto.randomUUID();
    const existing = await ledger.thread(id);
    if (existing && existing.metadata.owner !== c.var.user) {
      return c.json({ detail: `thread ${id} exists` }, 409);
    }
    return c.json(
      await ledger.setThread(id, "put", { ...(body.metadata ?? {}), owner: c.var.user }),
    );
  });
  app.post("/threads/search", async (c) => {
    const body = ThreadSearchSchema.parse(await c.req.json().catch(() => ({})));
    const found = [];
    const search = ledger.threads().search;
    if (!search) return c.json([]);
    for await (const item of search({
      metadata: { ...(body.metadata ?? {}), owner: c.var.user },
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sortBy: body.sort_by === "updated_at" ? "updated_at" : "created_at",
      sortOrder: body.sort_order ?? "desc",
    })) {
      found.push(item.thread);
    }
    return c.json(found);
  });
  /** A thread id in its one spelling, of a thread that is this user's or no one's yet. */
  const owned = async (c: {
    req: { param(name: "thread_id"): string };
    var: { user: string };
  }): Promise<boolean> => {
    const id = c.req.param("thread_id");
    if (!CANONICAL_ID.test(id)) return false;
    const thread = await ledger.thread(id);
    return !thread || thread.metadata.owner === c.var.user;
  };
  const ownerOnly = async (
    c: Parameters<Parameters<typeof app.use>[1]>[0],
    next: () => Promise<void>,
  ) => {
    if (!(await owned(c as never))) return c.json({ detail: "Thread not found" }, 404);
    await next();
  };
  const runIdOnly = async (
    c: Parameters<Parameters<typeof app.use>[1]>[0],
    next: () => Promise<void>,
  ) => {
    if (!CANONICAL_ID.test(c.req.param("run_id") ?? ""))
      return c.json({ detail: "Run not found" }, 404);
    await next();
  };
  app.use("/threads/:thread_id/*", ownerOnly);
  app.on(["GET", "PATCH", "DELETE"], "/threads/:thread_id", ownerOnly);
  // A run's own routes (not `runs/stream` or `runs/wait`, which a wildcard would take too).
  app.on(["GET", "DELETE"], "/threads/:thread_id/runs/:run_id", runIdOnly);
  for (const route of ["cancel", "join", "stream"]) {
    app.use(`/threads/:thread_id/runs/:run_id/${route}`, runIdOnly);
  }

  // A patch must not hand the thread to someone else.
  app.patch("/threads/:thread_id", async (c, next) => {
    const body = ThreadCreateSchema.parse(await c.req.json().catch(() => ({})));
    if (body.metadata && "owner" in body.metadata) {
      return c.json({ detail: "a thread's owner cannot be changed" }, 403);
    }
    await next();
  });

  app.get("/threads/:thread_id/runs", async (c) =>
    c.json(await ledger.runsOf(c.req.param("thread_id"))),
  );
  app.get("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await ledger.run(c.req.param("run_id"));
    if (!run || run.thread_id !== c.req.param("thread_id")) {
      return c.json({ detail: "Run not found" }, 404);
    }
    return c.json(run);
  });
  /** Waits for a run to end wherever it runs, then answers the thread's values. */
  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => {
    const threadId = c.req.param("thread_id");
    const runId = c.req.param("run_id");
    const signal = c.req.raw.signal;
    for (;;) {
      const run = await ledger.run(runId);
      if (!run || run.thread_id !== threadId) return c.json({ detail: "Run not found" }, 404);
      if (run.status === "error") {
        return c.json(waitErrorBody({ error: "RunError", message: run.error ?? "the run failed" }));
      }
      if (run.status !== "running") break;
      if (signal.aborted) return c.body(null, 499 as never);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const graph = await threadGraph(threadId);
    if (!graph) return c.json({});
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    return c.json(state.values ?? {});
  });

  const threadGraph = async (threadId: string): Promise<RunnableGraph | undefined> => {
    const thread = await ledger.thread(threadId);
    const graphId = thread?.metadata.graph_id;
    return typeof graphId === "string" ? graphs[graphId] : undefined;
  };

  /*
   * A run streams while this replica holds its thread's lease; the run is in the ledger from its
   * start to its end, so that another replica can tell a run in hand from an orphan.
   */
  app.post("/threads/:thread_id/runs/stream", async (c, next) => {
    const threadId = c.req.param("thread_id");
    const body = await c.req.json().catch(() => null);
    const run = RunCreateSchema.safeParse(body);
    if (!run.success) return c.json({ detail: "a run needs an assistant_id (a graph)" }, 422);
    if (!graphIds.includes(run.data.assistant_id)) {
      return c.json(
        { detail: `no graph ${run.data.assistant_id} (graphs: ${graphIds.join(", ")})` },
        404,
      );
    }
    checkRunSettings(body);
    stampUser(c.req, body, c.var.user);
    if (!(await ledger.thread(threadId))) return c.json({ detail: "Thread not found" }, 404);
    const leave = admit();
    if (!leave) return full(c);
    const lease = await leases.claim(threadId).catch((error) => {
      leave();
      throw error;
    });
    if (!lease) {
      leave();
      return c.json({ detail: `thread ${threadId} has a run in progress` }, 409);
    }
    /** Everything the run holds, given back once, whatever way it ends. */
    const letGo = async () => {
      leave();
      await lease.release();
    };
    // In the ledger before the graph starts (under a name of our own until the embedded server
    // says the run's id), so that a replica dying at any point leaves a run to recover.
    const provisional = crypto.randomUUID();
    let recorded = false;
    try {
      await ledger.startRun({
        runId: provisional,
        threadId,
        assistantId: run.data.assistant_id,
        kwargs: {
          context: body.context ?? null,
          config: body.config ?? null,
          input: body.input ?? null,
          command: body.command ?? null,
          base: checkpointIdOf(
            await checkpointer.getTuple({
              configurable: { thread_id: threadId, checkpoint_ns: "" },
            }),
          ),
        },
        replica: options.replica,
        fence: lease.fence,
      });
      recorded = true;
      await next();
    } catch (error) {
      if (recorded) await ledger.forgetRun(provisional).catch(() => {});
      await letGo();
      throw error;
    }
    const runId = /\/runs\/([0-9a-f-]{36})$/.exec(c.res.headers.get("content-location") ?? "")?.[1];
    const stream = c.res.body;
    if (!runId || !stream || c.res.status !== 200) {
      await ledger.forgetRun(provisional).catch(() => {});
      await letGo();
      return;
    }
    try {
      await ledger.renameRun(provisional, runId);
      await leases.attach(threadId, lease.fence, runId);
    } catch (error) {
      // The run started but cannot be recorded: it is stopped, and nothing of it is kept.
      await stream.cancel().catch(() => {});
      await ledger.forgetRun(provisional).catch(() => {});
      await letGo();
      throw error;
    }
    inHand.set(runId, lease);
    const watch = new ErrorWatch();
    let ended = false;
    const end = async (status?: RunStatus) => {
      if (ended) return;
      ended = true;
      try {
        const graph = graphs[run.data.assistant_id];
        const final =
          status ?? (watch.error ? "error" : graph ? await finishedAs(graph, threadId) : "success");
        await ledger.endRun(
          runId,
          lease.fence,
          final,
          watch.error ? `${watch.error.error}: ${watch.error.message}` : undefined,
        );
      } finally {
        inHand.delete(runId);
        await letGo();
      }
    };
    const watched = stream.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          watch.feed(chunk);
          controller.enqueue(chunk);
        },
        flush: () => end(),
      }),
    );
    const reader = watched.getReader();
    c.res = new Response(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        async cancel(reason) {
          await reader.cancel(reason);
          // The client went away: the embedded route stops the run.
          await end("error");
        },
      }),
      c.res,
    );
  });

  waitRoute(app, threadGraph);

  // Routes of the embedded server that would start a run around the thread's lease and the input
  // policy: background runs and the event protocol's commands.
  const unserved = (what: string) => (c: { json: (body: unknown, status: 501) => Response }) =>
    c.json(
      { detail: `${what} are not served: use POST /threads/{id}/runs/stream or /runs/wait` },
      501,
    );
  app.post("/threads/:thread_id/runs", unserved("background runs"));
  app.post("/threads/:thread_id/commands", unserved("protocol commands"));
  app.post("/threads/:thread_id/stream/events", unserved("protocol event streams"));
  // A run on a thread of its own (deleted after it): the input policy still applies.
  // It takes a slot as a thread's run does, for as long as it streams.
  app.post("/runs/stream", async (c, next) => {
    const body = await c.req.json().catch(() => ({}));
    checkRunSettings(body);
    stampUser(c.req, body, c.var.user);
    const leave = admit();
    if (!leave) return full(c);
    try {
      await next();
    } catch (error) {
      leave();
      throw error;
    }
    const stream = c.res.body;
    if (!stream) {
      leave();
      return;
    }
    c.res = new Response(stream.pipeThrough(new TransformStream({ flush: leave })), c.res);
    // A client that goes away cancels the stream: its slot is given back too.
    c.req.raw.signal.addEventListener("abort", leave, { once: true });
  });
  app.route("/", embed);

  const recovery = startRecovery({
    leases,
    ledger,
    graphs,
    replica: options.replica,
    everyMs: options.recoverEveryMs,
    inHand: (runId) => inHand.has(runId),
  });

  return {
    app: app as unknown as Hono,
    async close() {
      await recovery.stop();
      await Promise.all([...inHand.values()].map((lease) => lease.release()));
      await leases.close();
      await store.stop();
      await pool.end();
    },
  };
}
