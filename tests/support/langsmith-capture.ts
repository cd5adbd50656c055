import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface CapturedRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface CaptureServer {
  /** For LANGSMITH_ENDPOINT or the client's apiUrl. */
  url: string;
  requests: CapturedRequest[];
  close(): Promise<void>;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        resolve(text ? JSON.parse(text) : null);
      } catch {
        resolve(text);
      }
    });
  });
}

/**
 * A stand-in for the LangSmith API on 127.0.0.1: it records every request and answers with
 * just enough for the client to go on (datasets and sessions get ids; lists start empty).
 * It closes itself after `idleMs` without a request.
 */
export async function startLangSmithCapture(idleMs = 60_000): Promise<CaptureServer> {
  const requests: CapturedRequest[] = [];
  let idle: NodeJS.Timeout | undefined;
  const server = createServer(async (req, res) => {
    clearTimeout(idle);
    idle = setTimeout(() => server.close(), idleMs);
    idle.unref();
    const url = new URL(req.url ?? "/", "http://capture");
    const body = await readJson(req);
    requests.push({ method: req.method ?? "GET", path: url.pathname, body });
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const record = (typeof body === "object" && body !== null ? body : {}) as Record<
      string,
      unknown
    >;
    const now = new Date().toISOString();
    if (req.method === "GET" && (url.pathname === "/datasets" || url.pathname === "/examples"))
      return send(200, []);
    if (req.method === "POST" && url.pathname === "/datasets")
      return send(200, { id: randomUUID(), created_at: now, ...record });
    if (req.method === "POST" && url.pathname === "/examples/bulk")
      return send(200, Array.isArray(body) ? body : []);
    if (req.method === "POST" && url.pathname === "/sessions")
      return send(200, { id: randomUUID(), start_time: now, ...record });
    if (req.method === "POST" && url.pathname === "/feedback")
      return send(200, { id: randomUUID(), ...record });
    if (req.method === "GET" && url.pathname === "/info") {
      return send(200, {
        version: "capture",
        instance_flags: { dataset_examples_multipart_enabled: true },
      });
    }
    // Examples are uploaded as multipart form data, one part per example id (and its inputs/outputs).
    if (
      req.method === "POST" &&
      /\/datasets\/[^/]+\/examples$/.test(url.pathname) &&
      typeof body === "string"
    ) {
      const ids = [...new Set([...body.matchAll(/\bname="([^".]+)"/g)].map((m) => m[1]))];
      return send(200, { example_ids: ids, count: ids.length });
    }
    const example = /^\/examples\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && example) {
      return send(200, {
        id: example[1],
        dataset_id: "capture",
        inputs: {},
        outputs: {},
        created_at: now,
      });
    }
    return send(200, {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  idle = setTimeout(() => server.close(), idleMs);
  idle.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        clearTimeout(idle);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
