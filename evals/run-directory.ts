import path from "node:path";
import { loadDataset } from "./datasets/index.js";
import { getScorer } from "./metrics/index.js";
import { loadResults, type ResultRecord } from "./results-file.js";
import { readRunInfo, selectionOf } from "./run-info.js";
import { selectExamples } from "./selection.js";
import type { EvalExample, Scorer } from "./types.js";

export interface SavedRun {
  /** The questions the run covers. */
  examples: EvalExample[];
  records: ResultRecord[];
  scorer: Scorer;
}

/**
 * The questions a report covers: those selected, and any other the directory has a result
 * for (an earlier, larger selection), in the dataset's order.
 */
export function coveredExamples(
  all: readonly EvalExample[],
  selected: readonly EvalExample[],
  records: readonly ResultRecord[],
): EvalExample[] {
  const ids = new Set([...selected.map((e) => e.id), ...records.map((r) => r.id)]);
  return all.filter((e) => ids.has(e.id));
}

/** A run directory read back, without touching it (a run may be writing it still). */
export async function loadRun(dir: string): Promise<SavedRun> {
  const info = readRunInfo(dir);
  if (!info) throw new Error(`${dir} is not a run directory (no run.json)`);
  const all = await loadDataset(info.dataset, { path: info.data });
  const { records } = loadResults(path.join(dir, "results.jsonl"), { repair: false });
  // Predictions scored with `eval score --out` cover the questions they answer.
  const selected = info.kind === "scored" ? [] : selectExamples(all, selectionOf(info));
  return {
    examples: coveredExamples(all, selected, records),
    records,
    scorer: getScorer(info.dataset),
  };
}
