import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { z } from "zod";
import { QuestionScoreSchema } from "./types.js";

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
  attempts: z.number().int().nonnegative(),
  /** Why the run failed, when it did (the question is then scored on an empty output). */
  error: z.string().nullable(),
  finishedAt: z.string(),
});
export type ResultRecord = z.infer<typeof ResultRecordSchema>;

export interface LoadedResults {
  records: ResultRecord[];
  /** Lines that were not whole records (a write cut short by a crash), moved aside. */
  repaired: { lines: number; savedTo: string } | null;
}

/**
 * The records of a results file. Lines that are not whole records are moved to
 * `<file>.corrupt-<time>` and the file is rewritten without them (via a temporary file and
 * a rename), so their questions run again and nothing is counted twice.
 */
export function loadResults(file: string): LoadedResults {
  if (!existsSync(file)) return { records: [], repaired: null };
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  const last = lines.pop() ?? "";
  const bad: string[] = last.trim() ? [last] : [];
  const records: ResultRecord[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    if (!line.trim()) continue;
    let parsed: ReturnType<typeof ResultRecordSchema.safeParse> | undefined;
    try {
      parsed = ResultRecordSchema.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) bad.push(line);
    else if (!seen.has(parsed.data.id)) {
      seen.add(parsed.data.id);
      records.push(parsed.data);
    }
  }
  if (bad.length === 0) return { records, repaired: null };
  const savedTo = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  writeFileSync(savedTo, `${bad.join("\n")}\n`);
  const temp = `${file}.tmp-${process.pid}`;
  writeFileSync(temp, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  const fd = openSync(temp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temp, file);
  return { records, repaired: { lines: bad.length, savedTo } };
}

/** Appends records, one write per line; synced to disk at least every `syncEveryMs`. */
export class ResultsWriter {
  private readonly fd: number;
  private lastSync = Date.now();

  constructor(
    readonly file: string,
    private readonly syncEveryMs = 1_000,
  ) {
    this.fd = openSync(file, "a");
  }

  append(record: ResultRecord): void {
    writeSync(this.fd, `${JSON.stringify(ResultRecordSchema.parse(record))}\n`);
    if (Date.now() - this.lastSync >= this.syncEveryMs) {
      fsyncSync(this.fd);
      this.lastSync = Date.now();
    }
  }

  close(): void {
    fsyncSync(this.fd);
    closeSync(this.fd);
  }
}
