import type { Env, Hono } from "hono";
import type { RunnableGraph } from "../graphs/registry.js";
import { type Access, decide } from "./access.js";
import { contextSchemaOf } from "./app.js";
import { ErrorWatch, waitErrorBody } from "./run-errors.js";

/*
 * The routes every tableminds API server adds around LangGraph's embeddable server: the graphs'
 * own assistants, and `runs/wait`, which the embeddable server does not serve, made from the
 * run's stream.
 */

/** A server's variables: the user its guard found for the request. */
export type ServerVars = { Variables: { user: string } };

/** `/ok` for anyone (health checks), then every other route only for a caller `access` admits. */
export function guardRoutes(app: Hono<ServerVars>, access: Access): void {
  app.get("/ok", (c) => c.json({ ok: true }));
  app.use("*", async (c, next) => {
    const verdict = decide(access, c.req.raw.headers);
    if (!("user" in verdict)) return c.json({ detail: verdict.message }, verdict.status);
    c.set("user", verdict.user);
    await next();
  });
}

/** How often a `runs/wait` reply says it is still there while the run goes on. */
const WAIT_HEARTBEAT_MS = 10_000;

/** The graphs' own assistants: one per graph, named as the graph. */
function assistantOf(graphId: string) {
  const epoch = new Date(0).toISOString();
  return {
    assistant_id: graphId,
    graph_id: graphId,
    name: graphId,
    config: {},
    context: {},
    metadata: { created_by: "system" },
    version: 1,
    created_at: epoch,
    updated_at: epoch,
  };
}

export function assistantRoutes<E extends Env>(app: Hono<E>, graphIds: readonly string[]): void {
  app.post("/assistants/search", (c) => c.json(graphIds.map(assistantOf)));
  app.get("/assistants/:assistant_id", (c) => {
    const id = c.req.param("assistant_id");
    return graphIds.includes(id)
      ? c.json(assistantOf(id))
      : c.json({ detail: `no graph ${id}` }, 404);
  });
  app.get("/assistants/:assistant_id/schemas", async (c) => {
    const id = c.req.param("assistant_id");
    if (!graphIds.includes(id)) return c.json({ detail: `no graph ${id}` }, 404);
    const context = await contextSchemaOf(id);
    return c.json({ graph_id: id, config_schema: context, context_schema: context });
  });
}

export function waitRoute<E extends Env>(
  app: Hono<E>,
  threadGraph: (threadId: string) => Promise<RunnableGraph | undefined>,
): void {
  /**
   * A run to its end, answered with the thread's values (the stream, drained here), or with
   * `__error__` when it failed. The headers go first, with the run's id in Content-Location as
   * LangGraph sends it: a client whose connection drops still knows which run to join.
   */
  app.post("/threads/:thread_id/runs/wait", async (c) => {
    const threadId = c.req.param("thread_id");
    const url = new URL(c.req.url);
    url.pathname = `/threads/${threadId}/runs/stream`;
    const response = await app.fetch(
      new Request(url, { method: "POST", headers: c.req.raw.headers, body: await c.req.text() }),
    );
    const stream = response.body;
    if (response.status !== 200 || !stream) return response;
    const headers = new Headers({ "content-type": "application/json" });
    const location = response.headers.get("content-location");
    if (location) headers.set("content-location", location);
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        // Leading whitespace is valid JSON: it sends the headers now and keeps proxies from
        // closing a quiet connection while the run goes on.
        const beat = () => controller.enqueue(encoder.encode("\n"));
        beat();
        const heartbeat = setInterval(beat, WAIT_HEARTBEAT_MS);
        const watch = new ErrorWatch();
        try {
          for await (const chunk of stream) watch.feed(chunk);
        } finally {
          clearInterval(heartbeat);
        }
        let answer: unknown = {};
        if (watch.error) answer = waitErrorBody(watch.error);
        else {
          const graph = await threadGraph(threadId);
          if (graph) {
            answer = (await graph.getState({ configurable: { thread_id: threadId } })).values ?? {};
          }
        }
        controller.enqueue(encoder.encode(JSON.stringify(answer)));
        controller.close();
      },
      async cancel(reason) {
        await stream.cancel(reason);
      },
    });
    return new Response(body, { status: 200, headers });
  });
}
