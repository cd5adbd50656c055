import { NA_VALUES } from "./dtypes.js";

/**
 * A column's values read as a careful analyst reads them: "$1,250,400", "(1,234)", "12.5%",
 * "500,00", "05.03.2024", "yes" become plain numbers, ISO dates and booleans that pandas reads
 * without help, and the header's unit ("Revenue (USD m)") is split off. A column is converted
 * only when every one of its present values reads the same way; otherwise it stays text, as is.
 * Pure and linear in the number of values.
 */
export type ValueKind =
  | "integer"
  | "number"
  | "percent"
  | "currency"
  | "date"
  | "datetime"
  | "bool"
  | "text";

export interface ColumnReading {
  kind: ValueKind;
  /**
   * Canonical text per input value, as pandas `read_csv` reads it: plain numbers ("1250400",
   * "-40"; a percent keeps its number: "12.5%" -> "12.5" with unit "%"), ISO dates
   * ("2024-03-05", "2024-03-05 14:30:00"), "True"/"False", "" for missing. A text column's
   * values are the input unchanged.
   */
  values: string[];
  /** From the header ("(USD m)" -> "USD m", "Share %" -> "%", "[kg]"), else the values ("$" -> "USD", "%"). */
  unit?: string;
  /** The header without its unit ("Revenue (USD m)" -> "Revenue"); undefined when it has none. */
  name?: string;
  /** The decimal mark the column's numbers were read with. */
  decimal?: "." | ",";
  /** Dates written "05/03/2024": whether they were read day first. */
  dayFirst?: boolean;
  /** What decided the order: a value that reads only one way, else the caller's preference or the separator's custom. */
  dayFirstBy?: "values" | "preference" | "separator";
  /** How many values differ from their text (0 for a column read as is). */
  changed: number;
  /** One short phrase for the table context: 'currency USD: "$1,250,400" -> 1250400'. */
  note?: string;
}

/** Conventions to fall back on where a column's values leave the reading open (from a locale). */
export interface ReadPreferences {
  /** The decimal mark of "1.234" or "1,234" when no value of the column decides it; "." by default, as pandas. */
  decimal?: "." | ",";
  /** Whether "05/03/2024" is day first when no value decides it; by default "/" is month first, "." and "-" day first. */
  dayFirst?: boolean;
}

/**
 * The placeholders statistics offices write for a cell they leave empty, with what they
 * usually mean (a file's own legend may say otherwise).
 */
const PLACEHOLDER_MEANINGS: ReadonlyMap<string, string> = new Map([
  ["-", "often nil, exactly zero"],
  ["–", "often nil, exactly zero"],
  ["—", "often nil, exactly zero"],
  ["--", "often nil, exactly zero"],
  [".", "not available or kept secret"],
  ["..", "not available"],
  ["...", "not yet available"],
  ["…", "not yet available"],
  ["x", "withheld: confidential or not meaningful"],
  ["X", "withheld: confidential or not meaningful"],
  ["/", "too uncertain to show"],
]);

/** Missing in any column; a placeholder only among numbers ("x" or "." may be a value elsewhere). */
const MISSING: ReadonlySet<string> = new Set([
  ...NA_VALUES,
  "-",
  "–",
  "—",
  "--",
  "..",
  "...",
  "…",
  "na",
  "n.a.",
  "N.A.",
]);

function isMissingText(text: string): boolean {
  return MISSING.has(text) || MISSING.has(text.trim());
}

function isMissingNumber(text: string): boolean {
  return isMissingText(text) || PLACEHOLDER_MEANINGS.has(text.trim());
}

/** `"-" (often nil, exactly zero) and "." (not available or kept secret) read as missing`. */
function placeholderFact(written: ReadonlySet<string>): string {
  const each = [...written].slice(0, 4).map((text) => {
    const meaning = PLACEHOLDER_MEANINGS.get(text);
    return meaning ? `${JSON.stringify(text)} (${meaning})` : JSON.stringify(text);
  });
  const list = each.length > 1 ? `${each.slice(0, -1).join(", ")} and ${each.at(-1)}` : each[0];
  return `${list} read as missing`;
}

/** A missing value's canonical text: a spelling pandas already reads as missing stays as it is. */
function missingAs(raw: string): string {
  return NA_VALUES.has(raw) ? raw : "";
}

