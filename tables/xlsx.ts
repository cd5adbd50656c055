import { type CellObject, CFB, type ParsingOptions, read, utils, type WorkBook } from "@e965/xlsx";
import { TableLoadError } from "./errors.js";
import { cellText, type Grid } from "./grid.js";
import { cellKindOfText, type RawCell, type RawSheet, type Span } from "./structure.js";
import {
  checkSheetRanges,
  checkWorkbookZip,
  type WorkbookLimits,
  workbookLimits,
} from "./xlsx-limits.js";

/** One sheet of a workbook as a grid; empty sheets are left out. */
export interface SheetGrid {
  sheet: string;
  grid: SheetTable;
}

const OLE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0];
const PASSWORD_PROBLEM =
  "the workbook is password-protected; open it in Excel, remove the password and save it again";

/** An encrypted .xlsx is an OLE container holding the encrypted package, not a ZIP. */
function isEncrypted(bytes: Buffer): boolean {
  if (!OLE_SIGNATURE.every((byte, i) => bytes[i] === byte)) return false;
  try {
    const container = CFB.read(bytes, { type: "buffer" });
    return Boolean(
      CFB.find(container, "EncryptedPackage") ?? CFB.find(container, "EncryptionInfo"),
    );
  } catch {
    return false;
  }
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** A date cell as pandas would print it: the day alone when there is no time of day. */
function dateText(date: Date): string {
  const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const h = date.getUTCHours();
  const m = date.getUTCMinutes();
  const s = date.getUTCSeconds();
  return h === 0 && m === 0 && s === 0 ? day : `${day} ${pad(h)}:${pad(m)}:${pad(s)}`;
}

function valueText(value: unknown): string {
  return value instanceof Date ? dateText(value) : cellText(value);
}

function openWorkbook(
  bytes: Buffer,
  file: string,
  limits: WorkbookLimits,
  more: ParsingOptions = {},
): WorkBook {
  if (isEncrypted(bytes)) throw new TableLoadError(file, PASSWORD_PROBLEM);
  checkWorkbookZip(bytes, file, limits);
  try {
    return read(bytes, { type: "buffer", cellDates: true, dense: true, UTC: true, ...more });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/password/i.test(message)) throw new TableLoadError(file, PASSWORD_PROBLEM);
    throw new TableLoadError(
      file,
      `not a readable Excel workbook (corrupt, or not really .xlsx/.xls): ${message}`,
      { cause: error },
    );
  }
}

/** A sheet's non-empty rows as text, with their sheet rows and column letters. */
interface SheetCells {
  rows: string[][];
  /** The 1-based sheet row of each of `rows`. */
  rowNumbers: number[];
  /** The letter of each column of `rows`. */
  letters: string[];
  /** Whether a row's non-empty cells are all text (not numbers, dates or booleans). */
  allText: boolean[];
}

/**
 * The sheet's rows as text over its used range (so column letters keep the range's offset),
 * padded to one width, with empty rows and empty trailing columns dropped.
 */
function sheetCells(sheet: WorkBook["Sheets"][string]): SheetCells {
  const ref = sheet["!ref"];
  if (!ref) return { rows: [], rowNumbers: [], letters: [], allText: [] };
  const range = utils.decode_range(ref);
  const letters = Array.from({ length: range.e.c - range.s.c + 1 }, (_, i) =>
    utils.encode_col(range.s.c + i),
  );
  // Keyed by column letter, each row carries its 0-based sheet row as `__rowNum__`.
  const raw = utils.sheet_to_json<Record<string, unknown> & { __rowNum__?: number }>(sheet, {
    header: "A",
    raw: true,
    defval: null,
    blankrows: false,
    UTC: true,
  });
  const rows: string[][] = [];
  const rowNumbers: number[] = [];
  const allText: boolean[] = [];
  for (const [i, record] of raw.entries()) {
    const values = letters.map((letter) => record[letter]);
    const row = values.map(valueText);
    if (row.every((value) => value === "")) continue;
    rows.push(row);
    rowNumbers.push((record.__rowNum__ ?? range.s.r + i) + 1);
    allText.push(values.every((value, c) => row[c] === "" || typeof value === "string"));
  }
  let width = 0;
  for (const row of rows) {
    for (let i = row.length - 1; i >= width; i--) {
      if (row[i] !== "") {
        width = i + 1;
        break;
      }
    }
  }
  return {
    rows: rows.map((row) => row.slice(0, width)),
    rowNumbers,
    letters: letters.slice(0, width),
    allText,
  };
}

