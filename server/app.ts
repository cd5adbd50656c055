import { getConfigTypeSchema } from "@langchain/langgraph/zod/schema";
import { Hono } from "hono";
import { z } from "zod";
import { loadGraph } from "../graphs/registry.js";
import { servedFigure } from "../sandbox/figures.js";
import { enterServedMode } from "../settings/operator.js";
import { storeUpload, UploadError, uploadLimitBytes } from "../tables/sources.js";

/*
 * Routes the LangGraph API server (`langgraphjs dev`, Studio's backend) takes from langgraph.json's
 * `http.app`, ahead of its own. The server reads a graph's schemas in tiers; for a graph built on
 * `StateSchema` its first tier answers alone and leaves the context schema out ("StateSchema
 * doesn't have config schema support yet", @langchain/langgraph-api 1.5), so Studio would draw
 * no configuration form. Here the server answers first and the missing schema is added, as
 * LangGraph's own `getConfigTypeSchema` reads it from the graph: our fields, defaults and
 * descriptions. A server that sends it itself is left alone.
 */

const SchemasReply = z.looseObject({
  graph_id: z.string(),
  config_schema: z.unknown().optional(),
  context_schema: z.unknown().optional(),
});

/** The context schema of a graph of langgraph.json, as JSON Schema; null when it has none. */
export async function contextSchemaOf(graphId: string): Promise<unknown> {
  const graph = await loadGraph(graphId);
  return getConfigTypeSchema(graph as Parameters<typeof getConfigTypeSchema>[0]) ?? null;
}

enterServedMode();

export const app = new Hono();

/*
 * A table file into the artifact store: the body is the file's bytes, `?name=` its file name
 * (the extension says the format). The answer is the source a run names it by. The limit is
 * checked on the declared length first and on the bytes as they arrive.
 */
app.post("/tables", async (c) => {
  const name = c.req.query("name") ?? "";
  const limit = uploadLimitBytes();
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > limit)
    return c.json({ detail: `${name}: larger than ${limit / 1024 / 1024} MB` }, 413);
  if (!name) return c.json({ detail: "name the file: POST /tables?name=<file name>" }, 400);
  const body = c.req.raw.body;
  if (!body) return c.json({ detail: `${name}: the file is empty` }, 400);
  try {
    return c.json({ source: await storeUpload(body, name, limit) }, 201);
  } catch (error) {
    if (error instanceof UploadError) return c.json({ detail: error.message }, error.status);
    throw error;
  }
});

/*
 * A figure a run drew (docs/charts.md): `/artifacts/<sha256>.png|svg`, as the state names it
 * (`attempts[].result.figures[].files[].uri`). Figures only, never a table; the name is the
 * content's hash, which only the thread that holds it knows.
 */
app.get("/artifacts/:name", async (c) => {
  const figure = await servedFigure(c.req.param("name"));
  if (!figure) return c.json({ detail: "no such figure" }, 404);
  return c.body(new Uint8Array(figure.bytes), 200, figure.headers);
});

app.get("/assistants/:assistant_id/schemas", async (c, next) => {
  await next();
  if (c.res.status !== 200) return;
  const reply = SchemasReply.safeParse(await c.res.clone().json());
  if (!reply.success || reply.data.context_schema) return;
  const context = await contextSchemaOf(reply.data.graph_id).catch(() => null);
  if (!context) return;
  c.res = Response.json({ ...reply.data, config_schema: context, context_schema: context });
});
