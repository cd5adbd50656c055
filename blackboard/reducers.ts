import type { Budget } from "./schemas.js";

/** Appends new items, keeping the first copy of each id (re-runs never duplicate evidence). */
export function appendUniqueById<T extends { id: string }>(current: T[], update: T[]): T[] {
  const seen = new Set(current.map((item) => item.id));
  const merged = [...current];
  for (const item of update) {
    if (!seen.has(item.id)) {
      seen.add(item.id);
      merged.push(item);
    }
  }
  return merged;
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