/** How many leading rows to look at for titles. */
const MAX_TITLE_ROWS = 5;

function filled(row: readonly string[]): number {
  return row.filter((value) => value !== "").length;
}

/**
 * How many leading rows are titles or captions: rows of one text cell above a header, a row of
 * two or more filled cells that are all text or that a blank row sets apart from the titles.
 */
function titleRows(cells: SheetCells): number {
  const { rows, rowNumbers, allText } = cells;
  for (let n = 0; n < MAX_TITLE_ROWS && n + 1 < rows.length; n++) {
    if (filled(rows[n] ?? []) !== 1 || !allText[n]) return 0;
    const next = filled(rows[n + 1] ?? []);
    if (next === 1) continue;
    const apart = (rowNumbers[n + 1] ?? 0) - (rowNumbers[n] ?? 0) > 1;
    return next >= 2 && (allText[n + 1] || apart) ? n + 1 : 0;
  }
  return 0;
}

/** A sheet's table: its header, its rows, and where they are in the sheet. */
export interface SheetTable extends Grid {
  /** The sheet row (1-based) of the header. */
  headerRow: number;
  /** The sheet row (1-based) of each row. */
  rowNumbers: number[];
  /** The column letter of each column. */
  letters: string[];
}

/**
 * The sheet's table: title rows skipped (with a warning), then the first row the header and
 * empty leading columns (a title's) dropped; null when the sheet is empty.
 */
function sheetTable(sheet: WorkBook["Sheets"][string]): SheetTable | null {
  const cells = sheetCells(sheet);
  const titles = titleRows(cells);
  const rows = cells.rows.slice(titles);
  const rowNumbers = cells.rowNumbers.slice(titles);
  const [header, ...data] = rows;
  const [headerRow, ...dataRows] = rowNumbers;
  if (!header || headerRow === undefined) return null;
  let from = 0;
  while (from < header.length - 1 && rows.every((row) => row[from] === "")) from++;
  const warnings = cells.rows.slice(0, titles).map((row, i) => {
    const title = row.find((value) => value !== "") ?? "";
    return `skipped title row ${cells.rowNumbers[i]} (${JSON.stringify(title)}) above the header`;
  });
  return {
    header: header.slice(from),
    rows: data.map((row) => row.slice(from)),
    warnings,
    headerRow,
    rowNumbers: dataRows,
    letters: cells.letters.slice(from),
  };
}

/**
 * Every non-empty sheet of an .xlsx or .xls workbook, in workbook order; each sheet's first
 * non-empty row is its header, after any title rows (a lone filled cell above a header of text),
 * which are skipped with a warning. Each table says where it is: the sheet rows of its header
 * and rows, and its columns' letters. Dates become `YYYY-MM-DD` (with ` HH:MM:SS` when they have a
 * time), numbers and booleans their plain text, formulas their cached values. Throws a
 * TableLoadError for `file` when the workbook is encrypted, corrupt, or has no data, or when it
 * would unzip to more bytes or hold more cells than `limits` allow (by default those the
 * environment sets; see xlsx-limits.ts), before reading it.
 */
export function gridsFromWorkbook(
  bytes: Buffer,
  file: string,
  limits: WorkbookLimits = workbookLimits(file),
): SheetGrid[] {
  const workbook = openWorkbook(bytes, file, limits);
  checkSheetRanges(workbook, file, limits);
  const sheets: SheetGrid[] = [];
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (!sheet) continue;
    const grid = sheetTable(sheet);
    if (grid) sheets.push({ sheet: name, grid });
  }
  if (sheets.length === 0) {
    const names = workbook.SheetNames.map((n) => JSON.stringify(n)).join(", ");
    throw new TableLoadError(file, `the workbook has no data in any sheet (${names || "none"})`);
  }
  return sheets;
}

// --- the raw sheets, for reading their structure (structure.ts) -------------------------------

/** One sheet as read for its structure: merges, hidden rows and columns, formulas. */
export interface RawWorkbookSheet {
  sheet: string;
  /** Hidden or very hidden in the workbook. */
  hidden: boolean;
  raw: RawSheet;
}

const EMPTY: RawCell = { text: "", kind: "empty" };