/** Spellings pandas' reader already takes as booleans: left as they are. */
const PANDAS_BOOLEANS: ReadonlySet<string> = new Set([
  "True",
  "TRUE",
  "true",
  "False",
  "FALSE",
  "false",
]);

// ---------------------------------------------------------------------------------------------
// Numbers

const CURRENCY_SYMBOLS: Readonly<Record<string, string>> = {
  $: "USD",
  US$: "USD",
  "€": "EUR",
  "£": "GBP",
  "¥": "JPY",
  "₹": "INR",
  "₩": "KRW",
  R$: "BRL",
  C$: "CAD",
  A$: "AUD",
  HK$: "HKD",
  S$: "SGD",
};
const CURRENCY_CODES =
  "USD EUR GBP JPY CNY RMB INR CHF CAD AUD NZD SEK NOK DKK PLN CZK HUF RUB BRL MXN ZAR HKD SGD KRW TRY".split(
    " ",
  );
const CURRENCY = String.raw`US\$|HK\$|[RCAS]\$|[$€£¥₹₩]|${CURRENCY_CODES.join("|")}`;
const CURRENCY_CODE_SET: ReadonlySet<string> = new Set(CURRENCY_CODES);
const SYMBOLS = "$€£¥₹₩";
const PLAIN_INTEGER = /^-?(?:0|[1-9]\d*)$/;
const PLAIN_DECIMAL = /^-?(?:0|[1-9]\d*)\.\d+$/;
const INFINITY = /^([-+−]?)inf(?:inity)?$/i;
/** Longer text is no formatted number. */
const MAX_NUMBER_TEXT = 64;
const EXPONENT = /^[eE][-+]?\d+$/;

const CURRENCY_BIT = 1;
const PERCENT_BIT = 2;
const PARENS_BIT = 4;
const TRAILING_MINUS_BIT = 8;
const TYPO_SPACE_BIT = 16;

/** One value's number text: canonical under a decimal point and under a decimal comma (null: does not read so). */
interface NumberText {
  point: string | null;
  comma: string | null;
  flags: number;
  currency?: string;
}

const NON_DIGITS = /\D/g;
const DOT = 46;
const COMMA = 44;
const SPACE = 32;
const APOSTROPHE = 39;

/** A mark that may stand between digits (decimal marks, thousands separators) by its code, spaces and apostrophes as one; 0 for any other character. */
function markOf(code: number): number {
  if (code === DOT || code === COMMA || code === SPACE || code === APOSTROPHE) return code;
  if (code === 0xa0 || code === 0x2009 || code === 0x202f) return SPACE;
  return code === 0x2019 ? APOSTROPHE : 0;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** "0123": a code, not a number (leading zeros). */
function codeLike(digits: string): boolean {
  return digits.length > 1 && digits.charCodeAt(0) === 48;
}

interface Digits {
  point: string | null;
  comma: string | null;
  typo: boolean;
}

/**
 * Digits and their marks ("1.234,56", "1 234", "16, 122") read with a decimal point and with a
 * decimal comma; null when neither. One pass, no arrays: a large column reads in linear time.
 */
function readDigits(body: string, exponent: string): Digits | null {
  let seps = 0;
  let first = 0;
  let last = 0;
  let sameBeforeLast = true;
  let allSame = true;
  let firstLength = -1;
  let middleOk = true;
  let length = 0;
  let typo = false;
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i);
    if (isDigit(code)) {
      length++;
      continue;
    }
    const sep = markOf(code);
    if (sep === 0) return null;
    if (sep === COMMA && body.charCodeAt(i + 1) === 32) {
      // "16, 122": a stray space after a thousands comma (TableBench has such typos).
      typo = true;
      i++;
    }
    if (seps === 0) {
      firstLength = length;
      first = sep;
    } else if (length !== 3) middleOk = false;
    sameBeforeLast = allSame;
    if (sep !== first) allSame = false;
    last = sep;
    seps++;
    length = 0;
  }
  const exp = exponent ? `e${exponent.slice(1).replace("+", "")}` : "";
  if (seps === 0) return codeLike(body) ? null : { point: body + exp, comma: body + exp, typo };
  const lastLength = length;
  if (seps === 1 && !typo && (first === DOT || first === COMMA)) {
    const whole = body.slice(0, firstLength);
    const fraction = body.slice(firstLength + 1);
    if (codeLike(whole) || (whole === "" && fraction === "")) return null;
    const decimal = `${whole || "0"}.${fraction || "0"}${exp}`;
    const asThousands =
      !exp && firstLength >= 1 && firstLength <= 3 && whole.charCodeAt(0) !== 48 && lastLength === 3
        ? whole + fraction
        : null;
    return first === DOT
      ? { point: decimal, comma: asThousands, typo }
      : { point: asThousands, comma: decimal, typo };
  }
  if (exp || firstLength < 1 || firstLength > 3 || body.charCodeAt(0) === 48) return null;
  const digits = body.replace(NON_DIGITS, "");
  // Thousands groups, then maybe a decimal part after a different last mark.
  let text: string;
  let decimalMark = 0;
  if (allSame) {
    if (lastLength !== 3 || !middleOk) return null;
    text = digits;
  } else {
    if (!sameBeforeLast || (last !== DOT && last !== COMMA) || !middleOk || lastLength === 0)
      return null;
    decimalMark = last;
    text = `${digits.slice(0, digits.length - lastLength)}.${digits.slice(digits.length - lastLength)}`;
  }
  // A "." between groups is a thousands mark only where the decimal mark is a comma, and so on.
  const pointOk = first !== DOT && decimalMark !== COMMA;
  const commaOk = first !== COMMA && decimalMark !== DOT;
  return { point: pointOk ? text : null, comma: commaOk ? text : null, typo };
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 0xa0 || code === 0x2009 || code === 0x202f;
}

