/*
 * Python 3's int() and float() on a string, which WikiTQ's evaluator uses to decide what a
 * number is. They differ from JavaScript's Number(): "" and "0x10" are not numbers, "1_000",
 * "+5", "5." and "infinity" are. Surrounding whitespace is ignored by both.
 */
const DIGITS = String.raw`\d(?:_?\d)*`;
const INT = new RegExp(`^[+-]?${DIGITS}$`);
const FLOAT = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf(?:inity)?|nan)$`,
  "i",
);

/** Python's str.strip() with no argument: Unicode whitespace, and the separators U+001C to U+001F. */
const PY_SPACE = `[\\s${String.fromCharCode(0x1c, 0x1d, 0x1e, 0x1f)}\u0085]+`;
const PY_STRIP = new RegExp(`^${PY_SPACE}|${PY_SPACE}$`, "gu");

function pyStrip(text: string): string {
  return text.replace(PY_STRIP, "");
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
