import type { Role } from "./config.js";

export interface ModelCallFailure {
  role: Role;
  model: string;
  baseUrl: string;
  /** HTTP requests made, retries included; 0 when none was sent. */
  attempts: number;
  /** What went wrong, in a few words (status code first when there is one). */
  reason: string;
  status?: number;
  cause?: unknown;
}

/** A model call failed for good (after the client's retries) or returned no text. */
export class ModelCallError extends Error {
  readonly role: Role;
  readonly model: string;
  readonly baseUrl: string;
  readonly attempts: number;
  readonly status: number | undefined;

  constructor(failure: ModelCallFailure) {
    const tries = failure.attempts > 1 ? ` after ${failure.attempts} attempts` : "";
    super(
      `${failure.role} model "${failure.model}" at ${failure.baseUrl} failed${tries}: ${failure.reason}`,
      { cause: failure.cause },
    );
    this.name = "ModelCallError";
    this.role = failure.role;
    this.model = failure.model;
    this.baseUrl = failure.baseUrl;
    this.attempts = failure.attempts;
    this.status = failure.status;
  }
}

/** Statuses that say the endpoint cannot serve this call, however often it is asked. */
const ENDPOINT_STATUSES = new Set([400, 401, 403, 404, 405, 501]);
/** Network errors that say nothing is listening at the address, or the address does not exist. */
const ENDPOINT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);

/**
 * Whether a failed call says the endpoint does not work at all (wrong address, nothing
 * listening, bad key, no such model, not an OpenAI chat API) rather than that the model answered
 * or that a later try may get through (a rate limit, a server error, a timeout). Such a failure
 * is never a model's answer: evaluations must not score it.
 */
export function isEndpointFailure(error: unknown): boolean {
  if (!(error instanceof ModelCallError)) return false;
  if (error.status !== undefined) return ENDPOINT_STATUSES.has(error.status);
  const code = networkCode(error.cause);
  return code !== undefined && ENDPOINT_CODES.has(code);
}

/** The HTTP status an OpenAI client error carries, if any. */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === "number" ? status : undefined;
}

/** One line describing a client error: status, message, and a network code such as ECONNREFUSED. */
export function describeCause(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return `timed out after ${timeoutMs} ms`;
  const status = statusOf(error);
  let text = error.message.trim() || error.name;
  if (status !== undefined && !text.startsWith(String(status))) text = `${status} ${text}`;
  const code = networkCode(error.cause);
  if (code && !text.includes(code)) text = `${text} (${code})`;
  return text;
}

function networkCode(cause: unknown, depth = 0): string | undefined {
  if (typeof cause !== "object" || cause === null || depth > 3) return undefined;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === "string") return code;
  return networkCode((cause as { cause?: unknown }).cause, depth + 1);
}
