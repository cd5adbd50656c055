import type { Scorer } from "../types.js";
import { finqaScorer } from "./finqa.js";
import { tabfactScorer } from "./tabfact.js";
import { tablebenchScorer } from "./tablebench.js";
import { wikitqScorer } from "./wikitq.js";

const SCORERS: Record<string, Scorer> = {
  tablebench: tablebenchScorer,
  wikitq: wikitqScorer,
  tabfact: tabfactScorer,
  finqa: finqaScorer,
};

/** The official scorer of a dataset. */
export function getScorer(dataset: string): Scorer {
  const scorer = SCORERS[dataset];
  if (!scorer) {
    throw new Error(
      `no scorer for dataset "${dataset}"; known: ${Object.keys(SCORERS).join(", ")}`,
    );
  }
  return scorer;
}
