/**
 * Column dtypes as pandas `read_csv` (default options) would infer them for the stored
 * CSV. Simplified: no dates, no thousands separators, decimal point only.
 *
 * - missing: the empty string and pandas' default NA spellings ("NA", "null", "nan", ...)
 * - `int64`: every value an integer, none missing (`uint64` / `object` past the int64 range)
 * - `float64`: every present value a number, or integers with some missing, or all missing
 * - `bool`: only True/TRUE/true/False/FALSE/false, none missing
 * - `object`: anything else, and every column of a table with no rows
 */
export type Dtype = "int64" | "uint64" | "float64" | "bool" | "object";

/** The dtype of dates the reader read from other text: the code's frame holds them as dates. */
export const DATETIME_DTYPE = "datetime64[ns]";

export const NA_VALUES: ReadonlySet<string> = new Set([
  "",
  "#N/A",
  "#N/A N/A",
  "#NA",
  "-1.#IND",
  "-1.#QNAN",
  "-NaN",
  "-nan",
  "1.#IND",
  "1.#QNAN",
  "<NA>",
  "N/A",
  "NA",
  "NULL",
  "NaN",
  "None",
  "n/a",
  "nan",
  "null",
]);

const BOOL_VALUES: ReadonlySet<string> = new Set([
  "True",
  "TRUE",
  "true",
  "False",
  "FALSE",
  "false",
]);
const TRUE_VALUES: ReadonlySet<string> = new Set(["True", "TRUE", "true"]);
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?inf(?:inity)?$/i;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

export function isMissing(value: string): boolean {
  return NA_VALUES.has(value);
}

export function isTrue(value: string): boolean {
  return TRUE_VALUES.has(value);
}

/** The number a cell of a numeric column holds, or null when it is missing or not a number. */
export function numericValue(value: string): number | null {
  if (isMissing(value)) return null;
  const text = value.trim();
  if (!DECIMAL.test(text)) return null;
  const lower = text.toLowerCase();
  if (lower.endsWith("inf") || lower.endsWith("infinity")) {
    return lower.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  return Number(text);
}

export function isNumericDtype(dtype: string): boolean {
  return /^(?:u?int|float)\d*$/i.test(dtype);
}

type IntegerRange = "int64" | "uint64" | "beyond";

function integerRange(text: string): IntegerRange {
  // Up to 18 digits always fits; only longer ones need the exact check.
  if (text.replace(/^[+-]/, "").length <= 18) return "int64";
  const n = BigInt(text);
  if (n >= INT64_MIN && n <= INT64_MAX) return "int64";
  return n >= 0n && n <= UINT64_MAX ? "uint64" : "beyond";
}

/** Infers the dtype of column `index` over `rows`. */
export function inferDtype(rows: readonly (readonly string[])[], index: number): Dtype {
  if (rows.length === 0) return "object";
  let missing = 0;
  let integers = 0;
  let booleans = 0;
  let widest: IntegerRange = "int64";
  for (const row of rows) {
    const value = row[index] ?? "";
    if (isMissing(value)) {
      missing++;
      continue;
    }
    const text = value.trim();
    if (INTEGER.test(text)) {
      integers++;
      const range = integerRange(text);
      if (range === "beyond" || (range === "uint64" && widest === "int64")) widest = range;
    } else if (BOOL_VALUES.has(value)) booleans++;
    else if (!DECIMAL.test(text)) return "object";
  }
  const present = rows.length - missing;
  if (present === 0) return "float64";
  if (booleans > 0) return booleans === present && missing === 0 ? "bool" : "object";
  if (integers === present && missing === 0) return widest === "beyond" ? "object" : widest;
  return "float64";
}
