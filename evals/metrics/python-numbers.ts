/*
 * Python 3's int() and float() on a string, which WikiTQ's evaluator uses to decide what a
 * number is. They differ from JavaScript's Number(): "" and "0x10" are not numbers, "1_000",
 * "+5", "5." and "infinity" are. Surrounding whitespace is ignored by both.
 */
const DIGITS = String.raw`\d(?:_?\d)*`;
const INT = new RegExp(String.raw`^[+-]?${DIGITS}$`);
const FLOAT = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf(?:inity)?|nan)$`,
  "i",
);

/** Python's str.strip() with no argument: Unicode whitespace. */
function pyStrip(text: string): string {
  return text.replace(/^[\s\u001c-\u001f\u0085]+|[\s\u001c-\u001f\u0085]+$/gu, "");
}

export function pythonInt(text: string): number | null {
  const t = pyStrip(text);
  return INT.test(t) ? Number(t.replace(/_/g, "")) : null;
}

export function pythonFloat(text: string): number | null {
  const t = pyStrip(text);
  if (!FLOAT.test(t)) return null;
  const lower = t.toLowerCase().replace(/_/g, "");
  if (/nan$/.test(lower)) return Number.NaN;
  if (/inf(inity)?$/.test(lower))
    return lower.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return Number(lower);
}
