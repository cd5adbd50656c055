import type { IncomingMessage, RequestListener } from "node:http";
import { bodyTooLarge } from "./app.js";
import { bearerOf, tokenRefusal } from "./auth.js";

export interface GateOptions {
  token: string;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
}

export interface Refusal {
  status: 401 | 413;
  error: string;
}

/** Every route but `GET /health` takes the token, unknown paths too (they are 404 only after it). */
function open(request: IncomingMessage, pathname: string): boolean {
  return (request.method === "GET" || request.method === "HEAD") && pathname === "/health";
}

function pathAndToken(request: IncomingMessage): { pathname: string; token?: string } {
  try {
    const url = new URL(request.url ?? "/", "http://reward-server.invalid");
    return { pathname: url.pathname, token: url.searchParams.get("token") ?? undefined };
  } catch {
    return { pathname: "" };
  }
}

/**
 * What the server refuses from a request's head alone, before a byte of its body is read: a
 * missing or wrong token (401), a declared Content-Length over the limit (413).
 */
export function refusalOf(request: IncomingMessage, options: GateOptions): Refusal | null {
  const { pathname, token } = pathAndToken(request);
  if (!open(request, pathname)) {
    const refusal = tokenRefusal(bearerOf(request.headers.authorization) ?? token, options.token);
    if (refusal) return { status: 401, error: refusal };
  }
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > options.bodyLimitBytes) {
    return { status: 413, error: bodyTooLarge(options.bodyLimitBytes) };
  }
  return null;
}

/**
 * Answers what refusalOf refuses at once, with `Connection: close`: Node closes the socket
 * once the reply is written, so the body (200 MB, say) is never read. Everything else goes to
 * `next`, where bodies sent without a length are counted as they stream (the app's
 * bodyLimit) and cut off with a 413 at the limit, the connection closed the same way.
 */
export function gate(next: RequestListener, options: GateOptions): RequestListener {
  return (request, response) => {
    const refusal = refusalOf(request, options);
    if (!refusal) {
      next(request, response);
      return;
    }
    const body = JSON.stringify({ error: refusal.error });
    response.writeHead(refusal.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      connection: "close",
      ...(refusal.status === 401 ? { "www-authenticate": "Bearer" } : {}),
    });
    response.end(body);
  };
}
