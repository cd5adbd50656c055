import { droppedConnection, type RetryOptions, retryWhile } from "../storage/retry.js";

/*
 * Database errors a run outlives: the connection dropped (a restart, a failover, a network
 * blip) or the server is not taking connections yet. Work that failed this way is tried again
 * with backoff for a while; anything else fails at once.
 */

/** SQLSTATE classes and codes that say the connection, not the statement, failed. */
const TRANSIENT_CODES = new Set(["57P01", "57P02", "57P03", "53300", "40001", "40P01"]);
const TRANSIENT_TEXT =
  /Connection terminated|connection ended unexpectedly|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery)|terminating connection/i;

export function isTransient(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (TRANSIENT_CODES.has(code) || code.startsWith("08"))) return true;
  if (droppedConnection(error)) return true;
  return typeof message === "string" && TRANSIENT_TEXT.test(message);
}

/** Default: a PostgreSQL restart or a short failover (seconds) is outlived. */
export const DEFAULT_RETRY: RetryOptions = { withinMs: 30_000, firstPauseMs: 50 };

/** Runs `work`, again after a transient database failure until `withinMs` has passed. */
export function retryTransient<T>(
  work: () => Promise<T>,
  options: RetryOptions = DEFAULT_RETRY,
): Promise<T> {
  return retryWhile(isTransient, work, options);
}
