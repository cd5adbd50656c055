import { getConfigTypeSchema } from "@langchain/langgraph/zod/schema";
import { Hono } from "hono";
import { z } from "zod";
import { loadGraph } from "./registry.js";

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

export const app = new Hono();

app.get("/assistants/:assistant_id/schemas", async (c, next) => {
  await next();
  if (c.res.status !== 200) return;
  const reply = SchemasReply.safeParse(await c.res.clone().json());
  if (!reply.success || reply.data.context_schema) return;
  const context = await contextSchemaOf(reply.data.graph_id).catch(() => null);
  if (!context) return;
  c.res = Response.json({ ...reply.data, config_schema: context, context_schema: context });
});
