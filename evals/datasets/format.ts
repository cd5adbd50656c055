import { readFile } from "node:fs/promises";
import type { z } from "zod";

/** A dataset file that does not have the shape its loader expects; names file and line. */
export class DatasetFormatError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    problem: string,
  ) {
    super(`${file}${line === null ? "" : `:${line}`}: ${problem}`);
    this.name = "DatasetFormatError";
  }
}

/** The first zod issue as `path: message`. */
export function zodProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "record";
  return `${where}: ${issue?.message ?? "invalid"}`;
}

/** A lookup from character offset to 1-based line, for many lookups in one text. */
export function lineFinder(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/**
 * Where each top-level element of a JSON array (or each member of a JSON object) starts, so
 * a record that fails validation can be reported by its line.
 */
export function topLevelOffsets(text: string): number[] {
  const offsets: number[] = [];
  let depth = 0;
  let inString = false;
  let expectEntry = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
    if (depth === 1 && expectEntry && c !== "]" && c !== "}") {
      offsets.push(i);
      expectEntry = false;
    }
    if (c === '"') inString = true;
    else if (c === "[" || c === "{") {
      depth++;
      if (depth === 1) expectEntry = true;
    } else if (c === "]" || c === "}") depth--;
    else if (c === "," && depth === 1) expectEntry = true;
  }
  return offsets;
}

/** The line on which each top-level entry of a JSON array or object starts, by its index. */
export function entryLines(text: string): (index: number) => number {
  const starts = topLevelOffsets(text);
  const lineAt = lineFinder(text);
  return (index) => lineAt(starts[index] ?? 0);
}

/**
 * Where JSON.parse gave up, for Node versions whose messages carry no position: a strict
 * recursive-descent check that returns the offset of the first error (-1 when the text parses).
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text.charAt(i))) i++;
  };
  const string = () => {
    i++;
    while (i < text.length) {
      const c = text.charAt(i);
      if (c === "\\") i += 2;
      else if (c === '"') {
        i++;
        return;
      } else if (c < " ") fail();
      else i++;
    }
    fail();
  };
  const value = (): void => {
    space();
    const c = text.charAt(i);
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      space();
      if (text.charAt(i) === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === "{") {
          space();
          if (text.charAt(i) !== '"') fail();
          string();
          space();
          if (text.charAt(i) !== ":") fail();
          i++;
        }
        value();
        space();
        if (text.charAt(i) === ",") i++;
        else if (text.charAt(i) === close) {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const literal = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      text.slice(i, i + 512),
    );
    if (!literal) fail();
    else i += literal[0].length;
  };
  try {
    value();
    space();
    if (i < text.length) fail();
    return -1;
  } catch (at) {
    if (typeof at === "number") return Math.min(at, text.length);
    throw at;
  }
}

/** Reads a JSON file; a syntax error names the line it is on. */
export async function readJsonFile(file: string): Promise<{ text: string; json: unknown }> {
  const text = await readFile(file, "utf8");
  try {
    return { text, json: JSON.parse(text) };
  } catch (error) {
    const offset = jsonErrorOffset(text);
    const line = offset < 0 ? null : lineFinder(text)(offset);
    const reason = (error as Error).message.replace(/\s+/g, " ").slice(0, 120);
    throw new DatasetFormatError(file, line, `not valid JSON (${reason})`);
  }
}

/** A question's table file; one that is missing is named with the line that cites it. */
export async function readCitedTable(file: string, citedAt: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch {
    throw new Error(`${citedAt}: its table ${file} is missing`);
  }
}
