/**
 * Limits on what a workbook may grow into once read, checked before it is read (issue 22).
 *
 * SheetJS unzips every part of an .xlsx into memory and splits the sheets' XML into one string
 * per cell before anything else happens, so a small file can take gigabytes: a 3.75 MB zip of
 * 1.5 GB of XML, or 1.2 MB holding 25 million cells. `checkWorkbookZip` walks the zip the way
 * SheetJS will, inflating each part in small pieces that are counted and dropped, and refuses
 * once the parts (as unzipped, or as their headers claim, whichever is more) pass `maxBytes` or
 * their cell tags pass `maxCells`: its own memory stays a few megabytes whatever the file says.
 * `checkSheetRanges` then bounds what the sheets will be read over once parsed: every row with
 * data is read across its sheet's whole range, which a claimed dimension or one far-off cell
 * makes 16,384 columns wide (20,000 one-cell rows took 4 GB and died).
 *
 * Operators raise the limits with TABLEMINDS_XLSX_MAX_BYTES and TABLEMINDS_XLSX_MAX_CELLS.
 */
import path from "node:path";
import { utils, type WorkBook } from "@e965/xlsx";
import { InflateRaw } from "minizlib";
import { READER_LIMITS } from "../settings/limits.js";
import { binaryKind, TableLoadError, tableLimit } from "./errors.js";

/**
 * Unzipped bytes a workbook may hold: SheetJS holds two to three times as much while reading,
 * and cannot read a part above 512 MB at all (V8's longest string; it reads it as empty).
 */
export const DEFAULT_XLSX_MAX_BYTES = READER_LIMITS.xlsxMaxBytes.fallback;
/**
 * Cells a workbook's sheets may hold (or be read over): reading 5 million took 1.3 GB and 50 s
 * here; a million rows of four columns pass.
 */
export const DEFAULT_XLSX_MAX_CELLS = READER_LIMITS.xlsxMaxCells.fallback;

export interface WorkbookLimits {
  /** Unzipped bytes, summed over the zip's parts; Infinity for no limit. */
  maxBytes: number;
  /** Cells, summed over the sheets; Infinity for no limit. */
  maxCells: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The limits for reading `file`: TABLEMINDS_XLSX_MAX_BYTES and TABLEMINDS_XLSX_MAX_CELLS when
 * set, else the defaults. Throws a TableLoadError for `file` when one is not a whole number.
 */
export function workbookLimits(file: string, env?: Env): WorkbookLimits {
  return {
    maxBytes: tableLimit("xlsxMaxBytes", file, env),
    maxCells: tableLimit("xlsxMaxCells", file, env),
  };
}

const unlimited = (limits: WorkbookLimits) =>
  limits.maxBytes === Number.POSITIVE_INFINITY && limits.maxCells === Number.POSITIVE_INFINITY;

function sizeText(bytes: number): string {
  const [amount, unit] =
    bytes >= 1024 * 1024
      ? [bytes / 1024 / 1024, "MB"]
      : bytes >= 1024
        ? [bytes / 1024, "KB"]
        : [bytes, "bytes"];
  return `${Number(amount.toFixed(1))} ${unit}`;
}

const countText = (n: number) => n.toLocaleString("en-US");

// --- counting cells ------------------------------------------------------------------------

const LT = 0x3c;
const COLON = 0x3a;
const LOWER_C = 0x63;

/** `\w` of a regular expression: a letter, a digit or `_`. */
function isWordByte(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f
  );
}

/** The byte after a cell tag's name: a space, `/` or `>`. */
const endsCellName = (b: number) => b === 0x20 || b === 0x2f || b === 0x3e;

/** Where a scan stands between pieces: in text, or part way into `<`, `<c`, `<x`, `<x:`, `<x:c`. */
const TEXT = 0;
const OPEN = 1;
const C = 2;
const PREFIX = 3;
const AFTER_COLON = 4;
const PREFIXED_C = 5;

/**
 * Counts the cell tags of XML given in pieces, as SheetJS splits a row into cells: every match
 * of `<(?:\w+:)?c[ \/>]`, a tag cut between two pieces included.
 */
