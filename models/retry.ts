import { AsyncCaller, classifyRateLimitError } from "@langchain/core/utils/async_caller";
import { isEndpointFault, statusOf } from "./errors.js";
import { currentCallRecord, notChatCompletion } from "./fetch.js";

/** Exposes @langchain/core's default decision, which throws for errors not worth retrying. */
class CoreRetryDecision extends AsyncCaller {
  check(error: unknown): unknown {
    return this.onFailedAttempt?.(error);
  }
}

const core = new CoreRetryDecision({});

/**
 * The failed-attempt handler given to ChatOpenAI. Core retries 5xx, timeouts, connection
 * errors and 429s that say when to come back (Retry-After, "try again in"), but gives up
 * at once on a 429 that says nothing; many OpenAI-compatible proxies send exactly that, so
 * such a 429 is retried with the usual backoff too. Quota errors still fail at once, and so
 * does an endpoint that cannot work however often it is asked: a refused connection, an
 * unknown host, 400/401/403/404/405/501, or a 2xx reply that is not a chat completion.
 */
export function onFailedModelAttempt(error: unknown): unknown {
  if (isEndpointFault(error) || notChatCompletion(currentCallRecord())) throw error;
  if (statusOf(error) === 429 && classifyRateLimitError(error)?.reason === "headerless_429") {
    return undefined;
  }
  return core.check(error);
}