function isMinus(code: number): boolean {
  return code === 45 || code === 0x2212;
}

function digitOrMark(code: number): boolean {
  return isDigit(code) || code === 46 || code === 44;
}

/** The currency written from text[i] on ("$", "US$", "EUR"), or "". */
function currencyAt(text: string, i: number, end: number): string {
  const c = text[i] as string;
  if (SYMBOLS.includes(c)) return c;
  if (text[i + 1] === "$" && "RCAS".includes(c)) return `${c}$`;
  if (i + 3 > end) return "";
  const three = text.slice(i, i + 3);
  return three === "US$" || three === "HK$" || CURRENCY_CODE_SET.has(three) ? three : "";
}

/** The currency written up to text[end - 1], or "". */
function currencyBefore(text: string, start: number, end: number): string {
  if (end - 3 >= start) {
    const three = text.slice(end - 3, end);
    if (three === "US$" || three === "HK$" || CURRENCY_CODE_SET.has(three)) return three;
  }
  const c = text[end - 1] as string;
  if (c === "$" && end - 2 >= start && "RCAS".includes(text[end - 2] as string)) {
    return text.slice(end - 2, end);
  }
  return SYMBOLS.includes(c) ? c : "";
}

/**
 * A value's number, both ways; null when it is no number at all. Around the digits: a sign,
 * a currency and "(" before; ")", "%", a trailing minus and a currency after, each at most once.
 */
