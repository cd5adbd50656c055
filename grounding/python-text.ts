/*
 * Python 3's notion of whitespace, for str.strip(), str.split() and `\s` in `re` patterns:
 * what str.isspace() is true for. JavaScript's `\s` and trim() differ: they keep the ASCII
 * separators U+001C to U+001F and U+0085, and take U+FEFF, which Python keeps.
 */
export const PY_SPACE_CLASS = String.raw`[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]`;

const EDGES = new RegExp(`^${PY_SPACE_CLASS}+|${PY_SPACE_CLASS}+$`, "gu");
const RUNS = new RegExp(`${PY_SPACE_CLASS}+`, "gu");

/** Python's `text.strip()`. */
export function pyStrip(text: string): string {
  return text.replace(EDGES, "");
}

/** Python's `re.sub(r"\s+", replacement, text)`. */
export function pyCollapseSpace(text: string, replacement = " "): string {
  return text.replace(RUNS, replacement);
}

/** Python's `text.split()`: runs of whitespace separate, none at the ends. */
export function pySplit(text: string): string[] {
  return text.split(RUNS).filter(Boolean);
}
