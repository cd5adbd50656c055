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
import { type MinedQuestion, MinedQuestionSchema } from "./records.js";

/*
 * mined.jsonl: one line per mined question, appended as each finishes. evals/results-file.ts
 * does the same for results.jsonl but is typed to its own records, so the few lines are here.
 * The runner's results.jsonl decides what is done: a mined line whose question is not there
 * (killed between the two writes) is dropped on resume, and the question runs again.
 */

/** The whole, valid records of a mined file, the first of each id; torn lines are skipped. */
export function readMined(file: string): MinedQuestion[] {
  if (!existsSync(file)) return [];
  const seen = new Set<string>();
  const records: MinedQuestion[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let parsed: ReturnType<typeof MinedQuestionSchema.safeParse>;
    try {
      parsed = MinedQuestionSchema.safeParse(JSON.parse(line));
    } catch {
      continue;
    }
    if (parsed.success && !seen.has(parsed.data.id)) {
      seen.add(parsed.data.id);
      records.push(parsed.data);
    }
  }
  return records;
}

/** Replaces a file whole (temporary file, synced, renamed): a crash leaves the old or the new. */
export function replaceFile(file: string, text: string): void {
  const temp = `${file}.tmp-${process.pid}`;
  writeFileSync(temp, text);
  const fd = openSync(temp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temp, file);
}

const lines = (records: readonly unknown[]) =>
  records.map((r) => `${JSON.stringify(r)}\n`).join("");

/**
 * Keeps only the records of questions in `done` (once each) and no torn line; rewrites the
 * file when that changes it. The caller holds the file's lock. Returns the records kept.
 */
export function repairMined(file: string, done: ReadonlySet<string>): MinedQuestion[] {
  const kept = readMined(file).filter((r) => done.has(r.id));
  const text = lines(kept);
  if (!existsSync(file) || readFileSync(file, "utf8") !== text) replaceFile(file, text);
  return kept;
}

export function writeJsonl(file: string, records: readonly unknown[]): void {
  replaceFile(file, lines(records));
}

/** Appends mined records, one write per line, synced on close. */
export class MinedWriter {
  private readonly fd: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, "a");
  }

  append(record: MinedQuestion): void {
    const line = Buffer.from(`${JSON.stringify(MinedQuestionSchema.parse(record))}\n`);
    let written = 0;
    while (written < line.length) written += writeSync(this.fd, line, written);
  }

  close(): void {
    fsyncSync(this.fd);
    closeSync(this.fd);
  }
}
