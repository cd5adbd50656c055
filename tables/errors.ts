import type { TableRef } from "../blackboard/schemas.js";
import { type ReaderLimit, readerLimit } from "../settings/limits.js";

/** The first line of a problem with text: what a library said may run on for many lines. */
function firstLine(problem: string): string {
  return problem.split(/\r?\n/).find((line) => line.trim() !== "") ?? problem;
}

/**
 * A table that cannot be read; `file` is the path as given, or `<inline>`. The message is one
 * line: a problem given with more is cut to its first line of text.
 */
export class TableLoadError extends Error {
  override name = "TableLoadError";
  readonly file: string;
  readonly problem: string;

  constructor(file: string, problem: string, options?: ErrorOptions) {
    const line = firstLine(problem).trim();
    super(`cannot load table ${file}: ${line}`, options);
    this.file = file;
    this.problem = line;
  }
}

/** A reader limit in force; a refused setting is a load error of `file`. */
export function tableLimit(
  name: ReaderLimit,
  file: string,
  env?: Readonly<Record<string, string | undefined>>,
): number {
  const setting = readerLimit(name, env);
  if ("value" in setting) return setting.value;
  throw new TableLoadError(file, setting.problem);
}

/** What to call a stored table to its user: the file it came from, else `table <name>`. */
export function storedTableFile(ref: Pick<TableRef, "name" | "origin">): string {
  const origin = ref.origin;
  return origin && "file" in origin ? origin.file : `table ${ref.name}`;
}

/**
 * A TableLoadError about a stored table, naming the user's file it came from and never the
 * artifact it is kept in (`ref.uri` in the problem is replaced by the file).
 */
export function storedTableError(
  ref: Pick<TableRef, "name" | "origin" | "uri">,
  problem: string,
  options?: ErrorOptions,
): TableLoadError {
  const file = storedTableFile(ref);
  return new TableLoadError(file, problem.replaceAll(ref.uri, file), options);
}

/** Turns a file-system error into a short phrase for a TableLoadError. */
export function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "no such file";
  if (code === "ENOTDIR") return "no such file (a part of the path is not a directory)";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "it is a directory, not a file";
  return error instanceof Error ? error.message : String(error);
}

/** Signatures of binary files people try as tables, to say what the file is. */
const SIGNATURES: [bytes: number[], what: string][] = [
  [[0x50, 0x4b, 0x03, 0x04], "a ZIP archive (an Excel .xlsx workbook is one)"],
  [[0xd0, 0xcf, 0x11, 0xe0], "an old Office file (an Excel .xls workbook is one)"],
  [[0x50, 0x41, 0x52, 0x31], "a Parquet file"],
  [[0x25, 0x50, 0x44, 0x46], "a PDF document"],
  [[0x1f, 0x8b], "a gzip archive"],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], "a SQLite database"],
];

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

const UTF16_WITHOUT_BOM = "UTF-16 text without a byte-order mark";

/** ASCII in UTF-16: every other byte is NUL. */
function looksLikeUtf16(sample: Uint8Array): boolean {
  if (sample.length < 8) return false;
  let even = 0;
  let odd = 0;
  for (const [i, byte] of sample.entries()) {
    if (byte === 0) i % 2 === 0 ? even++ : odd++;
  }
  const half = sample.length / 2;
  return Math.max(even, odd) > 0.8 * half && Math.min(even, odd) < 0.05 * half;
}

/** What a binary file looks like, or null when the bytes look like text. */
export function binaryKind(bytes: Uint8Array): string | null {
  const known = SIGNATURES.find(([prefix]) => startsWith(bytes, prefix));
  if (known) return known[1];
  // Text tables have no NUL bytes, and almost no other control characters.
  const sample = bytes.subarray(0, 8192);
  if (looksLikeUtf16(sample)) return UTF16_WITHOUT_BOM;
  let controls = 0;
  for (const byte of sample) {
    if (byte === 0) return "a binary file";
    if (byte < 0x09 || (byte > 0x0d && byte < 0x20)) controls++;
  }
  return controls > sample.length / 10 ? "a binary file" : null;
}

/**
 * The text of a table file: UTF-8 (a leading BOM is dropped), or UTF-16 when a byte-order mark
 * says so. Throws a TableLoadError for `file` that says what the bytes are when they are not
 * text, or where the first byte that is not UTF-8 is.
 */
export function decodeText(bytes: Uint8Array, file: string): string {
  if (startsWith(bytes, [0xff, 0xfe])) return decodeStrict(bytes.subarray(2), "utf-16le", file);
  if (startsWith(bytes, [0xfe, 0xff])) return decodeStrict(bytes.subarray(2), "utf-16be", file);
  rejectBinary(bytes, file);
  return decodeStrict(bytes, "utf-8", file);
}

/** Throws a TableLoadError for `file` saying what the bytes are when they are not text. */
export function rejectBinary(bytes: Uint8Array, file: string): void {
  const binary = binaryKind(bytes);
  if (binary === UTF16_WITHOUT_BOM) {
    throw new TableLoadError(file, `${binary}; save the file as UTF-8 (or as UTF-16 with a BOM)`);
  }
  if (binary) {
    const head = [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    throw new TableLoadError(
      file,
      `this looks like ${binary}, not a text table (it starts with bytes ${head}); give a CSV, TSV or JSON file, or name the file by its format (.xlsx, .parquet)`,
    );
  }
}

function decodeStrict(
  bytes: Uint8Array,
  encoding: "utf-8" | "utf-16le" | "utf-16be",
  file: string,
) {
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    // Decoding again leniently only to say where the first bad byte is.
    const lenient = new TextDecoder(encoding).decode(bytes);
    const at = lenient.indexOf("\uFFFD");
    const line = lenient.slice(0, Math.max(at, 0)).split("\n").length;
    const name = encoding === "utf-8" ? "UTF-8" : "UTF-16";
    throw new TableLoadError(
      file,
      `not valid ${name} text (first bad byte on line ${line}); save the file as UTF-8`,
    );
  }
}
