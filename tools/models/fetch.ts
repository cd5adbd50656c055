import { AsyncLocalStorage } from "node:async_hooks";

/** Counts the HTTP requests made on behalf of one model call (first attempt + retries). */
export interface AttemptCounter {
  attempts: number;
}

const currentCall = new AsyncLocalStorage<AttemptCounter>();

/** Runs `fn` and reports how many HTTP requests it made through a guarded fetch. */
export async function countingAttempts<T>(
  counter: AttemptCounter,
  fn: () => Promise<T>,
): Promise<T> {
  return currentCall.run(counter, fn);
}

/** The response body went silent for longer than the idle limit. */
export class BodyStallError extends Error {
  constructor(readonly idleMs: number) {
    super(`the response body stalled: no data for ${idleMs} ms`);
    this.name = "BodyStallError";
  }
}

/**
 * A fetch for the OpenAI client. The client's own timeout stops once the response headers
 * arrive, so a server that sends headers and then goes silent would hang a call forever;
 * this fetch fails the body when no bytes arrive for `idleMs`. It also counts attempts.
 */
export function guardedFetch(idleMs: number): typeof fetch {
  return async (input, init) => {
    const counter = currentCall.getStore();
    if (counter) counter.attempts += 1;
    const response = await fetch(input, init);
    if (!response.body) return response;
    return new Response(withIdleTimeout(response.body, idleMs), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function withIdleTimeout(
  source: ReadableStream<Uint8Array>,
  idleMs: number,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new BodyStallError(idleMs)), idleMs);
      });
      try {
        const chunk = await Promise.race([reader.read(), stalled]);
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      } catch (error) {
        reader.cancel(error).catch(() => {});
        controller.error(error);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
