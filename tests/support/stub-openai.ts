/**
 * A scripted OpenAI chat-completions server on loopback, so tests, benchmarks and e2e runs
 * drive the real ChatOpenAI client without a model. No test framework imports here.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { z } from "zod";

export type StubReply =
  | string
  | {
      content?: string;
      /** >= 400: an OpenAI-style error body with this status (429 carries Retry-After). */
      status?: number;
      /** Seconds sent in the Retry-After header of a 429 (default 0; null sends none). */
      retryAfterSeconds?: number | null;
      /** Wait this long before answering. */
      delayMs?: number;
      /** A 200 whose body is not valid JSON (or, when streaming, an SSE event that is not). */
      malformed?: boolean;
      /** Never answer: no status line, until the client gives up or the stub closes. */
      hang?: boolean;
      /** Send the status and headers (and, when streaming, the first chunk), then go silent. */
      stall?: boolean;
      /** Answer only once this settles (after delayMs), e.g. when a test has seen what it waits for. */
      until?: Promise<unknown>;
      /** Send exactly this body (status 200 unless given), streaming or not: an HTML page, other JSON. */
      raw?: { body: string; contentType?: string; status?: number };
    };

export interface StubMessage {
  role: string;
  content: string;
}

export interface StubRequest {
  /** From the system message header `# tableminds <role>`, else "default". */
  role: string;
  model: string;
  messages: StubMessage[];
  stream: boolean;
  /** The request body as parsed JSON (temperature, stream_options, ...). */
  body: Record<string, unknown>;
}

export interface StubOptions {
  /** Full control: the reply to the `index`-th chat request (0-based, all roles counted). */
  respond?: (req: StubRequest, index: number) => StubReply;
  /** Replies per role, consumed in order; the last one repeats. Key "default" catches the rest. */
  script?: Partial<Record<string, StubReply[]>>;
  /** Added to every reply, e.g. to make benchmarks see a realistic model delay. */
  latencyMs?: number;
  /** The stub closes itself after this long without a request (default 60 s). */
  idleTimeoutMs?: number;
  /** Serves POST /v1/embeddings with these vectors (404 without it). */
  embed?: (text: string) => number[];
  /** Model ids listed by GET /v1/models (default ["stub-model"]). */
  models?: string[];
}

export interface StubServer {
  /** Base URL for OPENAI_BASE_URL, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  requests: StubRequest[];
  /** The texts of each POST /v1/embeddings, in order. */
  embeddingRequests: string[][];
  close(): Promise<void>;
  /** Settles once the server has stopped listening, for whatever reason. */
  closed: Promise<void>;
  /** Chat requests being answered now, and the most there ever were at once. */
  inFlight(): { now: number; most: number };
}

const ROLE_HEADER = /#\s*tableminds\s+(\w+)/;
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const STREAM_PIECE_CHARS = 12;

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const ChatBody = z.looseObject({
  model: z.string().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.string().min(1),
        content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
      }),
    )
    .min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
});
type ChatBody = z.infer<typeof ChatBody>;

