import { isEndpointFailure, ModelCallError } from "../models/errors.js";

/** Questions in a row that fail on the model endpoint before a run stops. */
export const DEFAULT_MAX_ENDPOINT_FAILURES = 3;

/** Why a run stopped before its end: the model endpoint kept failing. */
export interface EndpointStop {
  /** The endpoint's host. */
  endpoint: string;
  /** Questions in a row that failed on it. */
  failures: number;
  /** The last failure's message. */
  reason: string;
}

/** The endpoint failure behind a graph's error (it may come wrapped), if it is one. */
export function endpointFailureIn(error: unknown): Error | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (isEndpointFailure(current)) return current;
    current = current.cause;
  }
  return undefined;
}

/** The host of the endpoint a failure names, if it names one. */
export function failedHost(failure: Error): string | undefined {
  if (!(failure instanceof ModelCallError)) return undefined;
  try {
    return new URL(failure.baseUrl).host || undefined;
  } catch {
    return undefined;
  }
}

/** One line: which endpoint stopped the run, and why. */
export function stopMessage(stop: EndpointStop): string {
  return `${stop.failures} questions in a row failed on the model endpoint ${stop.endpoint}: ${stop.reason}`;
}