export class CellTagCounter {
  count = 0;
  #at = TEXT;

  push(piece: Uint8Array): void {
    let at = this.#at;
    let count = this.count;
    for (let i = 0, n = piece.length; i < n; i++) {
      const b = piece[i] as number;
      if (b === LT) at = OPEN;
      else if (at === TEXT) continue;
      else if (at === OPEN) at = b === LOWER_C ? C : isWordByte(b) ? PREFIX : TEXT;
      else if (at === C) {
        if (endsCellName(b)) {
          count++;
          at = TEXT;
        } else at = b === COLON ? AFTER_COLON : isWordByte(b) ? PREFIX : TEXT;
      } else if (at === PREFIX) at = b === COLON ? AFTER_COLON : isWordByte(b) ? PREFIX : TEXT;
      else if (at === AFTER_COLON) at = b === LOWER_C ? PREFIXED_C : TEXT;
      else {
        if (endsCellName(b)) count++;
        at = TEXT;
      }
    }
    this.#at = at;
    this.count = count;
  }
}

// --- inflating -----------------------------------------------------------------------------

/** Compressed bytes given to zlib at a time: their output (up to ~1000 times more) is held at once. */
const INPUT_PIECE = 8 * 1024;

interface Inflated {
  /** Compressed bytes read: up to the stream's end when it ended. */
  consumed: number;
  outcome: "ended" | "stopped" | "corrupt";
  /** What zlib said, when corrupt. */
  problem?: string;
}

/**
 * Inflates the raw deflate stream that starts at `from`, giving each piece of output to `take`
 * (and keeping none), until the stream ends, `take` returns false, or the data is bad or runs
 * out. minizlib drives Node's zlib synchronously, so a piece is seen as soon as it is out.
 */
function inflateFrom(bytes: Buffer, from: number, take: (piece: Buffer) => boolean): Inflated {
  const inflater = new InflateRaw({});
  let stopped = false;
  let failure: Error | undefined;
  inflater.on("data", (piece: Buffer) => {
    if (!stopped && !take(piece)) stopped = true;
  });
  inflater.on("error", (error: unknown) => {
    failure = error instanceof Error ? error : new Error(String(error));
  });
  let at = from;
  try {
    while (!stopped && !failure) {
      if (at >= bytes.length) {
        inflater.end(); // the input ran out: fine only when the stream ended with it
        break;
      }
      const piece = bytes.subarray(at, Math.min(at + INPUT_PIECE, bytes.length));
      inflater.write(piece);
      if (failure) break;
      // zlib stops reading at the stream's end; what it left is the zip's next record.
      const used = inflater.handle?.bytesWritten ?? piece.length;
      at += used;
      if (used < piece.length) return { consumed: at - from, outcome: "ended" };
    }
  } finally {
    inflater.close();
  }
  if (failure) {
    const problem = failure.message.replace(/^zlib: /, "");
    return { consumed: at - from, outcome: "corrupt", problem };
  }
  return { consumed: at - from, outcome: stopped ? "stopped" : "ended" };
}

// --- the zip, read as SheetJS reads it -----------------------------------------------------

/**
 * Reads of the zip as SheetJS's own make them, so that the walk meets the parts it will read:
 * two bytes are NaN past the end, four bytes take 0 for each byte past it.
 */
class ZipBytes {
  constructor(readonly bytes: Buffer) {}

  u16(at: number): number {
    const { bytes } = this;
    return (bytes[at + 1] ?? Number.NaN) * 256 + (bytes[at] ?? Number.NaN);
  }

  u32(at: number): number {
    const { bytes } = this;
    const byte = (i: number) => bytes[at + i] ?? 0;
    return byte(3) * 2 ** 24 + byte(2) * 2 ** 16 + byte(1) * 2 ** 8 + byte(0);
  }

  /** Buffer#subarray's reading of a start: NaN is 0, a negative one counts from the end. */
  start(at: number): number {
    const length = this.bytes.length;
    if (Number.isNaN(at)) return 0;
    const whole = Math.trunc(at);
    return whole < 0 ? Math.max(length + whole, 0) : Math.min(whole, length);
  }

