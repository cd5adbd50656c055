import {
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  SandboxError,
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
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      reject(new E2BDeadlineError(what, ms));
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

export { CommandExitError, FileNotFoundError };
