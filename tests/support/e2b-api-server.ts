/**
 * A local stand-in for E2B's service, enough for the `e2b` SDK (2.51) to create, list,
 * extend and kill sandboxes (REST: POST /v2/sandboxes, GET /v2/sandboxes, POST
 * /sandboxes/{id}/timeout, DELETE /sandboxes/{id}) and to use one through envd (GET/POST
 * /files, multipart or gzip octet-stream; process.Process/Start over Connect's JSON
 * streaming). Commands run with /bin/bash in a temporary directory per sandbox. Listens on
 * 127.0.0.1 (a free port) and closes itself after `lifetimeMs`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";

export interface ApiSandbox {
  id: string;
  template: string;
  metadata: Record<string, string>;
  timeoutSeconds: number[];
  alive: boolean;
  root: string;
}

export interface ApiCall {
  method: string;
  path: string;
  /** The X-API-KEY header, for the REST calls. */
  apiKey?: string;
  gzip?: boolean;
}

const CreateBody = z.object({
  templateID: z.string(),
  metadata: z.record(z.string(), z.string()).optional(),
  timeout: z.number().optional(),
});
const StartBody = z.object({
  process: z.object({
    cmd: z.string(),
    args: z.array(z.string()).default([]),
    envs: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
  }),
});

function envelope(flags: number, message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

export class E2BApiServer {
  readonly sandboxes = new Map<string, ApiSandbox>();
  readonly calls: ApiCall[] = [];
  private readonly base = mkdtempSync(path.join(os.tmpdir(), "tableminds-e2b-api-"));
  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch((error: unknown) => json(res, 500, { message: String(error) }));
  });
  private stopTimer: NodeJS.Timeout | undefined;
  url = "";

  /** Starts listening; the server stops on its own after `lifetimeMs`. */
  async start(lifetimeMs = 60_000): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    this.stopTimer = setTimeout(() => void this.stop(), lifetimeMs);
    this.stopTimer.unref();
    return this;
  }

  async stop(): Promise<void> {
    clearTimeout(this.stopTimer);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.base, { recursive: true, force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const key = req.headers["x-api-key"];
    this.calls.push({
      method: req.method ?? "",
      path: url.pathname,
      apiKey: typeof key === "string" ? key : undefined,
      gzip: req.headers["content-encoding"] === "gzip" || undefined,
    });
    const route = `${req.method} ${url.pathname}`;
    if (route === "POST /v2/sandboxes") return this.create(req, res);
    if (route === "GET /v2/sandboxes") return this.list(url, res);
    let match = /^\/sandboxes\/([^/]+)$/.exec(url.pathname);
    if (match && req.method === "DELETE") {
      const sandbox = this.sandboxes.get(decodeURIComponent(match[1] ?? ""));
      if (!sandbox?.alive) return json(res, 404, { code: 404, message: "sandbox not found" });
      sandbox.alive = false;
      res.writeHead(204).end();
      return;
    }
    match = /^\/sandboxes\/([^/]+)\/timeout$/.exec(url.pathname);
    if (match && req.method === "POST") {
      const sandbox = this.sandboxes.get(decodeURIComponent(match[1] ?? ""));
      if (!sandbox?.alive) return json(res, 404, { code: 404, message: "sandbox not found" });
      const parsed = z
        .object({ timeout: z.number() })
        .parse(JSON.parse((await body(req)).toString()));
      sandbox.timeoutSeconds.push(parsed.timeout);
      res.writeHead(204).end();
      return;
    }
    // envd: every request names its sandbox in a header (the SDK's sandboxUrl mode).
    const sandbox = this.sandboxes.get(String(req.headers["e2b-sandbox-id"] ?? ""));
    if (url.pathname === "/health") {
      res.writeHead(204).end();
      return;
    }
    if (!sandbox?.alive) return json(res, 502, { code: 502, message: "sandbox not running" });
    if (url.pathname === "/files" && req.method === "POST")
      return this.write(sandbox, url, req, res);
    if (url.pathname === "/files" && req.method === "GET") return this.read(sandbox, url, req, res);
    if (url.pathname === "/process.Process/Start") return this.start_(sandbox, req, res);
    json(res, 404, { code: 404, message: `no route ${route}` });
  }

  private async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = CreateBody.parse(JSON.parse((await body(req)).toString()));
    const id = `local-${this.sandboxes.size}`;
    const root = path.join(this.base, id);
    await mkdir(path.join(root, "home", "user"), { recursive: true });
    this.sandboxes.set(id, {
      id,
      template: parsed.templateID,
      metadata: parsed.metadata ?? {},
      timeoutSeconds: parsed.timeout === undefined ? [] : [parsed.timeout],
      alive: true,
      root,
    });
    json(res, 201, {
      sandboxID: id,
      templateID: parsed.templateID,
      clientID: "local",
      envdVersion: "0.5.7",
      envdAccessToken: "local-token",
    });
  }

  private list(url: URL, res: ServerResponse): void {
    const wanted = new URLSearchParams(url.searchParams.get("metadata") ?? "");
    const found = [...this.sandboxes.values()].filter(
      (s) => s.alive && [...wanted].every(([k, v]) => s.metadata[k] === v),
    );
    json(
      res,
      200,
      found.map((s) => ({
        sandboxID: s.id,
        templateID: s.template,
        clientID: "local",
        metadata: s.metadata,
        startedAt: new Date().toISOString(),
        endAt: new Date(Date.now() + 60_000).toISOString(),
        state: "running",
        cpuCount: 2,
        memoryMB: 512,
        envdVersion: "0.5.7",
      })),
    );
  }

  private hostPath(sandbox: ApiSandbox, target: string): string {
    return path.join(sandbox.root, path.resolve("/home/user", target));
  }

  private async write(
    sandbox: ApiSandbox,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const target = url.searchParams.get("path") ?? "";
    const raw = await body(req);
    let data: Buffer;
    if (req.headers["content-type"]?.startsWith("multipart/form-data")) {
      const form = await new Response(raw, {
        headers: { "content-type": req.headers["content-type"] },
      }).formData();
      const file = form.get("file");
      data =
        file instanceof Blob
          ? Buffer.from(new Uint8Array(await file.arrayBuffer()))
          : Buffer.from(String(file));
    } else {
      data = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
    }
    const host = this.hostPath(sandbox, target);
    await mkdir(path.dirname(host), { recursive: true });
    await writeFile(host, data);
    json(res, 200, [{ name: path.basename(target), path: target, type: "file" }]);
  }

  private async read(
    sandbox: ApiSandbox,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    let data: Buffer;
    try {
      data = await readFile(this.hostPath(sandbox, url.searchParams.get("path") ?? ""));
    } catch {
      return json(res, 404, { code: 404, message: "file not found" });
    }
    const gzip = String(req.headers["accept-encoding"] ?? "").includes("gzip");
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    });
    res.end(gzip ? gzipSync(data) : data);
  }

  private async start_(sandbox: ApiSandbox, req: IncomingMessage, res: ServerResponse) {
    const raw = await body(req);
    const message = StartBody.parse(JSON.parse(raw.subarray(5).toString()));
    const home = path.join(sandbox.root, "home", "user");
    const child = spawn(message.process.cmd, message.process.args, {
      cwd: home,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, ...message.process.envs },
      stdio: ["ignore", "pipe", "pipe"],
    });
    res.writeHead(200, { "content-type": "application/connect+json" });
    res.write(envelope(0, { event: { start: { pid: child.pid ?? 1 } } }));
    const data = (stream: "stdout" | "stderr") => (chunk: Buffer) =>
      res.write(envelope(0, { event: { data: { [stream]: chunk.toString("base64") } } }));
    child.stdout.on("data", data("stdout"));
    child.stderr.on("data", data("stderr"));
    child.on("close", (code) => {
      const exitCode = code ?? -1;
      res.write(
        envelope(0, {
          event: { end: { exitCode, exited: code !== null, status: `exit status ${exitCode}` } },
        }),
      );
      res.end(envelope(2, {}));
    });
  }
}
