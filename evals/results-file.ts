import { closeSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { JsonLinesWriter, jsonLines, readJsonLines, replaceFile } from "../storage/jsonl.js";
import { isAlive } from "../storage/pids.js";
import { QuestionScoreSchema } from "./types.js";

/**
 * What a result keeps of the checker's verdict on its answer. Read loosely, so that a file a
 * newer version wrote (another support kind) is still read, not set aside as corrupt.
 */
export const RecordedVerdictSchema = z.object({
  pass: z.boolean(),
  /** The weakest support of the answer's items: derived, looked-up, coincidental or none. */
  support: z.string(),
  /** How likely the answer is right, 0-1. */
  confidence: z.number().min(0).max(1),
  /** The confidence was not below the run's `minConfidence`; else the run said it was not sure. */
  sure: z.boolean(),
});
export type RecordedVerdict = z.infer<typeof RecordedVerdictSchema>;

/** One answered question, one line of results.jsonl. */
export const ResultRecordSchema = z.object({
  id: z.string(),
  /** What the scorer read from the output. */
  prediction: z.string(),
  /** The full text given to the scorer. */
  output: z.string(),
  score: QuestionScoreSchema,
  latencyMs: z.number().nonnegative(),
  tokens: z.object({
    prompt: z.number().int().nonnegative(),
    completion: z.number().int().nonnegative(),
  }),
  llmCalls: z.number().int().nonnegative(),
  /** Of those, calls the replay cache answered (absent in files of older versions). */
  cachedCalls: z.number().int().nonnegative().optional(),
  attempts: z.number().int().nonnegative(),
  /** Time spent waiting for the model and running code (absent in files of older versions). */
  llmMs: z.number().nonnegative().optional(),
  execMs: z.number().nonnegative().optional(),
  /** Graph runs it took: 1, or more after transient model failures. */
  tries: z.number().int().positive().optional(),
  /** The invocation of the run that answered it (absent in files of older versions). */
  invocation: z.number().int().positive().optional(),
  /** Why the run failed, when it did (the question is then scored on an empty output). */
  error: z.string().nullable(),
  /**
   * The checker's verdict on the answer; absent when there was none (checking off, a run that
   * failed before its check, predictions scored with `eval score`) and in files of older versions.
   */
  verdict: RecordedVerdictSchema.optional(),
  finishedAt: z.string(),
});
export type ResultRecord = z.infer<typeof ResultRecordSchema>;

export interface LoadedResults {
  records: ResultRecord[];
  /** Lines that were not whole records (a write cut short by a crash), moved aside. */
  repaired: { lines: number; savedTo: string } | null;
}

/**
 * The records of a results file. Lines that are not whole records (a write cut short by a
 * crash) are left out; with `repair` (the runner, which holds the file's lock) they are also
 * moved to `<file>.corrupt-<time>` and the file is rewritten without them (temporary file +
 * rename), so their questions run again and nothing is counted twice. Readers that do not
 * own the file (report, compare) leave it alone.
 */
export function loadResults(file: string, options: { repair?: boolean } = {}): LoadedResults {
  const { records, bad } = readJsonLines(file, ResultRecordSchema);
  if (bad.length === 0 || options.repair === false) return { records, repaired: null };
  const savedTo = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  writeFileSync(savedTo, `${bad.join("\n")}\n`);
  writeResults(file, records);
  return { records, repaired: { lines: bad.length, savedTo } };
}

/**
 * Replaces a results file whole (temporary file, synced, then renamed), so a crash leaves
 * the old file or the new one. The caller holds the file's lock.
 */
export function writeResults(file: string, records: readonly ResultRecord[]): void {
  replaceFile(file, jsonLines(ResultRecordSchema, records));
}

/** Appends records, one write per line; synced to disk at least every `syncEveryMs`. */
export class ResultsWriter extends JsonLinesWriter<ResultRecord> {
  constructor(file: string, syncEveryMs = 1_000) {
    super(file, ResultRecordSchema, syncEveryMs);
  }
}

/**
 * Claims a results file for this process (`<file>.lock` holds its pid), so two runs cannot
 * append to one file at once; a lock left by a process that no longer exists (kill -9) is
 * taken over. Returns the release.
 */
export function lockResults(file: string): () => void {
  const lock = `${file}.lock`;
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fd = openSync(lock, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const pid = Number(readFileSync(lock, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(
          `${path.dirname(file)} is in use by process ${pid}; wait for it to end or stop it`,
        );
      }
      rmSync(lock, { force: true });
    }
  }
  throw new Error(`could not lock ${file}`);
}
