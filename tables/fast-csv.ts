import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { open, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { RowPlaces, TableRef } from "../blackboard/schemas.js";
import { adoptArtifact, artifactDir, artifactTempPath } from "../storage/artifacts.js";
import { KEPT_FIRST_ROWS, type TableIndex } from "./cell-index.js";
import { CsvSyntaxError, parseDelimited } from "./csv.js";
import { sniffDelimiter } from "./delimiter.js";
import { type Dtype, isMissing } from "./dtypes.js";
import { sqlString } from "./duckdb-csv.js";
import { scanCsv, withDuckDb } from "./duckdb-scan.js";
import { rejectBinary } from "./errors.js";
import type { FrameIndexer } from "./frame-index.js";
import { duckDbLineOptions, LineLengths, longLineError, maxLineBytes } from "./line-limits.js";
import { uniqueColumnNames } from "./names.js";
import { RowPlacesBuilder } from "./row-places.js";

/** From this size on a clean CSV is stored as it is, with DuckDB counting and typing it. */
export const FAST_CSV_BYTES = 8 * 1024 * 1024;
/** Bytes read to check the header and the separator before taking the fast path. */
const HEAD_BYTES = 64 * 1024;
/** The copy reads in pieces this big: Node's default of 64 KB makes it twice as slow. */
const COPY_CHUNK_BYTES = 1024 * 1024;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

export interface FastCsv {
  header: string[];
  rows: number;
  dtypes: Dtype[];
  sha256: string;
  uri: string;
  /** The line the header is on. */
  headerLine: number;
  /** The line each data row starts on; null when the file's records could not be told apart. */
  lines: RowPlaces | null;
  /** Its cell index, when an indexer made it from the sandbox's DataFrame (see frame-index.ts). */
  index?: TableIndex;
}

const DTYPES: readonly string[] = [
  "int64",
  "uint64",
  "float64",
  "bool",
  "object",
] satisfies Dtype[];

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/**
 * Follows comma-separated bytes chunk by chunk as parseDelimited reads them (a quote opens a
 * field only at its start, line breaks inside quotes do not end a record, blank lines are no
 * records) and records the line each record after the header starts on.
 */
export class RecordLines {
  readonly rows = new RowPlacesBuilder();
  /** The line the first record (the header) is on. */
  header = 1;
  private line = 1;
  private records = 0;
  private quoted = false;
  /** A quote just closed a quoted field: another one right after is an escaped quote. */
  private closed = false;
  private lineStart = true;
  private fieldStart = true;
  /** The last byte was a CR: an LF right after it ends the same line. */
  private cr = false;

  feed(chunk: Buffer): void {
    const n = chunk.length;
    // The next LF, CR and quote at or after where each was last looked for (-1: none left).
    let lf = -2;
    let cr = -2;
    let quote = -2;
    const next = (cached: number, byte: number, from: number) =>
      cached === -1 || cached >= from ? cached : chunk.indexOf(byte, from);
    let i = 0;
    while (i < n) {
      if (this.cr) {
        this.cr = false;
        if (chunk[i] === LF) {
          i++;
          continue;
        }
      }
      if (this.quoted) {
        quote = next(quote, QUOTE, i);
        const end = quote === -1 ? n : quote;
        for (lf = next(lf, LF, i); lf !== -1 && lf < end; lf = chunk.indexOf(LF, lf + 1)) {
          this.line++;
        }
        for (cr = next(cr, CR, i); cr !== -1 && cr < end; cr = chunk.indexOf(CR, cr + 1)) {
          // A CR before an LF ends the same line; one at the chunk's end waits for the next.
          if (chunk[cr + 1] === LF) continue;
          this.line++;
          if (cr + 1 === n) this.cr = true;
        }
        if (quote === -1) return;
        this.quoted = false;
        this.closed = true;
        i = quote + 1;
        continue;
      }
      const c = chunk[i];
      if (this.closed) {
        this.closed = false;
        if (c === QUOTE) {
          this.quoted = true;
          i++;
          continue;
        }
      }
      if (c === LF || c === CR) {
        this.line++;
        this.cr = c === CR;
        this.lineStart = true;
        this.fieldStart = true;
        i++;
        continue;
      }
      if (this.lineStart) {
        this.lineStart = false;
        if (this.records++ > 0) this.rows.push(this.line);
        else this.header = this.line;
      }
      if (c === QUOTE && this.fieldStart) {
        this.quoted = true;
        this.fieldStart = false;
        i++;
        continue;
      }
      // Plain bytes up to the next line break or quote.
      lf = next(lf, LF, i + 1);
      cr = next(cr, CR, i + 1);
      quote = next(quote, QUOTE, i + 1);
      let stop = lf === -1 ? n : lf;
      if (cr !== -1 && cr < stop) stop = cr;
      if (quote !== -1 && quote < stop) stop = quote;
      this.fieldStart = chunk[stop - 1] === COMMA;
      i = stop;
    }
  }
}

/** The header of a clean comma-separated UTF-8 head, or null when the file needs the full reader. */
function cleanHeader(head: Buffer, file: string): string[] | null {
  try {
    rejectBinary(head, file);
  } catch {
    return null;
  }
  let text: string;
  try {
    // stream: a multi-byte character cut at the end of the head is not an error.
    text = new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
  } catch {
    return null;
  }
  // The last line of the head may be cut short: judge the separator by the whole lines.
  const whole = text.slice(0, text.lastIndexOf("\n") + 1);
  const lines = whole.split("\n");
  if (lines.length < 3 || sniffDelimiter(whole, ",") !== ",") return null;
  let header: string[] | undefined;
  try {
    header = parseDelimited(lines[0] ?? "", ",")[0]?.fields;
  } catch (error) {
    if (error instanceof CsvSyntaxError) return null;
    throw error;
  }
  if (!header || header.length < 2) return null;
  if (header.some((name) => name !== name.trim() || name.includes('"'))) return null;
  return uniqueColumnNames(header).warnings.length === 0 ? header : null;
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Copies `file` (from byte `start`) into a temporary artifact, hashing it and following its
 * records' lines on the way. A line longer than a table's may be is refused, naming `file`,
 * and the copy so far removed.
 */
async function copyHashed(
  file: string,
  start: number,
): Promise<{ tmp: string; digest: string; records: RecordLines }> {
  const max = maxLineBytes(file);
  const tmp = await artifactTempPath("csv");
  const hash = createHash("sha256");
  const records = new RecordLines();
  const lines = new LineLengths(max);
  let copied = 0;
  try {
    await pipeline(
      createReadStream(file, { start, highWaterMark: COPY_CHUNK_BYTES }),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          lines.push(chunk);
          copied += chunk.length;
          if (lines.found?.ended) throw longLineError(file, lines, copied);
          hash.update(chunk);
          records.feed(chunk);
          yield chunk;
        }
        if (lines.found) throw longLineError(file, lines, copied);
      },
      createWriteStream(tmp),
    );
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  return { tmp, digest: hash.digest("hex"), records };
}

/** The first `count` records after the header of a clean CSV, missing cells empty. */
async function firstRows(file: string, width: number, count: number): Promise<string[][]> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    for (let bytes = HEAD_BYTES; ; bytes *= 4) {
      const buffer = Buffer.alloc(Math.min(bytes, size));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const whole = bytesRead >= size;
      let text = buffer.subarray(0, bytesRead).toString("utf8");
      // Up to the last line break: a record cut there is dropped below, unless the file ended.
      if (!whole) text = text.slice(0, text.lastIndexOf("\n") + 1);
      let records: string[][] | null = null;
      try {
        records = parseDelimited(text, ",").map((record) => record.fields);
      } catch (error) {
        if (!(error instanceof CsvSyntaxError)) throw error;
      }
      // The last record of a cut head may miss a quoted line break's continuation.
      if (records && (whole || records.length > count + 1)) {
        return records.slice(1, count + 1).map((fields) =>
          Array.from({ length: width }, (_, i) => {
            const value = fields[i] ?? "";
            return isMissing(value) ? "" : value;
          }),
        );
      }
      if (whole) return [];
    }
  } finally {
    await handle.close();
  }
}