function readNumberText(text: string): NumberText | null {
  if (PLAIN_INTEGER.test(text)) return { point: text, comma: text, flags: 0 };
  if (PLAIN_DECIMAL.test(text)) {
    const dot = text.indexOf(".");
    const whole = text.slice(text.startsWith("-") ? 1 : 0, dot);
    const ambiguous = text.length - dot - 1 === 3 && whole !== "0" && whole.length <= 3;
    return {
      point: text,
      comma: ambiguous ? text.slice(0, dot) + text.slice(dot + 1) : null,
      flags: 0,
    };
  }
  if (text.length > MAX_NUMBER_TEXT) return null;
  const infinite = INFINITY.exec(text);
  if (infinite) {
    const value = infinite[1] && infinite[1] !== "+" ? "-inf" : "inf";
    return { point: value, comma: value, flags: 0 };
  }
  let start = 0;
  let end = text.length;
  let open = false;
  let close = false;
  let sign = "";
  let minus = false;
  let percent = false;
  let currency = "";
  while (start < end) {
    const c = text.charCodeAt(start);
    if (isSpace(c)) start++;
    else if (c === 40 && !open) {
      open = true;
      start++;
    } else if ((isMinus(c) || c === 43) && !sign) {
      sign = c === 43 ? "+" : "-";
      start++;
    } else {
      const found = currency ? "" : currencyAt(text, start, end);
      if (!found) break;
      currency = found;
      start += found.length;
    }
  }
  while (end > start) {
    const c = text.charCodeAt(end - 1);
    if (isSpace(c)) end--;
    else if (c === 41 && !close) {
      close = true;
      end--;
    } else if (c === 37 && !percent) {
      percent = true;
      end--;
    } else if (isMinus(c) && !sign) {
      sign = "-";
      minus = true;
      end--;
    } else {
      const found = currency ? "" : currencyBefore(text, start, end);
      if (!found) break;
      currency = found;
      end -= found.length;
    }
  }
  if (open !== close || (open && sign) || (currency && percent) || start >= end) return null;
  let body = text.slice(start, end);
  let exponent = "";
  const e = Math.max(body.indexOf("e"), body.indexOf("E"));
  if (e >= 0) {
    exponent = body.slice(e);
    if (!EXPONENT.test(exponent)) return null;
    body = body.slice(0, e);
  }
  if (!digitOrMark(body.charCodeAt(0)) || !digitOrMark(body.charCodeAt(body.length - 1))) {
    return null;
  }
  // "+1 555 123 4567" is a phone number, not a number.
  if (sign === "+" && /[\s\u00a0\u2009\u202f]/.test(body)) return null;
  const digits = readDigits(body, exponent);
  if (!digits) return null;
  const prefix = open || sign === "-" ? "-" : "";
  let flags = 0;
  if (currency) flags |= CURRENCY_BIT;
  if (percent) flags |= PERCENT_BIT;
  if (open) flags |= PARENS_BIT;
  if (minus) flags |= TRAILING_MINUS_BIT;
  if (digits.typo) flags |= TYPO_SPACE_BIT;
  const point = digits.point === null ? null : prefix + digits.point;
  const comma =
    digits.comma === digits.point ? point : digits.comma === null ? null : prefix + digits.comma;
  const result: NumberText = { point, comma, flags };
  if (currency) result.currency = CURRENCY_SYMBOLS[currency] ?? currency;
  return result;
}

/**
 * One value's number as `readColumn` reads it with the column's decimal mark (a decimal point
 * when not given and the text leaves it open); a percent gives its number ("12.5%" -> 12.5).
 * Null when missing or not a number.
 */
export function parseNumber(text: string, decimal?: "." | ","): number | null {
  const trimmed = text.trim();
  if (isMissingNumber(trimmed)) return null;
  const read = readNumberText(trimmed);
  if (!read) return null;
  const canonical =
    decimal === "," ? read.comma : decimal === "." ? read.point : (read.point ?? read.comma);
  if (canonical === null) return null;
  const value = Number(canonical);
  return Number.isFinite(value) ? value : null;
}

const INTEGER_TEXT = /^-?\d+$/;

