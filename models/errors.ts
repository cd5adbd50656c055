import type { Role } from "./config.js";

export interface ModelCallFailure {
  role: Role;
  /** Who asked, when not the role itself: the decomposer asks with the planner's model. */
  speaker?: string;
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
  /** Who asked (the role, or an agent using the role's model, such as the sql worker). */
  readonly speaker: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly attempts: number;
  /** What went wrong, without who and where. */
  readonly reason: string;
  readonly status: number | undefined;

  constructor(failure: ModelCallFailure) {
    const tries = failure.attempts > 1 ? ` after ${failure.attempts} attempts` : "";
    const speaker = failure.speaker ?? failure.role;
    const who =
      speaker === failure.role
        ? `${speaker} model "${failure.model}"`
        : `${speaker} (${failure.role} model "${failure.model}")`;
    super(`${who} at ${failure.baseUrl} failed${tries}: ${failure.reason}`, {
      cause: failure.cause,
    });
    this.name = "ModelCallError";
    this.role = failure.role;
    this.speaker = speaker;
    this.model = failure.model;
    this.baseUrl = failure.baseUrl;
    this.attempts = failure.attempts;
    this.reason = failure.reason;
    this.status = failure.status;
  }
}

/** How many characters of a reply that is not a chat completion an error quotes. */
const HEAD_CHARS = 120;

/** A 2xx reply whose body is not an OpenAI chat completion (an HTML page, other JSON...). */
export class NotChatCompletionError extends Error {
  /** The first characters of the body. */
  readonly head: string;

  constructor(head: string, options?: ErrorOptions) {
    const quoted = head.length > HEAD_CHARS ? `${head.slice(0, HEAD_CHARS)}...` : head;
    const hint = /^\s*</.test(head)
      ? " (an HTML page: is the base URL the API's, often ending in /v1?)"
      : "";
    super(
      `the server's reply is not an OpenAI chat completion; it begins: ${JSON.stringify(quoted)}${hint}`,
      options,
    );
    this.name = "NotChatCompletionError";
    this.head = head;
  }
}

/** The server answered with a chat completion that holds no text. */
export class EmptyReplyError extends Error {
  constructor() {
    super("the reply has no text");
    this.name = "EmptyReplyError";
  }
}

/** Statuses that say the endpoint cannot serve this call, however often it is asked. */
const ENDPOINT_STATUSES = new Set([400, 401, 403, 404, 405, 501]);
/** Network errors that say nothing is listening at the address, or the address does not exist. */
const ENDPOINT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);

/**
 * Whether an error of the OpenAI client (or its cause) says the endpoint does not work at all:
 * asking again cannot help. Decides what the client and the node do not retry.
 */
export function isEndpointFault(error: unknown): boolean {
  if (error instanceof NotChatCompletionError) return true;
  const status = statusOf(error);
  if (status !== undefined) return ENDPOINT_STATUSES.has(status);
  const code = networkCode(error);
  // fetch refuses some ports outright ("bad port"): nothing there can ever answer.
  return (code !== undefined && ENDPOINT_CODES.has(code)) || innermostMessage(error) === "bad port";
}

/**
 * Whether a failed call says the endpoint does not work at all (wrong address, nothing
 * listening, bad key, no such model, not an OpenAI chat API) rather than that the model answered
 * or that a later try may get through (a rate limit, a server error, a timeout). Such a failure
 * is never a model's answer: evaluations must not score it.
 */
export function isEndpointFailure(error: unknown): boolean {
  if (!(error instanceof ModelCallError)) return false;
  if (error.status !== undefined) return ENDPOINT_STATUSES.has(error.status);
  return isEndpointFault(error.cause);
}

/** The HTTP status an OpenAI client error carries, if any. */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === "number" ? status : undefined;
}

/** LangChain appends a multi-line "Troubleshooting URL" to some errors; a reason is one line. */
const TROUBLESHOOTING = /\s*Troubleshooting URL:.*$/s;
const MAX_REASON_CHARS = 300;

/** One line describing a client error: status, message, and a network code such as ECONNREFUSED. */
export function describeCause(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return oneLine(String(error));
  if (error.name === "TimeoutError") return `timed out after ${timeoutMs} ms`;
  const status = statusOf(error);
  let text = oneLine(error.message.replace(TROUBLESHOOTING, "")) || error.name;
  if (status !== undefined && !text.startsWith(String(status))) text = `${status} ${text}`;
  const code = networkCode(error.cause) ?? innermostMessage(error.cause);
  if (code && !text.includes(code)) text = `${text} (${code})`;
  return text;
}

/** The message of the last cause in a chain ("bad port" under "fetch failed"), if any. */
function innermostMessage(cause: unknown, depth = 0): string | undefined {
  if (!(cause instanceof Error) || depth > 3) return undefined;
  return innermostMessage(cause.cause, depth + 1) ?? (oneLine(cause.message) || undefined);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS)}...` : line;
}

/** The network error code (ECONNREFUSED...) of an error or of its causes. */
export function networkCode(cause: unknown, depth = 0): string | undefined {
  if (typeof cause !== "object" || cause === null || depth > 3) return undefined;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === "string") return code;
  return networkCode((cause as { cause?: unknown }).cause, depth + 1);
}