/** Data records of a clean CSV, read strictly (a ragged line, a stray quote or bad UTF-8 throws). */
async function strictCount(file: string): Promise<number> {
  const scan =
    `read_csv(${sqlString(file)}, header = true, delim = ',', quote = '"', escape = '"', ` +
    `strict_mode = true, encoding = 'utf-8', all_varchar = true, ${duckDbLineOptions()})`;
  return withDuckDb(async (connection) => {
    // One thread: the sandbox parses the same file meanwhile, and it is the longer task.
    await connection.run("SET threads TO 1");
    const counted = await connection.runAndReadAll(`SELECT count(*) AS n FROM ${scan}`);
    return Number(counted.getRowObjects()[0]?.n ?? 0);
  });
}

/**
 * Rows and dtypes of a stored clean CSV from the DataFrame the sandbox loads, with its index,
 * while DuckDB checks the file strictly; null when the sandbox could not say (the caller scans
 * it with DuckDB instead). Throws when the file is not clean.
 */
async function describeByFrame(
  stored: { uri: string; sha256: string },
  header: string[],
  records: RecordLines,
  indexer: FrameIndexer,
): Promise<{ rows: number; dtypes: Dtype[]; index: TableIndex } | null> {
  const provisional: TableRef = {
    id: "table:df",
    name: "df",
    ...stored,
    rows: records.rows.count,
    columns: header.map((name) => ({ name, dtype: "object" })),
  };
  const [rows, framed] = await Promise.all([strictCount(stored.uri), indexer.index(provisional)]);
  if (!("index" in framed)) return null;
  const { index } = framed;
  const dtypes = index.columns.map((column) => column.dtype);
  const agrees =
    index.rowCount === rows &&
    index.columns.length === header.length &&
    index.columns.every((column, i) => column.name === header[i]) &&
    dtypes.every((dtype) => DTYPES.includes(dtype));
  if (!agrees) return null;
  const head = await firstRows(stored.uri, header.length, KEPT_FIRST_ROWS);
  return { rows, dtypes: dtypes as Dtype[], index: { ...index, firstRows: head } };
}