function numberReading(values: readonly string[], prefer: ReadPreferences): ColumnReading | null {
  const point: (string | null)[] = [];
  // Values that read otherwise with a decimal comma: kept apart only once there is one.
  let comma: (string | null)[] | undefined;
  let pointOk = true;
  let commaOk = true;
  let pointIntegers = true;
  let commaIntegers = true;
  let flags = 0;
  let currency: string | undefined;
  let present = 0;
  const missingWritten = new Set<string>();
  for (const raw of values) {
    if (PLAIN_INTEGER.test(raw)) {
      point.push(raw);
      comma?.push(raw);
      present++;
      continue;
    }
    const text = raw.trim();
    if (isMissingNumber(text)) {
      point.push(missingAs(raw));
      comma?.push(missingAs(raw));
      if (text !== "" && !NA_VALUES.has(text)) missingWritten.add(text);
      continue;
    }
    const read = readNumberText(text);
    if (!read) return null;
    present++;
    if (read.currency) {
      if (currency !== undefined && currency !== read.currency) return null;
      currency = read.currency;
    }
    flags |= read.flags;
    if (read.comma !== read.point && comma === undefined) comma = point.slice();
    point.push(read.point);
    comma?.push(read.comma);
    if (read.point === null) pointOk = false;
    else if (pointIntegers && !INTEGER_TEXT.test(read.point)) pointIntegers = false;
    if (read.comma === null) commaOk = false;
    else if (commaIntegers && !INTEGER_TEXT.test(read.comma)) commaIntegers = false;
    if (!pointOk && !commaOk) return null;
  }
  const open = comma !== undefined;
  if (present === 0) return null;
  if (flags & CURRENCY_BIT && flags & PERCENT_BIT) return null;
  const decimal: "." | "," = pointOk && commaOk ? (prefer.decimal ?? ".") : pointOk ? "." : ",";
  const chosen = decimal === "," && comma ? comma : point;
  const integers = decimal === "." ? pointIntegers : commaIntegers;
  const out = chosen as string[];
  let changed = 0;
  let example: number | undefined;
  for (let i = 0; i < values.length; i++) {
    if (out[i] !== values[i]) {
      changed++;
      if (example === undefined && out[i] !== "") example = i;
    }
  }
  const kind: ValueKind =
    flags & CURRENCY_BIT
      ? "currency"
      : flags & PERCENT_BIT
        ? "percent"
        : integers
          ? "integer"
          : "number";
  const reading: ColumnReading = { kind, values: out, decimal, changed };
  if (currency) reading.unit = currency;
  else if (flags & PERCENT_BIT) reading.unit = "%";
  const facts: string[] = [];
  if (currency) facts.push(`currency ${currency}`);
  if (flags & PERCENT_BIT) facts.push("percent kept in points, not divided by 100");
  if (flags & PARENS_BIT) facts.push("negatives in parentheses");
  if (flags & TRAILING_MINUS_BIT) facts.push("trailing minus signs");
  if (decimal === "," && !pointOk) facts.push("decimal comma");
  if (flags & TYPO_SPACE_BIT)
    facts.push('a space after a thousands comma ("16, 122") read as a typo');
  if (open && pointOk && commaOk) {
    facts.push(
      `"1.234" and "1,234" read with a decimal ${decimal === "." ? "point" : "comma"} (no value decides the mark)`,
    );
  }
  if (missingWritten.size > 0) facts.push(placeholderFact(missingWritten));
  if (example !== undefined) {
    facts.push(`${JSON.stringify((values[example] as string).trim())} -> ${out[example]}`);
  }
  if (changed > 0 && facts.length > 0) reading.note = facts.join("; ");
  return reading;
}

// ---------------------------------------------------------------------------------------------
// Booleans

const TRUE_WORDS: ReadonlySet<string> = new Set(["true", "yes", "y"]);
const FALSE_WORDS: ReadonlySet<string> = new Set(["false", "no", "n"]);

function boolReading(values: readonly string[]): ColumnReading | null {
  const out: string[] = [];
  let present = 0;
  let changed = 0;
  let example: number | undefined;
  for (let i = 0; i < values.length; i++) {
    const raw = values[i] as string;
    const text = raw.trim();
    let value: string;
    if (isMissingText(text)) value = missingAs(raw);
    else {
      const lower = text.toLowerCase();
      if (PANDAS_BOOLEANS.has(raw)) value = raw;
      else if (TRUE_WORDS.has(lower)) value = "True";
      else if (FALSE_WORDS.has(lower)) value = "False";
      else return null;
      present++;
    }
    out.push(value);
    if (value !== raw) {
      changed++;
      if (example === undefined && value !== "") example = i;
    }
  }
  if (present === 0) return null;
  const reading: ColumnReading = { kind: "bool", values: out, changed };
  if (example !== undefined) {
    reading.note = `booleans: ${JSON.stringify(values[example])} -> ${out[example]}`;
  }
  return reading;
}

// ---------------------------------------------------------------------------------------------
// Dates

const MONTH_NAMES =
  "january february march april may june july august september october november december".split(
    " ",
  );
/** Month numbers by English name and abbreviation ("mar", "march", "sept"). */
const MONTHS: ReadonlyMap<string, number> = new Map([
  ...MONTH_NAMES.map((name, i) => [name, i + 1] as const),
  ...MONTH_NAMES.map((name, i) => [name.slice(0, 3), i + 1] as const),
  ["sept", 9],
]);

const TIME = String.raw`(?:(?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?\s*([AaPp]\.?[Mm]\.?)?\s*(Z|[+-]\d{2}:?\d{2})?)?`;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** 2024-03-05, 2024/03/05, 2024.03.05 (year first: never ambiguous). */
const YEAR_FIRST = new RegExp(String.raw`^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})${TIME}$`);
/** 05.03.2024, 5/3/2024, 03-05-24: day and month in an order the column decides. */
const NUMERIC_DATE = new RegExp(String.raw`^(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})${TIME}$`);
/** 5 Mar 2024, 05-March-2024, 5th March 2024. */
const DAY_MONTH = new RegExp(
  String.raw`^(\d{1,2})(?:st|nd|rd|th)?[\s-]+([A-Za-z]{3,9})\.?,?[\s-]+(\d{4}|\d{2})${TIME}$`,
);
/** March 5, 2024; Mar. 5 2024. */
const MONTH_DAY = new RegExp(
  String.raw`^([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})${TIME}$`,
);
const MAX_DATE_TEXT = 48;

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

