import { pySplit } from "./python-text.js";

/** Python's string.punctuation: every ASCII punctuation character. */
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** Python's `\b(a|an|the)\b` on a str: its word characters are Unicode letters, digits and _. */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

/**
 * SQuAD-style normalization, as TableBench scores with it and as a vote compares branches'
 * answers: lower-case, drop every ASCII punctuation character (so "10.6" becomes "106"), drop the
 * articles, collapse whitespace, each by Python's rules (so "éthe" keeps its "the", and U+001C
 * separates words).
 */
export function normalizeAnswer(text: string): string {
  return pySplit(text.toLowerCase().replace(PUNCTUATION, "").replace(ARTICLES, " ")).join(" ");
}