/**
 * Stores a large, clean CSV without parsing it in Node: UTF-8, comma-separated, a header of
 * distinct plain names and regular lines, checked strictly by DuckDB. The stored bytes are the
 * file's own (a UTF-8 BOM dropped), followed on the way for the line each row starts on.
 *
 * With an `indexer` the rows, the dtypes and the cell index come from the DataFrame the sandbox
 * parses (and keeps for the table's code), while DuckDB only checks the file; without one, or
 * when the sandbox cannot say, DuckDB counts the rows and infers the dtypes pandas would.
 * Returns null when the file is not clean, for the full reader to handle (and explain) it.
 */
export async function storeCleanCsv(
  file: string,
  opts: { indexer?: FrameIndexer } = {},
): Promise<FastCsv | null> {
  const head = await readHead(file);
  const bom = UTF8_BOM.every((byte, i) => head[i] === byte) ? UTF8_BOM.length : 0;
  const header = cleanHeader(head.subarray(bom), file);
  if (!header) return null;
  const { tmp, digest, records } = await copyHashed(file, bom);
  // Put in the store by this call (and so removed again when the file proves not clean).
  let placed: { sha256: string; uri: string; fresh: boolean } | null = null;
  // DuckDB counted the rows; lines followed otherwise than it read them are not recorded.
  const linesOf = (rows: number) => (records.rows.count === rows ? records.rows.places() : null);
  try {
    if (opts.indexer) {
      const fresh = !(await stat(path.join(artifactDir(), `${digest}.csv`)).catch(() => null));
      placed = { ...(await adoptArtifact(tmp, digest, "csv")), fresh };
      const framed = await describeByFrame(placed, header, records, opts.indexer);
      if (framed) {
        const { sha256, uri } = placed;
        return {
          ...framed,
          header,
          sha256,
          uri,
          headerLine: records.header,
          lines: linesOf(framed.rows),
        };
      }
    }
    const scanned = await withDuckDb((connection) => scanCsv(connection, placed?.uri ?? tmp));
    if (scanned.header.join("\0") !== header.join("\0")) throw new Error("header read otherwise");
    const stored = placed ?? (await adoptArtifact(tmp, digest, "csv"));
    return {
      ...scanned,
      header,
      ...stored,
      headerLine: records.header,
      lines: linesOf(scanned.rows),
    };
  } catch {
    await rm(tmp, { force: true });
    if (placed?.fresh) await rm(placed.uri, { force: true });
    return null;
  }
}
