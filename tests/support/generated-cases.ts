/** Seeded generators of awkward strings, for comparing the scorers with CPython. */

/** mulberry32: a small seeded PRNG, so every run tests the same cases. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;
export const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T;
const int = (random: Random, low: number, high: number) =>
  low + Math.floor(random() * (high - low + 1));

/** The zero of some scripts' decimal digits (all in Unicode 14, so in CPython 3.11 too). */
const ZEROS = [0x30, 0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0xff10, 0x1d7ce, 0x1040, 0x7c0];
/** Python whitespace, JavaScript-only whitespace (U+FEFF) and look-alikes that are neither. */
export const SPACES = [" ", "\t", "\n", "\x0b", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0"];
const ODD_SPACES = ["\u2003", "\u3000", "\u2028", "\ufeff", "\u200b"];
/** Numeric characters that are not decimal digits, and a full-width letter. */
const NOT_DIGITS = ["²", "⑤", "Ⅻ", "½", "ｅ", "٫"];

function digit(random: Random, script: number): string {
  return String.fromCodePoint(script + int(random, 0, 9));
}

function digits(random: Random, count: number, mixed: boolean): string {
  const script = pick(random, ZEROS);
  let out = "";
  for (let i = 0; i < count; i++) {
    out += digit(random, mixed && random() < 0.3 ? pick(random, ZEROS) : script);
    if (i < count - 1 && random() < 0.08) out += "_";
  }
  return out;
}

function space(random: Random): string {
  return random() < 0.5 ? "" : pick(random, random() < 0.7 ? SPACES : ODD_SPACES);
}

/** A number as people and models write it, in some script, padded, sometimes broken. */
function numberText(random: Random): string {
  const sign = pick(random, ["", "", "-", "+"]);
  const whole = digits(random, int(random, 1, random() < 0.2 ? 30 : 6), random() < 0.2);
  const fraction = random() < 0.4 ? `.${digits(random, int(random, 0, 8), false)}` : "";
  const exponent =
    random() < 0.15
      ? `${pick(random, ["e", "E"])}${pick(random, ["", "-", "+"])}${digits(random, 2, false)}`
      : "";
  let text = `${sign}${whole}${fraction}${exponent}`;
  if (random() < 0.1) {
    const at = int(random, 0, text.length);
    text =
      text.slice(0, at) + pick(random, [...NOT_DIGITS, "_", ".", " ", "\x1c"]) + text.slice(at);
  }
  if (random() < 0.05)
    text = pick(random, ["inf", "-Infinity", "nan", "NaN", "infinity", "ｉｎｆ"]);
  return `${space(random)}${space(random)}${text}${space(random)}`;
}

/** Near-integers, large integers and integers written as floats: where WikiTQ's amounts bite. */
function amountText(random: Random): string {
  const big =
    String(int(random, 1, 9)) + digits(random, int(random, 15, 25), false).replace(/[^0-9]/g, "0");
  return pick(random, [
    `${int(random, 0, 99)}.${pick(random, ["9999999", "0000001", "999999", "0000009", "5"])}`,
    `-${int(random, 0, 99)}.9999999`,
    big,
    `${big}.0`,
    `${big.slice(0, 17)}e${int(random, 0, 8)}`,
  ]);
}

export function numberTexts(count: number, seed: number): string[] {
  const random = seeded(seed);
  return Array.from({ length: count }, () =>
    random() < 0.8 ? numberText(random) : amountText(random),
  );
}

const WORDS = [
  "the",
  "a",
  "an",
  "The",
  "AN",
  "theatre",
  "another",
  "anthem",
  "apple",
  "impact",
  "positive",
  "negative",
  "no",
  "clear",
  "trend",
  "sales",
  "2019",
  "10.6",
  "1,062",
  "45%",
  "-5",
  "café",
  "éthe",
  "thé",
  "a_b",
  "the_x",
  "straße",
  "İstanbul",
  "ΟΔΟΣ",
  "Σ",
  "naïve",
  "３",
  "٣٤",
  "x²",
  "e.g.",
  "U.S.",
  "(up)",
  "[1]",
  "—",
  "don't",
  "it’s",
  "K",
  "ǅ",
  "ﬁ",
  "..",
  "a-the",
  "#",
  "_",
];
const GLUE = [
  " ",
  " ",
  " ",
  "  ",
  ", ",
  ". ",
  "-",
  "/",
  "\t",
  "\x1c",
  "\x1f",
  "\x85",
  "\xa0",
  "\ufeff",
  "\u2009",
  "\n",
];

/** A short answer of words from a vocabulary full of articles, punctuation and scripts. */
export function answerText(random: Random, words = WORDS): string {
  const count = int(random, 0, 9);
  let out = random() < 0.2 ? pick(random, GLUE) : "";
  for (let i = 0; i < count; i++) {
    out += pick(random, words);
    if (i < count - 1) out += pick(random, GLUE);
  }
  return out;
}

/** A few plain words, so that references and predictions overlap often. */
export const PLAIN_WORDS = [
  "the",
  "sales",
  "rise",
  "fall",
  "a",
  "trend",
  "in",
  "2019",
  "no",
  "x",
  "of",
];

export function answerPairs(count: number, seed: number): [string, string][] {
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    const words = random() < 0.5 ? PLAIN_WORDS : WORDS;
    const reference = answerText(random, words);
    // Some predictions are the reference again, or it shouted with a full stop.
    const again = random();
    if (again < 0.1) return [reference, reference];
    if (again < 0.2) return [reference, `${reference.toUpperCase()}.`];
    return [reference, answerText(random, words)];
  });
}
