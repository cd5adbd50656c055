import { existsSync, readFileSync } from "node:fs";
import { JsonLinesWriter, jsonLines, readJsonLines, replaceFile } from "../../storage/jsonl.js";
import { type MinedQuestion, MinedQuestionSchema } from "./records.js";

/*
 * mined.jsonl: one line per mined question, appended as each finishes. The runner's
 * results.jsonl decides what is done: a mined line whose question is not there (killed between
 * the two writes) is dropped on resume, and the question runs again.
 */

/** The whole, valid records of a mined file, the first of each id; torn lines are skipped. */
export function readMined(file: string): MinedQuestion[] {
  return readJsonLines(file, MinedQuestionSchema).records;
}

/**
 * Keeps only the records of questions in `done` (once each) and no torn line; rewrites the
 * file when that changes it. The caller holds the file's lock. Returns the records kept.
 */
export function repairMined(file: string, done: ReadonlySet<string>): MinedQuestion[] {
  const kept = readMined(file).filter((r) => done.has(r.id));
  const text = jsonLines(MinedQuestionSchema, kept);
  if (!existsSync(file) || readFileSync(file, "utf8") !== text) replaceFile(file, text);
  return kept;
}

/** Replaces a JSONL export whole. */
export function writeJsonl(file: string, records: readonly unknown[]): void {
  replaceFile(file, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
}

/** Appends mined records, one write per line, synced on close. */
export class MinedWriter extends JsonLinesWriter<MinedQuestion> {
  constructor(file: string) {
    super(file, MinedQuestionSchema, Number.POSITIVE_INFINITY);
  }
}
