import type { Attempt, Reflection } from "./schemas.js";

/** The attempts of the current round: a reflection starts a new one with a fresh retry budget. */
export function attemptsSinceReflection(state: {
  attempts: Attempt[];
  reflections: Reflection[];
}): Attempt[] {
  return state.attempts.slice(state.reflections.at(-1)?.afterAttempts ?? 0);
}

export function nextAttemptId(attempts: Attempt[]): string {
  return `a${attempts.length + 1}`;
}

export function lastSuccessful(attempts: Attempt[]): Attempt | undefined {
  return attempts.findLast((a) => a.result?.ok);
}