function fullYear(text: string): number {
  const n = Number(text);
  // Python's %y: 69-99 are 1969-1999, 00-68 are 2000-2068.
  if (text.length === 2) return n >= 69 ? 1900 + n : 2000 + n;
  return n;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function ymd(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12 || day < 1 || year < 1) return null;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return null;
  return `${String(year).padStart(4, "0")}-${pad2(month)}-${pad2(day)}`;
}

/** The time part of a match (groups from `at`) as " HH:MM:SS[.f][+hh:mm]", "" when none; null when invalid. */
function timeOf(m: RegExpExecArray, at: number): string | null {
  const hourText = m[at];
  if (hourText === undefined) return "";
  let hour = Number(hourText);
  const minute = Number(m[at + 1]);
  const second = Number(m[at + 2] ?? "0");
  const fraction = m[at + 3] ?? "";
  const meridiem = m[at + 4]?.toLowerCase();
  const zone = m[at + 5];
  if (meridiem) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (meridiem.startsWith("p") ? 12 : 0);
  }
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offset = "";
  if (zone === "Z") offset = "+00:00";
  else if (zone) offset = zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  return ` ${pad2(hour)}:${pad2(minute)}:${pad2(second)}${fraction}${offset}`;
}

/** A value's date read day first and month first (the same when its spelling decides), or null. */
interface DateText {
  dayFirst: string | null;
  monthFirst: string | null;
  /** The separator of a numeric date whose order is open. */
  separator?: string;
}

function readDateText(text: string): DateText | null {
  if (ISO_DATE.test(text)) {
    const date = ymd(Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8)));
    return date === null ? null : { dayFirst: text, monthFirst: text };
  }
  if (text.length > MAX_DATE_TEXT) return null;
  let m = YEAR_FIRST.exec(text);
  if (m) {
    const time = timeOf(m, 5);
    const date = ymd(Number(m[1]), Number(m[3]), Number(m[4]));
    if (time === null || date === null) return null;
    return { dayFirst: date + time, monthFirst: date + time };
  }
  m = NUMERIC_DATE.exec(text);
  if (m) {
    const [, first = "", separator = "", second = "", yearText = ""] = m;
    // "1.2.30" is a version, "05.03.24" a date: a short year needs two-digit fields, except with "/".
    if (yearText.length === 2 && separator !== "/" && (first.length !== 2 || second.length !== 2))
      return null;
    const time = timeOf(m, 5);
    if (time === null) return null;
    const year = fullYear(yearText);
    const a = Number(first);
    const b = Number(second);
    const dayFirst = ymd(year, b, a);
    const monthFirst = ymd(year, a, b);
    if (dayFirst === null && monthFirst === null) return null;
    return {
      dayFirst: dayFirst === null ? null : dayFirst + time,
      monthFirst: monthFirst === null ? null : monthFirst + time,
      separator,
    };
  }
  m = DAY_MONTH.exec(text);
  if (m) {
    const month = MONTHS.get((m[2] as string).toLowerCase());
    const time = timeOf(m, 4);
    const date = month ? ymd(fullYear(m[3] as string), month, Number(m[1])) : null;
    if (time === null || date === null) return null;
    return { dayFirst: date + time, monthFirst: date + time };
  }
  m = MONTH_DAY.exec(text);
  if (m) {
    const month = MONTHS.get((m[1] as string).toLowerCase());
    const time = timeOf(m, 4);
    const date = month ? ymd(Number(m[3]), month, Number(m[2])) : null;
    if (time === null || date === null) return null;
    return { dayFirst: date + time, monthFirst: date + time };
  }
  return null;
}

