/** Cells as the structure reader (structure.ts) sees them: kinds from text, plain numbers. */
import type { CellKind, RawCell, RawSheet } from "./structure.js";

const MONTH =
  "(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?";

const DATES = [
  /^\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
  /^\d{4}\/\d{1,2}\/\d{1,2}$/,
  /^\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})$/,
  new RegExp(`^\\d{1,2}\\.?[ -]${MONTH}[ -]\\d{2,4}$`, "i"),
  new RegExp(`^${MONTH} \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}$`, "i"),
  new RegExp(`^${MONTH} \\d{4}$`, "i"),
];

/** Digits as tables write them: thousands by comma, dot or space, a decimal point or comma. */
const DIGITS =
  /^(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?|[.,]\d+)(?:e[-+]?\d+)?$/i;
const CURRENCY_BEFORE = /^[$€£¥₹]\s*/;
const CURRENCY_AFTER = /\s*[$€£¥₹]$/;
const SIGN = /^[-+\u2212]\s*/;
const PLAIN_NUMBER = /^-?\d{1,15}(?:\.\d+)?$/;
/** How a number or a date can start. */
export const NUMBER_START = /^[\d.,(+\-\u2212$€£¥₹]/;
const MONTH_START = new RegExp(`^${MONTH}`, "i");

/** The digits of a number-like text with its sign, parentheses, currency and percent taken off. */
function numberDigits(text: string): string | null {
  let t = text.trim();
  if (t.startsWith("(") && t.endsWith(")")) t = t.slice(1, -1).trim();
  t = t.replace(SIGN, "").replace(CURRENCY_BEFORE, "").replace(SIGN, "");
  t = t.replace(/\s*%$/, "").replace(CURRENCY_AFTER, "");
  return DIGITS.test(t) ? t : null;
}

/** Text cells classified from text alone ("1,250", "$3.5", "12%", "(40)", "2024-03-01" count as number/date-like). */
export function cellKindOfText(text: string): CellKind {
  const t = text.trim();
  if (t === "") return "empty";
  if (PLAIN_NUMBER.test(t)) return "number";
  // Most words are settled by their first letter, without trying every pattern.
  if (!NUMBER_START.test(t)) {
    if (!MONTH_START.test(t)) return /^(?:true|false)$/i.test(t) ? "bool" : "text";
    return DATES.some((pattern) => pattern.test(t)) ? "date" : "text";
  }
  if (DATES.some((pattern) => pattern.test(t))) return "date";
  return numberDigits(t) === null ? "text" : "number";
}

/**
 * A plain number: optional sign or parentheses, currency sign, thousands commas and a decimal
 * point ("$1,250,400", "(40)", "-3.5"); null for anything else, percent and decimal commas
 * included (those are values.ts's to read).
 */
export function plainNumber(text: string): number | null {
  let t = text.trim();
  let negative = false;
  if (t.startsWith("(") && t.endsWith(")")) {
    negative = true;
    t = t.slice(1, -1).trim();
  }
  for (let i = 0; i < 2; i++) {
    if (SIGN.test(t)) {
      negative = negative !== /^[-\u2212]/.test(t);
      t = t.replace(SIGN, "");
    }
    t = t.replace(CURRENCY_BEFORE, "");
  }
  if (!/^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^\.\d+$/.test(t)) return null;
  const value = Number(t.replaceAll(",", ""));
  return negative ? -value : value;
}

export const EMPTY_CELL: RawCell = { text: "", kind: "empty" };

function cellOfText(text: string): RawCell {
  const kind = cellKindOfText(text);
  return kind === "empty" && text === "" ? EMPTY_CELL : { text, kind };
}

/** A text table (CSV lines or TableBench's {columns, data}) as a RawSheet: the header line is row 0. */
export function rawSheetFromRows(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  lines?: { header: number; rows: number[] },
): RawSheet {
  let width = header.length;
  for (const row of rows) width = Math.max(width, row.length);
  const toCells = (values: readonly string[]) =>
    Array.from({ length: width }, (_, i) => cellOfText(values[i] ?? ""));
  const cells = [toCells(header), ...rows.map(toCells)];
  const rowNumbers = lines
    ? [lines.header, ...rows.map((_, i) => lines.rows[i] ?? lines.header + i + 1)]
    : cells.map((_, i) => i + 1);
  return { cells, rowNumbers, merges: [], hiddenRows: [], hiddenColumns: [] };
}