  slice(from: number, to: number): Buffer {
    return this.bytes.subarray(this.start(from), Math.max(this.start(from), this.start(to)));
  }

  /** The ZIP64 sizes of an extra field, as SheetJS reads them (any other field is skipped). */
  zip64(field: Buffer): { usz?: number; csz?: number } {
    const extra = new ZipBytes(field);
    let found: { usz?: number; csz?: number } = {};
    let at = 0;
    while (at <= field.length - 4) {
      const type = extra.u16(at);
      const size = extra.u16(at + 2);
      if (type === 0x0001) {
        found = {
          usz: extra.u32(at + 8) * 2 ** 32 + extra.u32(at + 4),
          csz: extra.u32(at + 16) * 2 ** 32 + extra.u32(at + 12),
        };
      }
      at += 4 + size;
    }
    return found;
  }
}

const END_OF_CENTRAL_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const DATA_DESCRIPTOR = 0x08074b50;

/** SheetJS reads bytes as a zip when they start `PK` and two bytes below 9. */
function looksLikeZip(bytes: Buffer): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] ?? 9) < 9 && (bytes[3] ?? 9) < 9;
}

/** What the parts have cost so far, refusing as soon as a limit is passed. */
class Tally {
  bytes = 0;
  cells = 0;

  constructor(
    readonly file: string,
    readonly limits: WorkbookLimits,
  ) {}

  addBytes(n: number, part: string): void {
    this.bytes += n;
    if (this.bytes <= this.limits.maxBytes) return;
    throw new TableLoadError(
      this.file,
      `refused: it expands to more than ${sizeText(this.limits.maxBytes)} when unzipped ` +
        `(passed in ${part}; a zip bomb?); raise ${READER_LIMITS.xlsxMaxBytes.variable} to read it`,
    );
  }

  addCells(n: number, part: string): void {
    this.cells += n;
    if (this.cells <= this.limits.maxCells) return;
    throw new TableLoadError(
      this.file,
      `refused: its sheets hold more than ${countText(this.limits.maxCells)} cells ` +
        `(passed in ${part}; a cell bomb?); raise ${READER_LIMITS.xlsxMaxCells.variable} to read it`,
    );
  }

  corrupt(part: string, problem: string): TableLoadError {
    return new TableLoadError(
      this.file,
      `not a readable Excel workbook (corrupt, or not really .xlsx/.xls): its part ${part} does not unzip (${problem})`,
    );
  }
}

/**
 * Counts one part: its bytes (the most of what its header claims, which SheetJS allocates, what
 * it inflates to, and the compressed bytes read) and its cell tags. Returns the compressed
 * bytes read, or null when SheetJS would stop at this part (a method it cannot read).
 */
function countPart(
  zip: ZipBytes,
  tally: Tally,
  part: { name: string; method: number; dataAt: number; csz: number; usz: number },
): number | null {
  const cells = new CellTagCounter();
  let counted = 0;
  const countCells = () => {
    tally.addCells(cells.count - counted, part.name);
    counted = cells.count;
  };
  if (part.method === 0) {
    const data = zip.slice(part.dataAt, part.dataAt + part.csz);
    tally.addBytes(data.length, part.name);
    cells.push(data);
    countCells();
    return part.csz;
  }
  if (part.method !== 8) return null;
  tally.addBytes(part.usz, part.name);
  let charged = part.usz;
  let inflated = 0;
  let refusal: unknown;
  const result = inflateFrom(zip.bytes, zip.start(part.dataAt), (piece) => {
    try {
      inflated += piece.length;
      if (inflated > charged) {
        tally.addBytes(inflated - charged, part.name);
        charged = inflated;
      }
      cells.push(piece);
      countCells();
      return true;
    } catch (error) {
      refusal = error;
      return false;
    }
  });
  if (refusal) throw refusal;
  if (result.outcome === "corrupt") throw tally.corrupt(part.name, result.problem ?? "bad data");
  if (result.consumed > charged) tally.addBytes(result.consumed - charged, part.name);
  return result.consumed;
}

// --- what the bytes are --------------------------------------------------------------------