/** Text written as a date that names none: "0000-00-00", "31.02.2024", "2023-13-01". */
const IMPOSSIBLE_DATE =
  /^(?:\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.\d{4}|\d{1,2}\/\d{1,2}\/\d{4})(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?$/;

function dateReading(values: readonly string[], prefer: ReadPreferences): ColumnReading | null {
  const dayFirst: (string | null)[] = [];
  const monthFirst: (string | null)[] = [];
  let dayOk = true;
  let monthOk = true;
  let open = false;
  let present = 0;
  let withTime = false;
  const separators = { slash: 0, other: 0 };
  const impossible = new Set<string>();
  let impossibleCount = 0;
  for (const raw of values) {
    const text = raw.trim();
    if (isMissingText(text)) {
      dayFirst.push(missingAs(raw));
      monthFirst.push(missingAs(raw));
      continue;
    }
    const read = readDateText(text);
    if (!read) {
      if (!IMPOSSIBLE_DATE.test(text)) return null;
      impossible.add(text);
      impossibleCount++;
      dayFirst.push("");
      monthFirst.push("");
      continue;
    }
    present++;
    dayFirst.push(read.dayFirst);
    monthFirst.push(read.monthFirst);
    if (read.dayFirst === null) dayOk = false;
    if (read.monthFirst === null) monthOk = false;
    if (!dayOk && !monthOk) return null;
    if (read.separator !== undefined) {
      open = true;
      if (read.separator === "/") separators.slash++;
      else separators.other++;
    }
    const sample = read.dayFirst ?? read.monthFirst ?? "";
    if (sample.length > 10) withTime = true;
  }
  // A few dates that name no day are flagged; many say the column is no date column.
  if (present === 0 || impossibleCount * 4 > present) return null;
  let first: boolean;
  let by: ColumnReading["dayFirstBy"];
  if (dayOk && monthOk) {
    if (prefer.dayFirst !== undefined) {
      first = prefer.dayFirst;
      by = "preference";
    } else {
      first = separators.other >= separators.slash;
      by = "separator";
    }
  } else {
    first = dayOk;
    by = "values";
  }
  const out = (first ? dayFirst : monthFirst) as string[];
  let changed = 0;
  let example: number | undefined;
  for (let i = 0; i < values.length; i++) {
    const value = withTime && out[i]?.length === 10 ? `${out[i]} 00:00:00` : (out[i] as string);
    out[i] = value;
    if (value !== values[i]) {
      changed++;
      if (example === undefined && value !== "") example = i;
    }
  }
  const reading: ColumnReading = { kind: withTime ? "datetime" : "date", values: out, changed };
  if (open) {
    reading.dayFirst = first;
    reading.dayFirstBy = by;
  }
  if (example !== undefined) {
    const order = !open ? "dates" : first ? "day-first dates" : "month-first dates";
    const why =
      !open || by === "values"
        ? ""
        : by === "preference"
          ? " (as the locale writes them; no day above 12 decides it)"
          : ` (the custom for "${separators.other >= separators.slash ? "." : "/"}"; no day above 12 decides it)`;
    reading.note = `${order} ${JSON.stringify((values[example] as string).trim())} -> ${out[example]}${why}`;
  }
  if (impossible.size > 0) {
    const listed = [...impossible]
      .slice(0, 3)
      .map((text) => JSON.stringify(text))
      .join(", ");
    const flag = `no such date: ${listed} read as missing`;
    reading.note = reading.note ? `${reading.note}; ${flag}` : flag;
  }
  return reading;
}

// ---------------------------------------------------------------------------------------------
// Units in headers

const SCALE = String.raw`(?:k|m|mn|mln|mio\.?|bn|b|mrd\.?|tn|thousands?|millions?|billions?|trillions?|'000s?|000s?|tsd\.?)`;
const PHYSICAL = String.raw`(?:kg|mg|tonnes?|tons?|lbs?|oz|km|cm|mm|mi|miles?|ft|yd|km²|km2|m²|m2|m³|m3|sq\.?\s?(?:km|mi|m|ft)|ha|acres?|ml|litres?|liters?|gal|sec|secs|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|months?|years?|yrs?|°C|°F|℃|kWh|MWh|GWh|TWh|kW|MW|GW|Hz|MHz|GHz|mph|km/h|kph|knots?|kcal|cal|kJ|MJ|bpm|ppm|dB|KB|MB|GB|TB|people|persons|inhabitants|units|pcs|m|g|t|s|h|l)`;
const PER = String.raw`(?:\s*(?:/|per)\s*(?:${PHYSICAL}|capita|person|head|year|day|hour))`;
const UNIT_TEXT = new RegExp(
  String.raw`^(?:in\s+)?(?:(?:${CURRENCY})\s*${SCALE}?${PER}?|${SCALE}\s+(?:of\s+)?(?:${CURRENCY})|${SCALE}|%|percent|per\s?cent|pct\.?|${PHYSICAL}${PER}*)$`,
  "i",
);
/** Single letters are units only in lower case: "(m)" is metres, "Group (A)" is a name. */
const SINGLE_LETTER = /^[A-Za-z]$/;
const BRACKETED = /\(([^()]{1,30})\)|\[([^[\]]{1,30})\]/g;
const TRAILING_PERCENT = /^(.*?)\s*%$/;

/** "$m" -> "USD m", "%" -> "%", "percent" -> "%", "kg" as written; null when not a unit. */
function unitOf(text: string): string | null {
  const inner = text.trim();
  if (SINGLE_LETTER.test(inner) && inner !== inner.toLowerCase()) return null;
  if (!UNIT_TEXT.test(inner)) return null;
  const bare = inner.replace(/^in\s+/i, "");
  if (/^(?:%|percent|per\s?cent|pct\.?)$/i.test(bare)) return "%";
  const symbol = /^(US\$|HK\$|[RCAS]\$|[$€£¥₹₩])\s*(.*)$/.exec(bare);
  if (symbol) {
    const code = CURRENCY_SYMBOLS[symbol[1] as string] as string;
    return symbol[2] ? `${code} ${symbol[2]}` : code;
  }
  return bare;
}

/** The unit a header states and the header without it: "Revenue (USD m)" -> Revenue, USD m. */
export function headerUnit(header: string): { name?: string; unit?: string } {
  for (const m of header.matchAll(BRACKETED)) {
    const inner = m[1] ?? m[2] ?? "";
    // "Author(s)" is a plural, not seconds: a one-letter unit stands apart from the word.
    if (inner.length === 1 && m.index > 0 && /\p{L}/u.test(header[m.index - 1] ?? "")) continue;
    const unit = unitOf(inner);
    if (unit === null) continue;
    const name = (header.slice(0, m.index) + header.slice(m.index + m[0].length))
      .replace(/\s{2,}/g, " ")
      .replace(/\s+([/,])/g, " $1")
      .trim();
    return name ? { name, unit } : { unit };
  }
  const percent = TRAILING_PERCENT.exec(header.trim());
  if (percent) {
    const name = (percent[1] as string).trim();
    return name ? { name, unit: "%" } : { unit: "%" };
  }
  const comma = header.lastIndexOf(",");
  if (comma > 0) {
    const unit = unitOf(header.slice(comma + 1));
    if (unit !== null) return { name: header.slice(0, comma).trim(), unit };
  }
  return {};
}

// ---------------------------------------------------------------------------------------------

/**
 * Reads a column as an analyst would: booleans, then numbers (currency, thousands separators,
 * percent, negatives in parentheses or with a trailing minus, the decimal mark decided by the
 * column's values), then dates (day or month first decided by the values), else text as is.
 * `prefer` settles what the values leave open (from the user's locale).
 */
/** Dot leaders that fill a label out to its numbers: `March . . . . .`, `Total.......`. */
const LEADER = /\s*\.(?:\s+\.){2,}\s*$|\s*\.{4,}\s*$/;

/** A text column: labels filled out with dot leaders lose them; the rest stays as written. */
function textReading(values: readonly string[]): ColumnReading {
  let changed = 0;
  let example: number | undefined;
  const out = values.map((value, i) => {
    const trimmed = value.replace(LEADER, "");
    if (trimmed === value || trimmed.trim() === "") return value;
    changed++;
    example ??= i;
    return trimmed;
  });
  const reading: ColumnReading = { kind: "text", values: changed > 0 ? out : [...values], changed };
  if (example !== undefined) {
    reading.note = `dot leaders removed: ${JSON.stringify(values[example])} -> ${JSON.stringify(out[example])}`;
  }
  return reading;
}

export function readColumn(
  header: string,
  values: readonly string[],
  prefer: ReadPreferences = {},
): ColumnReading {
  const fromHeader = headerUnit(header);
  const reading: ColumnReading =
    boolReading(values) ??
    numberReading(values, prefer) ??
    dateReading(values, prefer) ??
    textReading(values);
  if (fromHeader.unit !== undefined) reading.unit = fromHeader.unit;
  if (fromHeader.name !== undefined) reading.name = fromHeader.name;
  return reading;
}
