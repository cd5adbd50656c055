/*
 * Python 3's int() and float() on a string, which WikiTQ's evaluator uses to decide what a
 * number is (and FinQA's reads its numbers with). They differ from JavaScript's Number():
 * "" and "0x10" are not numbers; "1_000", "+5", "5.", "infinity" are; so are digits of any
 * script ("١٢٣", full-width "１２"); an int is exact at any size (a bigint here).
 */
const DIGITS = "[0-9](?:_?[0-9])*";
const INT = new RegExp(`^[+-]?${DIGITS}$`);
const FLOAT = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf(?:inity)?|nan)$`,
  "i",
);
/** CPython refuses to convert more decimal digits than this to an int (3.11's default). */
export const INT_MAX_STR_DIGITS = 4300;

const DECIMAL = /^\p{Nd}$/u;
const UNICODE_SPACE = /^[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;
/** What int() and float() skip at the ends, once the text is ASCII: not \x1c-\x1f. */
const ASCII_EDGES = /^[\t-\r ]+|[\t-\r ]+$/g;

/** The digit a character of category Nd stands for: they come in runs of ten, 0 to 9. */
function decimalValue(codePoint: number): number {
  let start = codePoint;
  while (start > 0 && DECIMAL.test(String.fromCodePoint(start - 1))) start -= 1;
  return (codePoint - start) % 10;
}

/** The digit a decimal digit of any script (Python's `\d`, category Nd) stands for, else null. */
export function decimalDigit(char: string): number | null {
  return DECIMAL.test(char) ? decimalValue(char.codePointAt(0) ?? 0) : null;
}

/**
 * What CPython does first to the text int() and float() get: a non-ASCII decimal digit
 * becomes its ASCII digit, non-ASCII whitespace a space; any other non-ASCII character
 * makes the text invalid (null). Then the ASCII whitespace at the ends is dropped.
 */
function asciiNumberText(text: string): string | null {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x80) out += char;
    else if (UNICODE_SPACE.test(char)) out += " ";
    else if (DECIMAL.test(char)) out += String(decimalValue(code));
    else return null;
  }
  return out.replace(ASCII_EDGES, "");
}

export function pythonInt(text: string): bigint | null {
  const t = asciiNumberText(text);
  if (t === null || !INT.test(t)) return null;
  const digits = t.replace(/[+_-]/g, "");
  if (digits.length > INT_MAX_STR_DIGITS) return null;
  return BigInt(t.replace(/_/g, "").replace(/^\+/, ""));
}

export function pythonFloat(text: string): number | null {
  const t = asciiNumberText(text);
  if (t === null || !FLOAT.test(t)) return null;
  const lower = t.toLowerCase().replace(/_/g, "");
  if (/nan$/.test(lower)) return Number.NaN;
  if (/inf(inity)?$/.test(lower))
    return lower.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return Number(lower);
}
