/*
 * Database errors a run outlives: the connection dropped (a restart, a failover, a network
 * blip) or the server is not taking connections yet. Work that failed this way is tried again
 * with backoff for a while; anything else fails at once.
 */

/** SQLSTATE classes and codes that say the connection, not the statement, failed. */
const TRANSIENT_CODES = new Set(["57P01", "57P02", "57P03", "53300", "40001", "40P01"]);
const TRANSIENT_SYSCALLS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);
const TRANSIENT_TEXT =
  /Connection terminated|connection ended unexpectedly|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery)|terminating connection/i;

export function isTransient(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (TRANSIENT_CODES.has(code) || code.startsWith("08"))) return true;
  if (typeof code === "string" && TRANSIENT_SYSCALLS.has(code)) return true;
  return typeof message === "string" && TRANSIENT_TEXT.test(message);
}

export interface RetryOptions {
  /** How long to keep trying, from the first failure. */
  withinMs: number;
  /** The first pause; each next one doubles, up to a second. */
  firstPauseMs?: number;
}

/** Default: a PostgreSQL restart or a short failover (seconds) is outlived. */
export const DEFAULT_RETRY: RetryOptions = { withinMs: 30_000, firstPauseMs: 50 };

/** Runs `work`, again after a transient failure until `withinMs` has passed since the first. */
export async function retryTransient<T>(
  work: () => Promise<T>,
  options: RetryOptions = DEFAULT_RETRY,
): Promise<T> {
  let pause = options.firstPauseMs ?? 50;
  let deadline: number | undefined;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isTransient(error)) throw error;
      deadline ??= Date.now() + options.withinMs;
      if (Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 1_000);
    }
  }
}
