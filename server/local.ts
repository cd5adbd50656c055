import path from "node:path";
import { createEmbedServer } from "@langchain/langgraph-api/experimental/embed";
import { Hono } from "hono";
import { openPersistence } from "../graphs/persistence.js";
import { listGraphs, loadGraph, type RunnableGraph } from "../graphs/registry.js";
import { enterServedMode } from "../settings/operator.js";
import { tablemindsHome } from "../storage/artifacts.js";
import { type Access, allowedOrigins } from "./access.js";
import { app as tableRoutes } from "./app.js";
import { LocalThreads } from "./local-threads.js";
import { PAGE_PATH, pageRoutes } from "./page.js";
import { assistantRoutes, guardRoutes, type ServerVars, waitRoute } from "./routes.js";

/*
 * One machine's LangGraph API, for `tableminds ui`: every graph of langgraph.json on LangGraph's
 * embeddable server, with the checkpoints and memory in TABLEMINDS_HOME's SQLite files and the
 * threads beside them, answering on loopback only (the page and its API are one user's). A
 * team's server is `serve`, on PostgreSQL.
 */

export interface LocalServer {
  app: Hono;
  close(): Promise<void>;
}

export async function createLocalServer(): Promise<LocalServer> {
  enterServedMode();
  const persistence = await openPersistence({}, { ...process.env, TABLEMINDS_DATABASE_URL: "" });
  const { checkpointer, store } = persistence;
  if (!checkpointer) throw new Error("no checkpointer for the local server");
  const graphs: Record<string, RunnableGraph> = {};
  for (const id of Object.keys(listGraphs())) {
    graphs[id] = await loadGraph(id, { persistence: { checkpointer, store } });
  }
  const threads = new LocalThreads(path.join(tablemindsHome(), "threads.sqlite"));
  const saver = threads.saver();
  const embed = createEmbedServer({
    graph: graphs as unknown as Parameters<typeof createEmbedServer>[0]["graph"],
    threads: saver,
    checkpointer,
    store,
  });
  const access: Access = { keys: new Map(), origins: allowedOrigins(), loopback: true };
  const app = new Hono<ServerVars>();
  pageRoutes(app);
  app.get("/", (c) => c.redirect(PAGE_PATH, 307));
  guardRoutes(app, access);
  app.route("/", tableRoutes);
  const graphIds = Object.keys(graphs);
  assistantRoutes(app, graphIds);
  waitRoute(app, async (threadId) => {
    const graphId = (await saver.get(threadId))?.metadata?.graph_id;
    return typeof graphId === "string" ? graphs[graphId] : undefined;
  });
  app.route("/", embed);
  return {
    app: app as unknown as Hono,
    async close() {
      threads.close();
      await persistence.close();
    },
  };
}
