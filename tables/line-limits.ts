/**
 * How long one line of a text table may be (issue 23).
 *
 * A table has one record a line. A file of one 26 MB line (a header of three million names, or
 * a file with no line break at all) is no table: reading it went on to 2 GB of memory and ended
 * in DuckDB's 28-line error about a line over its 2 MB buffer. Such a line is refused before the
 * file is parsed, naming the file and the line; DuckDB is told to read lines this long
 * (`duckDbLineOptions`), so that whatever the loader accepts, DuckDB reads too.
 *
 * Operators raise the limit with TABLEMINDS_MAX_LINE_BYTES.
 */
import { READER_LIMITS } from "../settings/limits.js";
import { rejectBinary, TableLoadError, tableLimit } from "./errors.js";

export const DEFAULT_MAX_LINE_BYTES = READER_LIMITS.maxLineBytes.fallback;
/** The most the setting may say: DuckDB fails to allocate its buffers for lines of gigabytes. */
export const MAX_LINE_BYTES_CEILING = READER_LIMITS.maxLineBytes.ceiling;
/**
 * A stored line may be longer than its source line: quotes are doubled and fields quoted (up to
 * 2.5 times for a TSV line of one-character fields that all need quotes).
 */
const STORED_GROWTH = 4;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The longest line a text table may have, in bytes: TABLEMINDS_MAX_LINE_BYTES when set, else
 * the default. Throws a TableLoadError for `file` when the setting is not a whole number.
 */
export function maxLineBytes(file = "<settings>", env?: Env): number {
  return tableLimit("maxLineBytes", file, env);
}

/** DuckDB's `max_line_size` for reading stored tables: every line the loader let in fits. */
export function duckDbMaxLineSize(env?: Env): number {
  let limit = DEFAULT_MAX_LINE_BYTES;
  try {
    limit = maxLineBytes(undefined, env);
  } catch {
    // A bad setting was refused when the table was loaded; read with the default meanwhile.
  }
  // DuckDB's own default, 2,000,000 bytes, is the least it is given.
  return Math.max(2_000_000, limit * STORED_GROWTH);
}

/** DuckDB's own read buffer, which it makes 16 times `max_line_size` unless told. */
const DUCKDB_BUFFER_BYTES = 32 * 1024 * 1024;

/**
 * The `read_csv` options for reading stored tables: lines up to duckDbMaxLineSize, in a buffer
 * just larger than that. Left to itself DuckDB reserves 16 times the line size, half a
 * gigabyte at the default limit, which a `memory_limit` of a gigabyte (the SQL sandbox's)
 * cannot spare.
 */
export function duckDbLineOptions(env?: Env): string {
  const line = duckDbMaxLineSize(env);
  const buffer = Math.max(DUCKDB_BUFFER_BYTES, line + 1024 * 1024);
  return `max_line_size = ${line}, buffer_size = ${buffer}`;
}

const LF = 0x0a;
const CR = 0x0d;

/** A line longer than allowed: where it is and how long it is. */
export interface LongLine {
  /** 1-based. */
  line: number;
  /** Its length, measured to its end once `ended` (or the input ended). */
  bytes: number;
  /** Whether a line break followed it. */
  ended: boolean;
}

/**
 * Follows bytes given in pieces and finds the first line longer than `max` bytes (LF, CR or
 * CRLF end a line), measuring it to its end; keeps none of the bytes.
 */
export class LineLengths {
  #line = 1;
  #length = 0;
  #cr = false;
  #found: LongLine | null = null;

  constructor(readonly max: number) {}

  /** The first line past the limit, once one was seen. */
  get found(): LongLine | null {
    return this.#found;
  }

  push(piece: Uint8Array): void {
    const found = this.#found;
    if (found?.ended) return;
    let at = 0;
    const n = piece.length;
    // The next LF and CR at or after where each was last looked for (-1: none left), so that a
    // piece without a CR is not searched to its end again for every line.
    let lf = -2;
    let cr = -2;
    while (at < n) {
      if (this.#cr) {
        this.#cr = false;
        if (piece[at] === LF) {
          at++;
          continue;
        }
      }
      if (lf !== -1 && lf < at) lf = piece.indexOf(LF, at);
      if (cr !== -1 && cr < at) cr = piece.indexOf(CR, at);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      this.#length += (end === -1 ? n : end) - at;
      if (this.#length > this.max) {
        this.#found = { line: this.#line, bytes: this.#length, ended: end !== -1 };
        if (end !== -1) return;
      }
      if (end === -1) return;
      this.#cr = piece[end] === CR;
      this.#line++;
      this.#length = 0;
      at = end + 1;
    }
  }

  /** Whether the long line found is the file's only one (no line break, or only a last one). */
  onlyLine(total: number): boolean {
    const found = this.#found;
    return found !== null && found.line === 1 && found.bytes >= total - 2;
  }
}

function megabytes(bytes: number): string {
  return `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;
}

/** The refusal of a long line of `file`, found by LineLengths over its `total` bytes. */
export function longLineError(file: string, lines: LineLengths, total: number): TableLoadError {
  const found = lines.found ?? { line: 1, bytes: total, ended: false };
  const why = lines.onlyLine(total) ? " (the file has no line break)" : "";
  return new TableLoadError(
    file,
    `refused: line ${found.line} is ${megabytes(found.bytes)} long${why}, past the ` +
      `${megabytes(lines.max)} a line of a table may be (one record a line: is it a table?); ` +
      `raise ${READER_LIMITS.maxLineBytes.variable} to read it`,
  );
}

/**
 * Refuses, in a TableLoadError naming `file` and the line, text with a line longer than `max`
 * bytes.
 */
export function rejectLongLines(bytes: Uint8Array, file: string, max = maxLineBytes(file)): void {
  if (bytes.length <= max) return;
  const lines = new LineLengths(max);
  lines.push(bytes);
  if (!lines.found) return;
  // Binary bytes have no lines to speak of: say what they are instead (UTF-16 text is no binary).
  const utf16 =
    (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
  if (!utf16) rejectBinary(bytes, file);
  throw longLineError(file, lines, bytes.length);
}
