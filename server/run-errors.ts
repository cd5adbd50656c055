import { createParser } from "eventsource-parser";
import { z } from "zod";

/*
 * A run's failure as LangGraph's servers report it: the `error` event of its stream carries
 * `{error, message}`, and `runs/wait` and `join` answer `{"__error__": {error, message}}`, which
 * the SDK's `runs.wait` turns into a thrown error.
 */

export const RunErrorSchema = z.object({ error: z.string(), message: z.string() });
export type RunError = z.infer<typeof RunErrorSchema>;

/** What `runs/wait` and `join` answer for a failed run. */
export function waitErrorBody(error: RunError): { __error__: RunError } {
  return { __error__: error };
}

/** Reads an SSE stream's bytes as they pass, and remembers its first `error` event. */
export class ErrorWatch {
  private readonly decoder = new TextDecoder();
  private seen: RunError | undefined;
  private readonly parser = createParser({
    onEvent: (event) => {
      if (event.event !== "error" || this.seen) return;
      let data: unknown = event.data;
      try {
        data = JSON.parse(event.data);
      } catch {
        // Not JSON: the text is the message.
      }
      const parsed = RunErrorSchema.safeParse(data);
      this.seen = parsed.success
        ? parsed.data
        : { error: "Error", message: typeof data === "string" ? data : JSON.stringify(data) };
    },
  });

  feed(chunk: Uint8Array): void {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }

  get error(): RunError | undefined {
    return this.seen;
  }
}
