/*
 * Work a passing outage should not fail: tried again with backoff, while the failure is of a
 * kind the caller calls transient, for a while from the first failure.
 */

export interface RetryOptions {
  /** How long to keep trying, from the first failure. */
  withinMs: number;
  /** The first pause; each next one doubles, up to `maxPauseMs`. */
  firstPauseMs?: number;
  maxPauseMs?: number;
}

export async function retryWhile<T>(
  transient: (error: unknown) => boolean,
  work: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  let pause = options.firstPauseMs ?? 50;
  let deadline: number | undefined;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!transient(error)) throw error;
      deadline ??= Date.now() + options.withinMs;
      if (Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, options.maxPauseMs ?? 1_000);
    }
  }
}

/** System errors that say the connection was refused, reset or timed out, not the request. */
const DROPPED = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);

/** Whether an error's system code says the connection failed (a server away or restarting). */
export function droppedConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" && DROPPED.has(code);
}
