import {
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  RateLimitError,
  SandboxError,
  ServiceBusyError,
  TimeoutError,
} from "e2b";

/** The E2B backend is not configured well enough to start (API key, template, ...). */
export class E2BConfigError extends Error {
  override name = "E2BConfigError";
}

/** The template cannot run the runner: no python3, or no pandas. */
export class E2BTemplateError extends E2BConfigError {
  override name = "E2BTemplateError";
}

/** No E2B sandbox could be started, after every retry. */
export class E2BStartError extends Error {
  override name = "E2BStartError";
}

/** One of our own wall-clock guards expired before an SDK call settled. */
export class E2BDeadlineError extends Error {
  override name = "E2BDeadlineError";
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
  }
}

/**
 * Waits for `work`, at most `ms`: an SDK call that never settles must not hang the
 * runtime. A value that arrives after the deadline goes to `onLate` (a sandbox created
 * too late is killed there, so it does not run on unnoticed).
 */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onLate?: (value: T) => void,
  abort?: AbortController,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      const error = new E2BDeadlineError(what, ms);
      // The SDK's request stops too, instead of running on unwatched.
      abort?.abort(error);
      reject(error);
    }, ms);
  });
  if (onLate) {
    work.then(
      (value) => {
        if (expired) onLate(value);
      },
      () => undefined,
    );
  }
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether a command failure means the command ran out of time, rather than the sandbox
 * going away. The SDK raises `TimeoutError` for both: "[deadline_exceeded]" when the
 * command's own timeout passed, "[unavailable]" (or a 502) when the sandbox is gone.
 */
export function isCommandTimeout(error: unknown): boolean {
  if (error instanceof E2BDeadlineError) return true;
  return error instanceof TimeoutError && error.message.includes("deadline_exceeded");
}

/**
 * Failures that retrying cannot fix: a bad key, an unknown template, a bad option
 * (the API answers 4xx; 408 and 429 are worth another try).
 */
export function isPermanentStartFailure(error: unknown): boolean {
  if (
    error instanceof AuthenticationError ||
    error instanceof InvalidArgumentError ||
    error instanceof E2BConfigError
  ) {
    return true;
  }
  const status = error instanceof SandboxError ? error.statusCode : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** Busy or rate-limited: worth retrying, after Retry-After when the error carries it. */
export function isBusy(error: unknown): boolean {
  return (
    error instanceof RateLimitError ||
    error instanceof ServiceBusyError ||
    (error instanceof SandboxError && (error.statusCode === 429 || error.statusCode === 503))
  );
}

/**
 * The wait a refusal asked for, in ms. The SDK honours a 429's Retry-After itself (within
 * its request timeout) and does not pass it on; an error that carries `retryAfterMs` (or
 * `retryAfter` in seconds) is honoured here.
 */
export function retryAfterMs(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const record = error as { retryAfterMs?: unknown; retryAfter?: unknown };
  if (typeof record.retryAfterMs === "number" && record.retryAfterMs >= 0)
    return record.retryAfterMs;
  if (typeof record.retryAfter === "number" && record.retryAfter >= 0)
    return record.retryAfter * 1_000;
  return undefined;
}

export { CommandExitError, FileNotFoundError };