/** A cell's text and kind from its type; a formula's cached value stands for it. */
function rawCell(cell: CellObject | undefined): RawCell {
  if (!cell) return EMPTY;
  const formula = typeof cell.f === "string" && cell.f !== "";
  const value = cell.v;
  let found: RawCell = EMPTY;
  if (value instanceof Date) found = { text: dateText(value), kind: "date" };
  else if (cell.t === "e") found = { text: cell.w ?? String(value ?? ""), kind: "text" };
  else if (typeof value === "string") {
    found = value.trim() === "" ? EMPTY : { text: value, kind: cellKindOfText(value) };
  } else if (typeof value === "number") {
    const text = cellText(value);
    const shown = cell.w?.trim();
    found = { text, kind: "number", ...(shown && shown !== text ? { shown } : {}) };
  } else if (typeof value === "boolean") found = { text: cellText(value), kind: "bool" };
  return formula ? { ...found, formula: true } : found;
}

/** The smallest rectangle holding every cell with a value or a formula, or null. */
function filledBox(rows: readonly (CellObject[] | undefined)[]) {
  let box: { r0: number; c0: number; r1: number; c1: number } | null = null;
  for (const [r, row] of rows.entries()) {
    if (!row) continue;
    for (const [c, cell] of row.entries()) {
      if (rawCell(cell) === EMPTY) continue;
      if (!box) box = { r0: r, c0: c, r1: r, c1: c };
      else {
        box.r0 = Math.min(box.r0, r);
        box.r1 = Math.max(box.r1, r);
        box.c0 = Math.min(box.c0, c);
        box.c1 = Math.max(box.c1, c);
      }
    }
  }
  return box;
}

function rawSheet(sheet: WorkBook["Sheets"][string]): RawSheet | null {
  const rows = sheet["!data"] ?? [];
  const box = filledBox(rows);
  if (!box) return null;
  const height = box.r1 - box.r0 + 1;
  const width = box.c1 - box.c0 + 1;
  const cells = Array.from({ length: height }, (_, i) => {
    const row = rows[box.r0 + i];
    return Array.from({ length: width }, (_, j) => rawCell(row?.[box.c0 + j]));
  });
  const merges: Span[] = [];
  for (const { s, e } of sheet["!merges"] ?? []) {
    const span = {
      row0: Math.max(s.r, box.r0) - box.r0,
      col0: Math.max(s.c, box.c0) - box.c0,
      row1: Math.min(e.r, box.r1) - box.r0,
      col1: Math.min(e.c, box.c1) - box.c0,
    };
    if (span.row0 <= span.row1 && span.col0 <= span.col1) merges.push(span);
  }
  const hiddenRows: number[] = [];
  for (let i = 0; i < height; i++) if (sheet["!rows"]?.[box.r0 + i]?.hidden) hiddenRows.push(i);
  const hiddenColumns: number[] = [];
  for (let j = 0; j < width; j++) if (sheet["!cols"]?.[box.c0 + j]?.hidden) hiddenColumns.push(j);
  return {
    cells,
    rowNumbers: Array.from({ length: height }, (_, i) => box.r0 + i + 1),
    letters: Array.from({ length: width }, (_, j) => utils.encode_col(box.c0 + j)),
    merges,
    hiddenRows,
    hiddenColumns,
  };
}

/**
 * Every non-empty sheet of a workbook as a RawSheet over the rectangle its cells fill, for
 * readStructure: merged ranges, hidden rows and columns, hidden and very hidden sheets, formula
 * cells (their cached values, marked as formulas), each cell's kind from its type (text cells
 * classified by cellKindOfText). Refuses what gridsFromWorkbook refuses, with the same errors.
 */
export function rawSheetsFromWorkbook(
  bytes: Buffer,
  file: string,
  limits: WorkbookLimits = workbookLimits(file),
): RawWorkbookSheet[] {
  // cellStyles is what makes SheetJS read the rows' and columns' hidden flags.
  const workbook = openWorkbook(bytes, file, limits, { cellFormula: true, cellStyles: true });
  checkSheetRanges(workbook, file, limits);
  const states = workbook.Workbook?.Sheets ?? [];
  const sheets: RawWorkbookSheet[] = [];
  for (const [i, name] of workbook.SheetNames.entries()) {
    const sheet = workbook.Sheets[name];
    const raw = sheet ? rawSheet(sheet) : null;
    const state = (states.find((s) => s.name === name) ?? states[i])?.Hidden ?? 0;
    if (raw) sheets.push({ sheet: name, hidden: state !== 0, raw });
  }
  if (sheets.length === 0) {
    const names = workbook.SheetNames.map((n) => JSON.stringify(n)).join(", ");
    throw new TableLoadError(file, `the workbook has no data in any sheet (${names || "none"})`);
  }
  return sheets;
}
