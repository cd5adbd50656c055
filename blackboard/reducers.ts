import type { Budget } from "./schemas.js";

/** A reducer that appends new items, keeping the first copy of each key. */
function appendUniqueBy<T>(key: (item: T) => string): (current: T[], update: T[]) => T[] {
  return (current, update) => {
    const seen = new Set(current.map(key));
    const merged = [...current];
    for (const item of update) {
      if (seen.has(key(item))) continue;
      seen.add(key(item));
      merged.push(item);
    }
    return merged;
  };
}

/** Appends new items, keeping the first copy of each id (re-runs never duplicate evidence). */
export function appendUniqueById<T extends { id: string }>(current: T[], update: T[]): T[] {
  return appendUniqueBy<T>((item) => item.id)(current, update);
}

/** Appends edges not seen yet: an edge is its kind and its two ends. */
export function upsertEdges<T extends { from: string; to: string; kind: string }>(
  current: T[],
  update: T[],
): T[] {
  return appendUniqueBy<T>((edge) => `${edge.kind} ${edge.from} ${edge.to}`)(current, update);
}

/** Appends new items and replaces an existing one with the same id (an attempt gains its result). */
export function upsertById<T extends { id: string }>(current: T[], update: T[]): T[] {
  const merged = [...current];
  for (const item of update) {
    const at = merged.findIndex((existing) => existing.id === item.id);
    if (at >= 0) merged[at] = item;
    else merged.push(item);
  }
  return merged;
}

export const EMPTY_BUDGET: Budget = {
  llmCalls: 0,
  cachedCalls: 0,
  promptTokens: 0,
  completionTokens: 0,
  llmMs: 0,
  execMs: 0,
};

export function addBudget(current: Budget, update: Partial<Budget>): Budget {
  return {
    llmCalls: current.llmCalls + (update.llmCalls ?? 0),
    cachedCalls: current.cachedCalls + (update.cachedCalls ?? 0),
    promptTokens: current.promptTokens + (update.promptTokens ?? 0),
    completionTokens: current.completionTokens + (update.completionTokens ?? 0),
    llmMs: current.llmMs + (update.llmMs ?? 0),
    execMs: current.execMs + (update.execMs ?? 0),
  };
}
