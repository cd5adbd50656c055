import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { forEachBounded } from "./pool.js";
import { type Report, writeReport } from "./report.js";
import { lockResults, type ResultRecord, writeResults } from "./results-file.js";
import { beginRun, writeRunInfo } from "./run-info.js";
import type { ChartRunner, EvalExample, Scorer } from "./types.js";

/** A prediction made elsewhere, for a question of the dataset. */
export interface Prediction {
  example: EvalExample;
  /** The raw output text, read by the scorer as a run's output is. */
  prediction: string;
}

const PredictionSchema = z.object({ id: z.coerce.string(), prediction: z.string() });

/** A predictions file: JSONL of {id, prediction}; every id must be a question of the dataset. */
export function readPredictions(
  file: string,
  examples: readonly EvalExample[],
  dataset: string,
): Prediction[] {
  const known = new Map(examples.map((e) => [e.id, e]));
  const predictions: Prediction[] = [];
  const seen = new Set<string>();
  for (const [i, line] of readFileSync(file, "utf8").split("\n").entries()) {
    if (!line.trim()) continue;
    const where = `${file}:${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new Error(`${where}: not JSON`);
    }
    const parsed = PredictionSchema.safeParse(json);
    if (!parsed.success) {
      throw new Error(`${where}: expected {"id": ..., "prediction": "<the raw output>"}`);
    }
    const example = known.get(parsed.data.id);
    if (!example) throw new Error(`${where}: id ${parsed.data.id} is not in ${dataset}`);
    if (seen.has(example.id)) throw new Error(`${where}: id ${example.id} appears twice`);
    seen.add(example.id);
    predictions.push({ example, prediction: parsed.data.prediction });
  }
  if (predictions.length === 0) throw new Error(`${file}: no predictions`);
  return predictions;
}

/** Scores predictions as a run's outputs are scored, 4 at a time, into records in their order. */
export async function scorePredictions(
  predictions: readonly Prediction[],
  scorer: Scorer,
  runChart: ChartRunner,
): Promise<ResultRecord[]> {
  const records: ResultRecord[] = new Array(predictions.length);
  const indexed = predictions.map((p, i) => ({ ...p, i }));
  await forEachBounded(indexed, 4, async ({ example, prediction, i }) => {
    const score = await scorer.score(example, prediction, { runChart });
    records[i] = {
      id: example.id,
      prediction: score.prediction,
      output: prediction,
      score,
      latencyMs: 0,
      tokens: { prompt: 0, completion: 0 },
      llmCalls: 0,
      attempts: 0,
      error: null,
      finishedAt: new Date().toISOString(),
    };
  });
  return records;
}

/**
 * Saves scored predictions as a run directory (results.jsonl, run.json, the report), for
 * `eval compare`. Scoring is repeatable: the results file is replaced whole.
 */
export async function saveScoredRun(
  outDir: string,
  run: {
    scorer: Scorer;
    examples: EvalExample[];
    records: ResultRecord[];
    /** For run.json: the dataset path and the command line. */
    data?: string;
    command?: string[];
  },
): Promise<Report> {
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, "results.jsonl");
  const unlock = lockResults(file);
  try {
    const info = beginRun(outDir, {
      kind: "scored",
      dataset: run.scorer.dataset,
      data: run.data,
      command: run.command,
      questions: run.records.length,
    });
    writeResults(file, run.records);
    writeRunInfo(outDir, { ...info, finished: new Date().toISOString() });
    return await writeReport(outDir, run.examples, run.records, run.scorer);
  } finally {
    unlock();
  }
}