const OLE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
/** Extensions whose workbooks are ZIP archives (Office Open XML). */
const ZIPPED = [".xlsx", ".xlsm"];
/** Characters of a text file's start shown when it is refused as a workbook. */
const SHOWN_TEXT = 40;

function firstBytes(bytes: Buffer): string {
  return [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join(" ");
}

/** What the bytes look like, for a refusal: text (and how it starts) or a kind of binary file. */
function whatItIs(bytes: Buffer): string {
  const binary = binaryKind(bytes);
  if (binary) return `looks like ${binary} (it starts with bytes ${firstBytes(bytes)})`;
  const start = bytes.subarray(0, 256).toString("utf8").split(/\r?\n/)[0] ?? "";
  const shown = start.length > SHOWN_TEXT ? `${start.slice(0, SHOWN_TEXT)}...` : start;
  const csv = /[,;\t]/.test(start) ? " (a CSV or TSV file? name it .csv or .tsv)" : "";
  return `is text starting ${JSON.stringify(shown)}${csv}`;
}

/**
 * Refuses, in a TableLoadError naming `file`, bytes that are no workbook of its kind, before
 * SheetJS reads them: it reads any bytes it does not recognize as a sheet of text, so random
 * bytes or a CSV named .xlsx came out as a table of garbage. An .xlsx or .xlsm workbook is a
 * complete ZIP archive (or, saved by an old Excel under the new name, an OLE file); an .xls one
 * an OLE file, a ZIP archive, or text (the HTML, XML and tab-separated files many programs
 * export as .xls), never binary bytes of another kind.
 */
export function checkWorkbookKind(bytes: Buffer, file: string): void {
  if (OLE_SIGNATURE.every((byte, i) => bytes[i] === byte)) return;
  const extension = path.extname(file).toLowerCase();
  if (looksLikeZip(bytes)) {
    if (bytes.lastIndexOf(END_OF_CENTRAL_DIRECTORY) !== -1) return;
    throw new TableLoadError(
      file,
      "not a readable Excel workbook: its ZIP archive is cut short (it has no end record); copy or download the file again",
    );
  }
  if (!ZIPPED.includes(extension) && binaryKind(bytes) === null) return;
  const expected = ZIPPED.includes(extension)
    ? `an ${extension} workbook is a ZIP archive`
    : `an ${extension} workbook is an OLE or ZIP file`;
  throw new TableLoadError(
    file,
    `not an Excel workbook (corrupt, or another kind of file): ${expected}, and this file ${whatItIs(bytes)}`,
  );
}

/**
 * Refuses a zipped workbook (.xlsx, .xlsm) whose parts unzip to more than `limits.maxBytes`
 * or whose sheets hold more than `limits.maxCells` cell tags, in a TableLoadError naming `file`
 * and the setting that raises the limit; or whose compressed data is corrupt. It follows the
 * central directory as SheetJS does (odd fields read the same way), and stops where SheetJS
 * would throw: the read that follows reports that. Bytes that are no workbook of `file`'s kind
 * are refused first (checkWorkbookKind).
 */
export function checkWorkbookZip(bytes: Buffer, file: string, limits: WorkbookLimits): void {
  checkWorkbookKind(bytes, file);
  if (!looksLikeZip(bytes) || unlimited(limits)) return;
  const zip = new ZipBytes(bytes);
  const tally = new Tally(file, limits);
  const end = bytes.lastIndexOf(END_OF_CENTRAL_DIRECTORY, bytes.length - 4);
  const entries = zip.u16(end + 8);
  let at = zip.u32(end + 16);
  for (let i = 0; i < entries; i++) {
    let csz = zip.u32(at + 20);
    let usz = zip.u32(at + 24);
    const nameLength = zip.u16(at + 28);
    const extraLength = zip.u16(at + 30);
    const commentLength = zip.u16(at + 32);
    const offset = zip.u32(at + 42);
    at += 46;
    const central = zip.zip64(zip.slice(at + nameLength, at + nameLength + extraLength));
    at += nameLength + extraLength + commentLength;
    if (central.usz) usz = central.usz;
    if (central.csz) csz = central.csz;

    // The local header, which SheetJS trusts over the central one.
    let local = offset + 6;
    const flags = zip.u16(local);
    const method = zip.u16(local + 2);
    // Flags tested as SheetJS tests them: NaN (past the end) has none set.
    if (flags & 0x2041) return; // encrypted: SheetJS refuses it
    let localCsz = zip.u32(local + 12);
    let localUsz = zip.u32(local + 16);
    const localNameLength = zip.u16(local + 20);
    const localExtraLength = zip.u16(local + 22);
    local += 24;
    const name = Number.isNaN(localNameLength)
      ? ""
      : zip.slice(local, local + localNameLength).toString("latin1");
    local += Number.isNaN(localNameLength) ? 0 : localNameLength;
    if (localExtraLength) {
      const own = zip.zip64(zip.slice(local, local + localExtraLength));
      if (own.usz) localUsz = own.usz;
      if (own.csz) localCsz = own.csz;
      if (central.usz) localUsz = central.usz;
      if (central.csz) localCsz = central.csz;
    }
    local += localExtraLength;
    const read = countPart(zip, tally, {
      name: name || `entry ${i + 1}`,
      method,
      dataAt: local,
      csz: localCsz,
      usz: localUsz,
    });
    if (read === null) return; // a method SheetJS cannot read: it refuses the file
    local += read;
    // The sizes again after the data, when the header left them out: SheetJS refuses a
    // workbook whose sizes disagree, unless a signature marks that record (then it warns).
    let warnOnly = false;
    if (flags & 8) {
      let after = local;
      if (zip.u32(after) === DATA_DESCRIPTOR) {
        after += 4;
        warnOnly = true;
      }
      localCsz = zip.u32(after + 4);
      localUsz = zip.u32(after + 8);
    }
    if (!warnOnly && (localCsz !== csz || localUsz !== usz)) return;
  }
}

// --- the sheets' ranges --------------------------------------------------------------------

/**
 * The cells reading a sheet goes through: each row of its range that holds anything is read
 * across the range's full width (and kept so until it is cut to the table), and every row of
 * the range is visited. One cell far to the side makes every row as wide as the sheet.
 */
function cellsToRead(sheet: WorkBook["Sheets"][string], maxCells: number) {
  const ref = sheet["!ref"];
  if (!ref) return null;
  const { s, e } = utils.decode_range(ref);
  const width = e.c - s.c + 1;
  const height = e.r - s.r + 1;
  if (!(width > 0 && height > 0)) return null;
  const rows = sheet["!data"];
  if (!rows || height > maxCells) {
    return {
      ref,
      cells: height * width,
      why: `${countText(width)} columns by ${countText(height)} rows`,
    };
  }
  let filled = 0;
  for (let r = s.r; r <= e.r; r++) if (rows[r]) filled++;
  const why = `${countText(width)} columns by ${countText(filled)} rows with data`;
  return { ref, cells: Math.max(filled * width, height), why };
}

/**
 * Refuses a read workbook whose sheets would be read over more than `limits.maxCells` cells in
 * all (see cellsToRead): a range a few bytes of XML set to the whole grid, or a stray cell far
 * from the table, makes that billions of cells, and gigabytes, in a file of a few kilobytes.
 */
export function checkSheetRanges(workbook: WorkBook, file: string, limits: WorkbookLimits): void {
  if (limits.maxCells === Number.POSITIVE_INFINITY) return;
  let total = 0;
  let widest: { sheet: string; ref: string; cells: number; why: string } | null = null;
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    const read = sheet ? cellsToRead(sheet, limits.maxCells) : null;
    if (!read) continue;
    total += read.cells;
    if (!widest || read.cells > widest.cells) widest = { sheet: name, ...read };
  }
  if (total <= limits.maxCells || !widest) return;
  const { sheet, ref, cells, why } = widest;
  throw new TableLoadError(
    file,
    `refused: sheet ${JSON.stringify(sheet)} spans ${ref}, ${countText(cells)} cells to read ` +
      `(${why}), past the ${countText(limits.maxCells)} allowed for all sheets ` +
      `(a cell far from the table, or a bomb?); raise ${READER_LIMITS.xlsxMaxCells.variable} to read it`,
  );
}
