import type { ReadTable } from "./reading.js";

/** A sheet of words about the others: what the workbook holds, or notes on it. */
export type SheetRole = "contents" | "notes";

/** Characters a notes sheet's cells run to, on average, at least: paragraphs, not labels. */
const NOTE_CHARS = 40;

const NUMBER = /^[-+(]?[\d\s.,'%$€£]+\)?$/;

/**
 * A sheet that is no data but words about the workbook (hardly a number in it): its contents
 * (most of its rows name another sheet) or its notes (paragraphs). Null for a data sheet.
 */
export function sheetRole(
  tables: readonly ReadTable[],
  others: readonly string[],
): SheetRole | null {
  const rows = tables
    .flatMap((t) => [t.title.map((line) => [line]), [t.header], t.text].flat())
    .map((row) => row.map((cell) => cell.trim()).filter((cell) => cell !== ""))
    .filter((row) => row.length > 0);
  const cells = rows.flat();
  if (cells.length === 0) return null;
  // Words, not data: no more than one cell in ten a number.
  if (cells.filter((cell) => NUMBER.test(cell)).length * 10 > cells.length) return null;
  const names = new Set(others.map((name) => name.trim().toLowerCase()));
  const naming = rows.filter((row) => row.some((cell) => names.has(cell.toLowerCase()))).length;
  if (names.size >= 2 && naming >= 2 && naming * 2 >= rows.length) return "contents";
  const chars = cells.reduce((sum, cell) => sum + cell.length, 0);
  return chars >= NOTE_CHARS * cells.length ? "notes" : null;
}
