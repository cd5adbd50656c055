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

/* --- TableBench's exact match: numbers as references and models write them --- */

/** A decimal written plainly: sign, digits, a point, as many decimals as given. */
interface Plain {
  negative: boolean;
  /** All digits, the decimals last. */
  digits: bigint;
  decimals: number;
}

function plainText({ negative, digits, decimals }: Plain): string {
  const abs = (digits < 0n ? -digits : digits).toString().padStart(decimals + 1, "0");
  const whole = abs.slice(0, abs.length - decimals);
  const fraction = abs.slice(abs.length - decimals);
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${fraction}` : ""}`;
}

/** `value * factor`, exactly (factor a plain decimal such as 1.1 or 0.95). */
function times(value: Plain, factor: Plain): Plain {
  return {
    negative: value.negative !== factor.negative,
    digits: value.digits * factor.digits,
    decimals: value.decimals + factor.decimals,
  };
}

function parsePlain(text: string): Plain {
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = text.replace(/^-/, "").split(".");
  return { negative, digits: BigInt(whole + fraction), decimals: fraction.length };
}

/** The same digits in another script (all in Unicode 14, so CPython 3.11 reads them too). */
function inScript(random: Random, text: string): string {
  const zero = pick(random, ZEROS.slice(1));
  return text.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));
}

/** A reference number as TableBench writes them, sometimes longer than Decimal's 28 digits. */
function referenceNumber(random: Random): Plain {
  const length = random() < 0.08 ? int(random, 26, 34) : int(random, 1, 7);
  let digits = String(int(random, random() < 0.2 ? 0 : 1, 9));
  for (let i = 1; i < length; i++) digits += String(int(random, 0, 9));
  const decimals = random() < 0.5 ? 0 : Math.min(length + 1, int(random, 1, 4));
  return { negative: random() < 0.15, digits: BigInt(digits), decimals };
}

const TOLERANCE_FACTORS = [
  "1.02",
  "0.98",
  "1.05",
  "0.95",
  "1.1",
  "0.9",
  "1.1000000000000000001",
  "1.10000000000000000555",
  "1.1000000000000000056",
  "0.8999999999999999999",
  "1.0999999999999999999",
  "1.11",
  "0.89",
  "1.0001",
  "2",
  "0",
  "-1",
];

/** A prediction for a numeric reference: the same number written otherwise, or a near one. */
function numericPrediction(random: Random, reference: Plain, text: string): string {
  const value = plainText(reference);
  const kind = int(random, 0, 17);
  switch (kind) {
    case 0:
      return text;
    case 1:
      return `${value}${value.includes(".") ? "" : "."}${"0".repeat(int(random, 1, 3))}`;
    case 2:
      return value.includes(".") ? value.replace(/0+$/, "").replace(/\.$/, "") : `${value}.0`;
    case 3:
      return value.replace(/^(-?)/, `$1${"0".repeat(int(random, 1, 3))}`);
    case 4: // as a percent, or a percent as a fraction
      return text.endsWith("%")
        ? plainText(times(reference, parsePlain("0.01")))
        : `${plainText(times(reference, parsePlain("100")))}%`;
    case 5: // in e-notation
      return `${plainText(times(reference, parsePlain("0.001")))}${pick(random, ["e3", "E3", "e+3", "e03"])}`;
    case 6:
      return pick(random, ["1e3", "1E3", "10e2", "1000", "0.1e4", "1e-3", "1e28", "1e27", "0e5"]);
    case 7:
      return value.startsWith("-") ? value.slice(1) : `-${value}`;
    case 8:
      return pick(random, ["-0", "0", "-0.0", "0.00", "+0", "-0.4", "0.5", "-0.5", "0.49999"]);
    case 9: {
      // half a unit of the reference's last decimal away, either way, or just short of it
      const half = { negative: false, digits: 5n, decimals: reference.decimals + 1 };
      const nudge =
        random() < 0.5 ? half : { ...half, digits: 49999n, decimals: half.decimals + 4 };
      const scaled = 10n ** BigInt(nudge.decimals - reference.decimals);
      const base = (reference.negative ? -1n : 1n) * reference.digits * scaled;
      const sum = base + (random() < 0.5 ? nudge.digits : -nudge.digits);
      return plainText({
        negative: sum < 0n,
        digits: sum < 0n ? -sum : sum,
        decimals: nudge.decimals,
      });
    }
    case 10:
    case 11:
      return plainText(times(reference, parsePlain(pick(random, TOLERANCE_FACTORS))));
    case 12:
      return inScript(random, text);
    case 13: // grouping underscores, Python's and JavaScript's whitespace
      return `${space(random)}${value.replace(/(\d)(\d)/, "$1_$2")}${space(random)}`;
    case 14:
      return pick(random, ["inf", "-Infinity", "nan", "NaN12", "sNaN", "-snan", "Inf", "infinit"]);
    case 15:
      return pick(random, [
        `${value} goals`,
        `about ${value}`,
        "",
        `${value}%%`,
        `%${value}%`,
        `${value} %`,
        `${value}e`,
        ".5",
        "5.",
        `${value}e999999999`,
        "0e99999999999999999999",
        "0e999999999999999999",
        "1e-999999999",
        "1e999999999999999999",
      ]);
    case 16:
      return plainText(referenceNumber(random));
    default:
      return `${value}${pick(random, ["", "%"])}`;
  }
}

