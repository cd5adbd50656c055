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
