import { CFB, read, utils, type WorkBook } from "@e965/xlsx";
import { TableLoadError } from "./errors.js";
import { cellText, type Grid } from "./grid.js";

/** One sheet of a workbook as a grid; empty sheets are left out. */
export interface SheetGrid {
  sheet: string;
  grid: Grid;
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

function openWorkbook(bytes: Buffer, file: string): WorkBook {
  if (isEncrypted(bytes)) throw new TableLoadError(file, PASSWORD_PROBLEM);
  try {
    return read(bytes, { type: "buffer", cellDates: true, dense: true, UTC: true });
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

/** The sheet's rows as text, padded to one width, with empty trailing columns dropped. */
function sheetRows(sheet: WorkBook["Sheets"][string]): string[][] {
  const raw = utils.sheet_to_json<unknown[]>(sheet, {
    header: 1,
    raw: true,
    defval: null,
    blankrows: false,
    UTC: true,
  });
  const rows = raw.map((row) => row.map(valueText));
  let width = 0;
  for (const row of rows) {
    for (let i = row.length - 1; i >= width; i--) {
      if (row[i] !== "") {
        width = i + 1;
        break;
      }
    }
  }
  return rows
    .map((row) => Array.from({ length: width }, (_, i) => row[i] ?? ""))
    .filter((row) => row.some((value) => value !== ""));
}

/**
 * Every non-empty sheet of an .xlsx or .xls workbook, in workbook order; each sheet's first
 * non-empty row is its header. Dates become `YYYY-MM-DD` (with ` HH:MM:SS` when they have a
 * time), numbers and booleans their plain text, formulas their cached values. Throws a
 * TableLoadError for `file` when the workbook is encrypted, corrupt, or has no data.
 */
export function gridsFromWorkbook(bytes: Buffer, file: string): SheetGrid[] {
  const workbook = openWorkbook(bytes, file);
  const sheets: SheetGrid[] = [];
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (!sheet) continue;
    const [header, ...rows] = sheetRows(sheet);
    if (!header) continue;
    sheets.push({ sheet: name, grid: { header, rows } });
  }
  if (sheets.length === 0) {
    const names = workbook.SheetNames.map((n) => JSON.stringify(n)).join(", ");
    throw new TableLoadError(file, `the workbook has no data in any sheet (${names || "none"})`);
  }
  return sheets;
}