export async function startStubOpenAI(opts: StubOptions = {}): Promise<StubServer> {
  const requests: StubRequest[] = [];
  const cursors = new Map<string, number>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const idleTimeoutMs = opts.idleTimeoutMs ?? 60_000;
  let closing: Promise<void> | undefined;
  let flying = 0;
  let mostFlying = 0;
  let idleTimer: NodeJS.Timeout | undefined;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      timers.add(timer);
    });

  const touch = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void close(), idleTimeoutMs);
    idleTimer.unref();
  };

  const scripted = (req: StubRequest): StubReply => {
    const key = opts.script?.[req.role]?.length ? req.role : "default";
    const replies = opts.script?.[key];
    if (!replies?.length) {
      return { status: 500, content: `the stub has no script for role "${req.role}"` };
    }
    const at = cursors.get(key) ?? 0;
    cursors.set(key, at + 1);
    return replies[Math.min(at, replies.length - 1)] as StubReply;
  };

  const handleChat = async (http: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(http);
    if (raw === undefined) return sendError(res, 413, "request body too large");
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return sendError(res, 400, "request body is not valid JSON");
    }
    const parsed = ChatBody.safeParse(json);
    if (!parsed.success) {
      return sendError(res, 400, `invalid chat request: ${z.prettifyError(parsed.error)}`);
    }
    const req = toStubRequest(parsed.data);
    const index = requests.length;
    requests.push(req);
    flying += 1;
    mostFlying = Math.max(mostFlying, flying);
    res.once("close", () => {
      flying -= 1;
    });
    let reply: Exclude<StubReply, string>;
    try {
      reply = normalize(opts.respond ? opts.respond(req, index) : scripted(req));
    } catch (error) {
      reply = { status: 500, content: `the stub's respond() threw: ${String(error)}` };
    }
    if (reply.hang) return;
    await wait((reply.delayMs ?? 0) + (opts.latencyMs ?? 0));
    if (reply.until) await reply.until.catch(() => {});
    if (res.destroyed) return;
    if (reply.raw) {
      res.writeHead(reply.raw.status ?? 200, {
        "content-type": reply.raw.contentType ?? "application/json",
      });
      return res.end(reply.raw.body);
    }
    if (reply.status !== undefined && reply.status >= 400) {
      const retryAfter = reply.status === 429 ? reply.retryAfterSeconds : null;
      const headers: Record<string, string> =
        retryAfter === null ? {} : { "retry-after": String(retryAfter ?? 0) };
      return sendError(res, reply.status, reply.content, headers);
    }
    const content = reply.content ?? "";
    const usage = usageFor(req, content);
    if (req.stream) return sendStream(res, req, parsed.data, content, usage, reply);
    if (reply.malformed) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end('{"id": "chatcmpl-stub", "choices": [{"message": ');
    }
    if (reply.stall) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.write('{"id": ');
    }
    sendJson(res, 200, {
      id: `chatcmpl-${randomUUID()}`,
      object: "chat.completion",
      created: nowSeconds(),
      model: req.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage,
    });
  };

  const embeddingRequests: string[][] = [];

  /** The OpenAI client asks for base64 float32 vectors unless told otherwise. */
  const handleEmbeddings = async (
    http: IncomingMessage,
    res: ServerResponse,
    embed: (text: string) => number[],
  ) => {
    const body = z
      .object({
        input: z.union([z.string(), z.array(z.string())]),
        model: z.string(),
        encoding_format: z.enum(["float", "base64"]).optional(),
      })
      .parse(JSON.parse((await readBody(http)) ?? "{}"));
    const texts = typeof body.input === "string" ? [body.input] : body.input;
    embeddingRequests.push(texts);
    const data = texts.map((text, index) => {
      const vector = embed(text);
      const embedding =
        body.encoding_format === "base64"
          ? Buffer.from(new Float32Array(vector).buffer).toString("base64")
          : vector;
      return { object: "embedding", index, embedding };
    });
    sendJson(res, 200, {
      object: "list",
      data,
      model: body.model,
      usage: { prompt_tokens: texts.length, total_tokens: texts.length },
    });
  };

  const server = createServer((http, res) => {
    touch();
    const path = (http.url ?? "/").split("?")[0]?.replace(/^\/v1(?=\/)/, "");
    if (http.method === "POST" && path === "/chat/completions") {
      handleChat(http, res).catch((error) => {
        if (!res.headersSent) sendError(res, 500, `stub failure: ${String(error)}`);
        else res.destroy();
      });
    } else if (http.method === "POST" && path === "/embeddings" && opts.embed) {
      handleEmbeddings(http, res, opts.embed).catch((error) => {
        if (!res.headersSent) sendError(res, 500, `stub failure: ${String(error)}`);
      });
    } else if (http.method === "GET" && path === "/models") {
      const ids = opts.models ?? ["stub-model"];
      sendJson(res, 200, {
        object: "list",
        data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "stub" })),
      });
    } else {
      sendError(res, 404, `no route ${http.method} ${http.url}`);
    }
  });
  server.on("connection", (socket) => {
    socket.unref();
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      clearTimeout(idleTimer);
      for (const timer of timers) clearTimeout(timer);
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.unref();
  const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
  touch();
  const { port } = server.address() as AddressInfo;
  const inFlight = () => ({ now: flying, most: mostFlying });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    embeddingRequests,
    close,
    closed,
    inFlight,
  };
}

function normalize(reply: StubReply): Exclude<StubReply, string> {
  return typeof reply === "string" ? { content: reply } : reply;
}

function textOf(content: ChatBody["messages"][number]["content"]): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content.map((part) => part.text ?? "").join("");
}

function toStubRequest(body: ChatBody): StubRequest {
  const messages = body.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
  // ChatOpenAI sends system prompts as "developer" messages to reasoning models.
  const system = messages.find((m) => m.role === "system" || m.role === "developer");
  const role = ROLE_HEADER.exec(system?.content ?? "")?.[1] ?? "default";
  return { role, model: body.model, messages, stream: body.stream === true, body };
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Roughly four characters per token, as tokenizers average on English text. */
function usageFor(req: StubRequest, content: string): Usage {
  const promptChars = req.messages.reduce((sum, m) => sum + m.content.length, 0);
  const prompt_tokens = Math.max(1, Math.ceil(promptChars / 4));
  const completion_tokens = Math.ceil(content.length / 4);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function sendStream(
  res: ServerResponse,
  req: StubRequest,
  body: ChatBody,
  content: string,
  usage: Usage,
  reply: Exclude<StubReply, string>,
): void {
  const includeUsage = body.stream_options?.include_usage === true;
  const id = `chatcmpl-${randomUUID()}`;
  const created = nowSeconds();
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: req.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  send(chunk({ role: "assistant", content: "" }, null));
  if (reply.stall) return;
  if (reply.malformed) {
    res.write('data: {"id": "chatcmpl-stub", "choices": [\n\n');
    res.end("data: [DONE]\n\n");
    return;
  }
  for (let at = 0; at < content.length; at += STREAM_PIECE_CHARS) {
    send(chunk({ content: content.slice(at, at + STREAM_PIECE_CHARS) }, null));
  }
  send(chunk({}, "stop"));
  if (includeUsage) {
    send({ id, object: "chat.completion.chunk", created, model: req.model, choices: [], usage });
  }
  res.end("data: [DONE]\n\n");
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () =>
      resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")),
    );
    req.on("error", reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sendError(
  res: ServerResponse,
  status: number,
  message?: string,
  headers: Record<string, string> = {},
): void {
  const type =
    status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(
    res,
    status,
    {
      error: {
        message: message ?? `${STATUS_CODES[status] ?? "Error"} (scripted by the stub)`,
        type,
        param: null,
        code: null,
      },
    },
    headers,
  );
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
