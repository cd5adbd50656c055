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
import type { z } from "zod";

/*
 * Files of one JSON record a line that survive a crash: appended a whole line at a time, read
 * back skipping what a crash cut short, replaced whole through a synced temporary file.
 */

/** Replaces a file whole (temporary file, synced, renamed): a crash leaves the old or the new. */
export function replaceFile(file: string, text: string): void {
  const temp = `${file}.tmp-${process.pid}`;
  writeFileSync(temp, text);
  const fd = openSync(temp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temp, file);
}

/** Records as lines, each checked by `schema` first. */
export function jsonLines<T>(schema: z.ZodType<T>, records: readonly T[]): string {
  return records.map((r) => `${JSON.stringify(schema.parse(r))}\n`).join("");
}

/**
 * The valid records of a file, the first of each id, and the lines that are not whole records
 * (a torn last line, a line the schema refuses), in order.
 */
export function readJsonLines<T extends { id: string }>(
  file: string,
  schema: z.ZodType<T>,
): { records: T[]; bad: string[] } {
  if (!existsSync(file)) return { records: [], bad: [] };
  const lines = readFileSync(file, "utf8").split("\n");
  const last = lines.pop() ?? "";
  const bad: string[] = last.trim() ? [last] : [];
  const records: T[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    if (!line.trim()) continue;
    let parsed: ReturnType<typeof schema.safeParse> | undefined;
    try {
      parsed = schema.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) bad.push(line);
    else if (!seen.has(parsed.data.id)) {
      seen.add(parsed.data.id);
      records.push(parsed.data);
    }
  }
  return { records, bad };
}

/** Appends records, one write per line; synced to disk at least every `syncEveryMs`. */
export class JsonLinesWriter<T> {
  private readonly fd: number;
  private lastSync = Date.now();

  constructor(
    readonly file: string,
    private readonly schema: z.ZodType<T>,
    private readonly syncEveryMs = 1_000,
  ) {
    this.fd = openSync(file, "a");
  }

  append(record: T): void {
    const line = Buffer.from(jsonLines(this.schema, [record]));
    // One write per line; a short write (disk full) is finished or left torn for the reader.
    let written = 0;
    while (written < line.length) written += writeSync(this.fd, line, written);
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
