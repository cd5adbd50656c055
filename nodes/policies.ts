import type { RetryPolicy } from "@langchain/langgraph";
import { isEndpointFailure, ModelCallError } from "../models/chat.js";

/**
 * The model client already retries each HTTP call; the node retries once more only
 * for a failed call (a dropped connection, a server that kept failing), never for a
 * reply it could not parse, a missing configuration, or an endpoint that cannot work
 * however often it is asked (nothing listening, 400/401/403/404/501, not an OpenAI chat API).
 * LangGraph's own notice of a retry goes to stdout, where `ask --json` prints its answer,
 * so the retry is told as a warning.
 */
export const modelRetryPolicy: RetryPolicy = {
  maxAttempts: 2,
  initialInterval: 500,
  logWarning: false,
  retryOn: (error: unknown) => {
    if (!(error instanceof ModelCallError) || isEndpointFailure(error)) return false;
    process.emitWarning(`${error.message}; running the node again`, "TablemindsWarning");
    return true;
  },
};
