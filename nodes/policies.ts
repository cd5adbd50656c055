import type { RetryPolicy } from "@langchain/langgraph";
import { ModelCallError } from "../tools/models/chat.js";

/**
 * The model client already retries each HTTP call; the node retries once more only
 * for a failed call (a dropped connection, a server that kept failing), never for a
 * reply it could not parse or a missing configuration.
 */
export const modelRetryPolicy: RetryPolicy = {
  maxAttempts: 2,
  initialInterval: 500,
  retryOn: (error: unknown) => error instanceof ModelCallError,
};
