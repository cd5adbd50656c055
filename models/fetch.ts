import { AsyncLocalStorage } from "node:async_hooks";
import { z } from "zod";
import { recordRequest } from "./audit.js";

/** What the HTTP requests of one model call (first attempt + retries) left behind. */
export interface CallRecord {
  attempts: number;
  /** The first characters of the latest 2xx body. */
  head?: string;
  /** The whole latest 2xx body of a non-streamed chat request, for `notChatCompletion`. */
  body?: string;
}

const currentCall = new AsyncLocalStorage<CallRecord>();

/** Runs `fn` and records the HTTP requests it made through a guarded fetch. */
export async function recordingCall<T>(record: CallRecord, fn: () => Promise<T>): Promise<T> {
  return currentCall.run(record, fn);
}

/** The record of the model call running here, if any (read by the retry decision). */
export function currentCallRecord(): CallRecord | undefined {
  return currentCall.getStore();
}

/** The response body went silent for longer than the idle limit. */
export class BodyStallError extends Error {
  constructor(readonly idleMs: number) {
    super(`the response body stalled: no data for ${idleMs} ms`);
    this.name = "BodyStallError";
  }
}

const HEAD_CHARS = 200;
/** A non-streamed chat completion larger than this is not checked (nor kept in memory twice). */
const MAX_CHECKED_BYTES = 4 * 1024 * 1024;

/** The least a non-streamed reply must hold for a client to read it as a chat completion. */
const ChatCompletionShape = z.looseObject({
  choices: z.array(z.looseObject({ message: z.looseObject({}) })).min(1),
});

function isChatCompletion(text: string): boolean {
  try {
    return ChatCompletionShape.safeParse(JSON.parse(text)).success;
  } catch {
    return false;
  }
}

/**
 * Whether the call's latest 2xx reply, read whole, was not a chat completion. Asked only when
 * the call failed, so a reply that worked is parsed once, by the client.
 */
export function notChatCompletion(record: CallRecord | undefined): boolean {
  return record?.body !== undefined && !isChatCompletion(record.body);
}

/** A chat request that asked for one JSON reply rather than a stream of events. */
function isPlainChatRequest(input: Parameters<typeof fetch>[0], init?: RequestInit): boolean {
  const url = String(input instanceof Request ? input.url : input);
  // The SDK sends compact JSON; a prompt's own quotes would be escaped.
  const streamed = typeof init?.body === "string" && init.body.includes('"stream":true');
  return url.includes("/chat/completions") && !streamed;
}

/**
 * A fetch for the OpenAI client. The client's own timeout stops once the response headers
 * arrive, so a server that sends headers and then goes silent would hang a call forever;
 * this fetch fails the body when no bytes arrive for `idleMs`. It also counts attempts and
 * keeps the head of each 2xx body, and the whole of a non-streamed chat reply, so a failure can
 * say what the server sent instead. Every request is written to the audit log before it is sent
 * (models/audit.ts): its URL and body, never its headers.
 */
export function guardedFetch(idleMs: number): typeof fetch {
  return async (input, init) => {
    const record = currentCall.getStore();
    if (record) {
      record.attempts += 1;
      record.head = undefined;
      record.body = undefined;
    }
    recordRequest(input, init);
    const response = await fetch(input, init);
    if (!response.body) return response;
    const watch = record && response.ok ? record : undefined;
    const check = watch !== undefined && isPlainChatRequest(input, init);
    return new Response(
      withIdleTimeout(response.body, idleMs, watch && bodyWatcher(watch, check)),
      { status: response.status, statusText: response.statusText, headers: response.headers },
    );
  };
}

interface BodyWatcher {
  chunk(bytes: Uint8Array): void;
  done(): void;
}

function bodyWatcher(record: CallRecord, check: boolean): BodyWatcher {
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  return {
    chunk(chunk) {
      bytes += chunk.byteLength;
      // A stream keeps only its head; a plain reply is kept whole, up to the limit.
      if (bytes > MAX_CHECKED_BYTES || (!check && text.length >= HEAD_CHARS)) return;
      text += decoder.decode(chunk, { stream: true });
      record.head = text.slice(0, HEAD_CHARS);
    },
    done() {
      if (!check || bytes > MAX_CHECKED_BYTES) return;
      text += decoder.decode();
      record.head = text.slice(0, HEAD_CHARS);
      record.body = text;
    },
  };
}

function withIdleTimeout(
  source: ReadableStream<Uint8Array>,
  idleMs: number,
  watcher?: BodyWatcher,
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
        if (chunk.done) {
          watcher?.done();
          controller.close();
        } else {
          watcher?.chunk(chunk.value);
          controller.enqueue(chunk.value);
        }
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
