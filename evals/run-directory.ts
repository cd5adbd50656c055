import path from "node:path";
import { loadDataset } from "./datasets/index.js";
import { getScorer } from "./metrics/index.js";
import { loadResults, type ResultRecord } from "./results-file.js";
import { readRunInfo } from "./run-info.js";
import type { EvalExample, Scorer } from "./types.js";

export interface SavedRun {
  /** The questions the run covers. */
  examples: EvalExample[];
  records: ResultRecord[];
  scorer: Scorer;
}

/** A run directory read back, without touching it (a run may be writing it still). */
export async function loadRun(dir: string): Promise<SavedRun> {
  const info = readRunInfo(dir);
  if (!info) throw new Error(`${dir} is not a run directory (no run.json)`);
  const all = await loadDataset(info.dataset, { path: info.data, limit: info.limit });
  const { records } = loadResults(path.join(dir, "results.jsonl"), { repair: false });
  // Predictions scored with `eval score --out` cover the questions they answer.
  const ids = new Set(records.map((r) => r.id));
  const examples = info.kind === "scored" ? all.filter((e) => ids.has(e.id)) : all;
  return { examples, records, scorer: getScorer(info.dataset) };
}
