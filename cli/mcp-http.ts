import { randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { type Access, decide } from "../server/access.js";
import { enterServedMode } from "../settings/operator.js";
import { uploadLimitBytes } from "../tables/sources.js";
import type { GraphShelf } from "./mcp-ask.js";
import { createMcpServer } from "./mcp-server.js";

/*
 * The MCP tools over streamable HTTP (`tableminds mcp --http`), at /mcp. Served mode: tables
 * only inline or under TABLEMINDS_TABLE_ROOTS, and every request is a user's by the API
 * server's access rules (server/access.ts: the same keys, the same loopback and origin rules).
 * Each session is its user's: a session id presented with another user's key is not found.
 */

export interface McpHttpOptions {
  access: Access;
  graphs: GraphShelf;
  /** A session with no request for this long is closed (default one hour). */
  idleMs?: number;
}

export interface McpHttp {
  app: Hono<Vars>;
  /** Closes every session (the HTTP listener is the caller's). */
  close(): Promise<void>;
}

type Vars = { Variables: { user: string } };

interface Session {
  user: string;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  seen: number;
}

const SESSION_HEADER = "mcp-session-id";

/** A refusal as the SDK's own transport words them: a JSON-RPC error with no id. */
function rpcError(c: Context, status: 400 | 401 | 403 | 404 | 405, message: string) {
  if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="tableminds"');
  return c.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, status);
}

export function createMcpHttpApp(options: McpHttpOptions): McpHttp {
  enterServedMode();
  const limit = uploadLimitBytes();
  const idleMs = options.idleMs ?? 3_600_000;
  const open = new Map<string, Session>();

  const drop = async (id: string) => {
    const session = open.get(id);
    open.delete(id);
    await session?.server.close().catch(() => {});
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of open) if (now - session.seen > idleMs) void drop(id);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  const app = new Hono<Vars>();
  app.use("/mcp", async (c, next) => {
    const verdict = decide(options.access, c.req.raw.headers);
    if (!("user" in verdict)) return rpcError(c, verdict.status, verdict.message);
    c.set("user", verdict.user);
    await next();
  });
  app.use(
    "/mcp",
    bodyLimit({
      maxSize: limit,
      onError: (c) => c.json({ error: `request larger than ${limit / 1024 / 1024} MB` }, 413),
    }),
  );

  app.all("/mcp", async (c) => {
    const user = c.var.user;
    const id = c.req.header(SESSION_HEADER);
    if (id) {
      const session = open.get(id);
      if (!session || session.user !== user) return rpcError(c, 404, "Session not found");
      session.seen = Date.now();
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST") return rpcError(c, 405, "no session: POST initialize first");
    const body: unknown = await c.req.json().catch(() => undefined);
    if (!isInitializeRequest(body)) {
      return rpcError(c, 400, `no session: send initialize first (without a ${SESSION_HEADER})`);
    }
    const server = createMcpServer({ graphs: options.graphs, user });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: limit,
      onsessioninitialized: (sessionId) => {
        open.set(sessionId, { user, server, transport, seen: Date.now() });
      },
      // A DELETE from the client: the transport closes itself after this.
      onsessionclosed: (sessionId) => {
        open.delete(sessionId);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) open.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(c.req.raw, { parsedBody: body });
  });

  return {
    app,
    async close() {
      clearInterval(sweep);
      await Promise.all([...open.keys()].map(drop));
    },
  };
}