const ANSWER_WORDS = [
  "yes",
  "no",
  "Great Britain",
  "Real Madrid B",
  "positive impact",
  "the 1990s",
];

/** One reference item (a number or a word) and a prediction item for it. */
function answerItem(random: Random): [string, string] {
  if (random() < 0.2) {
    const word = pick(random, ANSWER_WORDS);
    const kind = random();
    return [word, kind < 0.5 ? word : kind < 0.7 ? word.toUpperCase() : pick(random, ANSWER_WORDS)];
  }
  const reference = referenceNumber(random);
  let text = plainText(reference);
  if (random() < 0.2) text += "%";
  if (random() < 0.1) text = inScript(random, text);
  return [text, numericPrediction(random, reference, text)];
}

/**
 * (reference, prediction) pairs for TableBench's EM: numbers with decimals, percents, signs,
 * trailing and leading zeros, e-notation, digits of other scripts, long numbers, lists split on
 * commas (sometimes with an item missing), and words.
 */
export function tablebenchPairs(count: number, seed: number): [string, string][] {
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    const items = Array.from({ length: random() < 0.75 ? 1 : int(random, 2, 4) }, () =>
      answerItem(random),
    );
    const glue = () => pick(random, [", ", ",", " , "]);
    const predictions = items.map(([, p]) => p);
    if (items.length > 1 && random() < 0.15) predictions.pop();
    const reference = items.map(([r]) => r).join(glue());
    return [reference, predictions.join(glue())];
  });
}

/* --- Pandas programs, for the code reward's operation labels --- */

const COLUMNS = ["sales", "year", "Total Points", "rank", "name", "growth %"];
const FRAMES = ["df", "data", "table", "top", "filtered"];

/**
 * One statement of a table program, from templates of what models write, including what the
 * released label reader reads oddly (bare DataFrame(), list keys, negative indexes, bool
 * literals, walrus keys, `+=`, annotated and tuple assignments).
 */
