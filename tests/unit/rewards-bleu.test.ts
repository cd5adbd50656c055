import { describe, expect, it } from "vitest";
import { fsum, sentenceBleu } from "../../training/rewards/bleu.js";

/** Cases worked out by hand from the formula in training/rewards/bleu.ts (NLTK 3.9.1). */
describe("sentenceBleu", () => {
  it("is 1 for a hypothesis equal to a reference of four or more tokens", () => {
    expect(sentenceBleu("a b c d", "a b c d")).toBe(1);
    expect(sentenceBleu("the total is 48 seats", "the total is 48 seats")).toBe(1);
  });

  it("is 0 for an empty hypothesis or one sharing no token", () => {
    expect(sentenceBleu("a b c", "")).toBe(0);
    expect(sentenceBleu("a b c", "   \n\t")).toBe(0);
    expect(sentenceBleu("a b c", "x y z w")).toBe(0);
    expect(sentenceBleu("", "a b")).toBe(0);
  });

  it("gives a matching one-token hypothesis only its brevity penalty (no smoothing at length 1)", () => {
    expect(sentenceBleu("a", "a")).toBe(1);
    expect(sentenceBleu("a b", "a")).toBeCloseTo(Math.exp(-1), 15);
    expect(sentenceBleu("b a c", "a")).toBeCloseTo(Math.exp(-2), 15);
    expect(sentenceBleu("b", "a")).toBe(0);
  });

  it("smooths the missing orders of a two-token hypothesis with method4", () => {
    // p1 = p2 = 1; p3 = 1 / (2*5/ln 2) = ln2/10 and p4 = 1 / (4*5/ln 2) = ln2/20; BP = 1.
    const expected = ((Math.LN2 / 10) * (Math.LN2 / 20)) ** 0.25;
    expect(sentenceBleu("a b", "a b")).toBeCloseTo(expected, 14);
  });

  it("clips repeated tokens and smooths each zero order with a growing power of two", () => {
    // p1 = 1/4 (clipped), p2 = ln4/(2*5)/3, p3 = ln4/(4*5)/2, p4 = ln4/(8*5)/1; c > r, BP = 1.
    const l = Math.log(4);
    const expected = ((1 / 4) * (l / 30) * (l / 40) * (l / 40)) ** 0.25;
    expect(sentenceBleu("the cat", "the the the the")).toBeCloseTo(expected, 14);
  });

  it("applies the brevity penalty exp(1 - r/c) only when the hypothesis is not longer", () => {
    expect(sentenceBleu("a b c d e f g h", "a b c d")).toBeCloseTo(Math.exp(-1), 15);
    // Longer than the reference: no penalty; p = 4/5, 3/4, 2/3, 1/2.
    expect(sentenceBleu("a b c d", "a b c d e")).toBeCloseTo(0.2 ** 0.25, 15);
    // Equal lengths: exp(0) = 1.
    expect(sentenceBleu("a b c d", "a b c d")).toBe(1);
  });

  it("splits on Python's whitespace, not JavaScript's", () => {
    expect(sentenceBleu("a b c d", "a\tb\n c\x1cd")).toBe(1);
    expect(sentenceBleu("a b c d", "a\x85b\xa0c\u3000d")).toBe(1);
    // U+FEFF is not whitespace to Python: "a\ufeffb" is one token.
    expect(sentenceBleu("a b", "a\ufeffb")).toBe(0);
  });

  it("sums the logs as math.fsum does", () => {
    expect(fsum([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])).toBe(1);
    expect(fsum([1e100, 1, -1e100, 1e-100])).toBe(1);
    expect(fsum([])).toBe(0);
  });
});
