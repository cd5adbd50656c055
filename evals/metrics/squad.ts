export { normalizeAnswer } from "../../grounding/normalize.js";

/** Python's `str.split()` on whitespace after `re.sub(r"[^a-z0-9]+", " ", text.lower())`. */
export function rougeTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .split(" ")
    .filter((token) => /^[a-z0-9]+$/.test(token));
}

function lcsLength(a: string[], b: string[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) {
      current[j] =
        x === b[j - 1]
          ? (previous[j - 1] ?? 0) + 1
          : Math.max(previous[j] ?? 0, current[j - 1] ?? 0);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The ROUGE-L F-measure of `rouge_score` (tokens as above, no stemming). */
export function rougeL(reference: string, prediction: string): number {
  const ref = rougeTokens(reference);
  const pred = rougeTokens(prediction);
  if (ref.length === 0 || pred.length === 0) return 0;
  const lcs = lcsLength(ref, pred);
  if (lcs === 0) return 0;
  const precision = lcs / pred.length;
  const recall = lcs / ref.length;
  return (2 * precision * recall) / (precision + recall);
}