function pandasStatement(random: Random): string {
  const c = JSON.stringify(pick(random, COLUMNS));
  const d = JSON.stringify(pick(random, COLUMNS));
  const f = pick(random, FRAMES);
  const v = pick(random, ["5", "2000", "0.5", "'Spain'", "True", "False", "None", "-1", "x"]);
  const op = pick(random, ["==", "!=", ">", "<", ">=", "<=", "in", "not in", "is"]);
  const target = pick(random, [
    "answer",
    "result",
    "Result",
    "SUMMARY",
    "final_answer",
    "value",
    f,
    "top_row",
  ]);
  const templates: (() => string)[] = [
    () => "import pandas as pd",
    () => `${f} = pd.read_csv('table.csv')`,
    () => `${f} = pd.DataFrame(data, columns=[${c}, ${d}])`,
    () => `${f} = pd.DataFrame(rows)`,
    () => `${f} = DataFrame(rows, columns=cols)`,
    () =>
      `${f}[${c}] = pd.to_numeric(${f}[${c}], errors=${pick(random, ["'coerce'", "'ignore'", "mode"])})`,
    () => `${f}[${c}] = to_numeric(${f}[${c}], errors='coerce')`,
    () => `${f}[${c}] = ${f}[${c}].astype(${pick(random, ["float", "int", "'str'"])})`,
    () => `${f}[${c}] = ${f}[${c}].str.replace(',', '').str.strip()`,
    () => `${f} = ${f}.${pick(random, ["dropna()", "fillna(0)", "drop_duplicates()"])}`,
    () => `${target} = ${f}[${c}]`,
    () => `${target} = ${f}[[${c}, ${d}]]`,
    () => `${target} = ${f}.iloc[${pick(random, ["0", "-1", "1", "False", "0.0", "i", "-0"])}]`,
    () => `${target} = ${f}.loc[0, ${c}]`,
    () => `${target} = ${f}[${c}].iloc[${pick(random, ["0", "-1"])}]`,
    () => `${target} = ${f}[(key := ${c})]`,
    () => `${target} = ${f}[${c}.strip]`,
    () =>
      `${target} = ${f}[${pick(random, ["col", "cols[0]", "row.name", "f'{col}'", "1:3", "::-1"])}]`,
    () => `${f} = ${f}[${f}[${c}] ${op} ${v}]`,
    () => `${f} = ${f}[${f}[${c}] ${op} ${f}[${d}]]`,
    () => `${f} = ${f}[${v} ${op} ${f}[${c}]]`,
    () => `${f} = ${f}[(${f}[${c}] > 1) & (${f}[${d}] != 'x')]`,
    () => `mask = 0 < ${f}[${c}] <= 10`,
    () => `${f} = ${f}[${f}[${c}].isin(['a', 'b'])]`,
    () => `${f} = ${f}.sort_values(${c}, ascending=False)`,
    () =>
      `${f} = ${f}.${pick(random, ["sort_index()", `nlargest(3, ${c})`, `nsmallest(1, ${c})`])}`,
    () =>
      `${target} = ${f}.groupby(${c})[${d}].${pick(random, ["sum()", "mean()", "count()", "max()", "agg('sum')"])}`,
    () =>
      `${target} = ${f}[${c}].${pick(random, ["sum()", "mean()", "count()", "median()", "std()"])}`,
    () => `${target} = ${f}[${c}].corr(${f}[${d}])`,
    () => `${target} = np.corrcoef(${f}[${c}], ${f}[${d}])[0, 1]`,
    () => `${target} = ${f}[${c}] ${pick(random, ["-", "+", "*", "/", "//", "%"])} ${f}[${d}]`,
    () => `${target} = (${f}[${c}].max() - ${f}[${c}].min()) / ${f}[${c}].min() * 100`,
    () => `total ${pick(random, ["+=", "-="])} 1`,
    () => `${target} = -${f}[${c}]`,
    () =>
      `${target} = ${pick(random, ["int", "float", "str", "round", "np.float64", "len"])}(${f}[${c}].iloc[0])`,
    () => `print(${target})`,
    () => `print(f"The answer is {${target}}")`,
    () => `print(${f}.to_string())`,
    () => `${target}: float = ${f}[${c}].sum()`,
    () => `answer, rest = 1, 2`,
    () => `self.result = 3`,
    () => `answer = result = ${f}[${c}].mean()`,
    () => `${f}.loc[${f}[${c}] ${op} ${v}, ${d}] = 0`,
  ];
  return pick(random, templates)();
}

/** A program of statements, sometimes inside a function or a loop, sometimes broken. */
export function pandasSnippets(count: number, seed: number): string[] {
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    const lines = Array.from({ length: int(random, 1, 7) }, () => pandasStatement(random));
    const shape = random();
    if (shape < 0.1)
      return `def solve(df):\n${lines.map((l) => `    ${l}`).join("\n")}\n    return df`;
    if (shape < 0.18) {
      const [head = "", ...rest] = lines;
      return `for i, row in df.iterrows():\n    if row['rank'] > 3:\n        ${head}\n${rest.join("\n")}`;
    }
    if (shape < 0.22)
      return `${lines.join("\n")}\nprint(df[${JSON.stringify(pick(random, COLUMNS))}`; // does not parse
    if (shape < 0.24) return `  ${lines.join("\n")}`; // indented: does not parse
    return lines.join("\n");
  });
}
