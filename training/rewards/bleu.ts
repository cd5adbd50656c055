import { pySplit } from "../../grounding/python-text.js";

/*
 * Sentence BLEU as NLTK 3.9.1 computes it: `sentence_bleu([reference.split()],
 * hypothesis.split(), smoothing_function=SmoothingFunction().method4)` with the default
 * weights (0.25 x 4), one reference and no auto re-weighting. Our own code after the formula:
 *
 *   p_n  = clipped n-gram matches / max(1, hypothesis n-grams)          n = 1..4
 *   no unigram matches -> 0 (also for an empty hypothesis)
 *   method4: the k-th order with zero matches (k = 1, 2, ...) gets
 *            p_n = 1 / (2^k * 5 / ln(len(hyp))) / its denominator, only when len(hyp) > 1
 *   BLEU = BP * exp(fsum(0.25 * ln p_n for p_n > 0)),  BP = 1 if c > r, else exp(1 - r/c)
 *
 * Orders whose precision stays 0 are left out of the sum, not counted as log 0. So a one-token
 * hypothesis that matches gets exp(0) = 1 times its brevity penalty, exp(1 - r): 1 against a
 * one-token reference, e^-1 against two tokens; one that does not match gets 0.
 */

const ORDERS = 4;
const WEIGHT = 1 / ORDERS;
/** NLTK's SmoothingFunction default k. */
const K = 5;

function ngramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    // \u0000 cannot occur inside a token that came from our own splitting on whitespace.
    const key = tokens.slice(i, i + n).join("\u0000");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Clipped matches and the (at least 1) count of the hypothesis' n-grams. */
function modifiedPrecision(
  reference: readonly string[],
  hypothesis: readonly string[],
  n: number,
): { matches: number; total: number } {
  const hyp = ngramCounts(hypothesis, n);
  const ref = ngramCounts(reference, n);
  let matches = 0;
  let total = 0;
  for (const [gram, count] of hyp) {
    matches += Math.min(count, ref.get(gram) ?? 0);
    total += count;
  }
  return { matches, total: Math.max(1, total) };
}

/** Python's math.fsum: the correctly rounded sum (Shewchuk's exact partial sums). */
export function fsum(values: readonly number[]): number {
  const partials: number[] = [];
  for (let x of values) {
    let kept = 0;
    for (const y0 of partials) {
      let y = y0;
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const high = x + y;
      const low = y - (high - x);
      if (low !== 0) partials[kept++] = low;
      x = high;
    }
    partials.length = kept;
    partials.push(x);
  }
  // Round the partials (largest last) to one double, as CPython does, half-even at the end.
  let n = partials.length;
  if (n === 0) return 0;
  let high = partials[--n] as number;
  let low = 0;
  while (n > 0) {
    const x = high;
    const y = partials[--n] as number;
    high = x + y;
    low = y - (high - x);
    if (low !== 0) break;
  }
  const next = partials[n - 1];
  if (n > 0 && next !== undefined && ((low < 0 && next < 0) || (low > 0 && next > 0))) {
    const y = low * 2;
    const x = high + y;
    if (y === x - high) high = x;
  }
  return high;
}

/** BLEU of token lists, as NLTK's sentence_bleu with one reference and method4. */
export function bleuOfTokens(reference: readonly string[], hypothesis: readonly string[]): number {
  const precisions = Array.from({ length: ORDERS }, (_, i) =>
    modifiedPrecision(reference, hypothesis, i + 1),
  );
  if ((precisions[0]?.matches ?? 0) === 0) return 0;
  const c = hypothesis.length;
  const r = reference.length;
  let smoothed = 1;
  const logs: number[] = [];
  for (const { matches, total } of precisions) {
    let p = matches / total;
    if (matches === 0 && c > 1) {
      p = 1 / ((2 ** smoothed * K) / Math.log(c)) / total;
      smoothed += 1;
    }
    if (p > 0) logs.push(WEIGHT * Math.log(p));
  }
  const brevity = c > r ? 1 : Math.exp(1 - r / c);
  return brevity * Math.exp(fsum(logs));
}

/** BLEU of two texts split on Python's whitespace (`str.split()`), reference first. */
export function sentenceBleu(reference: string, hypothesis: string): number {
  return bleuOfTokens(pySplit(reference), pySplit(hypothesis));
}
