import { describe, expect, it } from "vitest";
import { sentenceBleu } from "../../training/rewards/bleu.js";
import { pick, type Random, SPACES, seeded } from "../support/generated-cases.js";
import { NLTK_VERSION, nltkBleu, nltkReferencePython } from "../support/nltk-reference.js";

/*
 * Our BLEU against NLTK's sentence_bleu itself on seeded generated pairs. scripts/setup-tests.sh
 * installs NLTK into the reference venv; without it this test fails and says so.
 * CPython's math.log and math.exp come from the C library, V8's from fdlibm; they disagree in
 * the last bit for some arguments, so a score may differ from NLTK's by an ulp or two.
 */
const ULPS = 4;
const VOCABULARY = ["the", "a", "sales", "rose", "fell", "in", "2019", "by", "10%", "x", "of"];

function sentence(random: Random, length: number): string[] {
  return Array.from({ length }, () => pick(random, VOCABULARY));
}

/** Pairs of every shape the formula cares about: empty, one token, short, long, overlapping. */
function pairs(count: number, seed: number): [string, string][] {
  const random = seeded(seed);
  const join = (tokens: string[]) =>
    tokens
      .map((t, i) => (i === 0 ? t : `${random() < 0.8 ? " " : pick(random, SPACES)}${t}`))
      .join("");
  return Array.from({ length: count }, () => {
    const reference = sentence(random, Math.floor(random() * (random() < 0.3 ? 4 : 25)));
    const kind = random();
    let hypothesis: string[];
    if (kind < 0.1) hypothesis = [...reference];
    else if (kind < 0.4) {
      // An edited copy: some tokens dropped or replaced, so higher orders partly match.
      hypothesis = reference.flatMap((t) =>
        random() < 0.15 ? [] : random() < 0.15 ? [pick(random, VOCABULARY)] : [t],
      );
    } else hypothesis = sentence(random, Math.floor(random() * (random() < 0.3 ? 4 : 30)));
    return [join(reference), join(hypothesis)];
  });
}

describe("BLEU against NLTK", () => {
  it(`scores 600 seeded pairs as NLTK ${NLTK_VERSION}'s sentence_bleu with method4 does`, () => {
    const cases = pairs(600, 4_242);
    const { version, scores } = nltkBleu(nltkReferencePython(), cases);
    expect(version).toBe(NLTK_VERSION);
    const wrong = cases.flatMap(([reference, hypothesis], i) => {
      const ours = sentenceBleu(reference, hypothesis);
      const nltk = scores[i] ?? Number.NaN;
      return Math.abs(ours - nltk) <= ULPS * Number.EPSILON * Math.abs(nltk)
        ? []
        : [{ reference, hypothesis, ours, nltk: scores[i] }];
    });
    expect(wrong).toEqual([]);
    // Same formula, not just close: most scores agree to the last bit.
    const exact = cases.filter(([r, h], i) => sentenceBleu(r, h) === scores[i]).length;
    expect(exact).toBeGreaterThan(500);
    // Not a test of zeros and ones: most pairs score strictly between.
    expect(scores.filter((s) => s > 0 && s < 1).length).toBeGreaterThan(300);
    expect(scores.filter((s) => s === 1).length).toBeGreaterThan(20);
    expect(scores.filter((s) => s === 0).length).toBeGreaterThan(5);
  });
});
