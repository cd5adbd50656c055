/**
 * Numbers as people and programs write them: "1,062", "$1.2 million", "-0.75%", "468.3 km",
 * "10.6000001", "4.5e-05". Used to tell whether a value printed or stored somewhere carries a
 * number stated in an answer.
 */

/** A number written in an answer, a printed line or a cell. */
export interface ParsedNumber {
  value: number;
  /** Decimal places as written: the precision an answer claims. */
  places: number;
  percent: boolean;
  /** A scale word after it ("1.2 million" has 1e6); 1 when none. */
  scale: number;
}

const SCALES: Record<string, number> = {
  thousand: 1e3,
  million: 1e6,
  mn: 1e6,
  billion: 1e9,
  bn: 1e9,
  trillion: 1e12,
};

const CURRENCY = String.raw`(?:[$€£¥₹]|(?:US|USD|EUR|GBP|CAD|AUD|CHF|JPY|CNY|INR|Rs\.?)\s?\$?)`;
const DIGITS = String.raw`(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+`;
/** Suffixes written straight after a number that still leave it a number: "3rd", "5km", "2.5x". */
const GLUED_UNIT =
  /^(?:st|nd|rd|th|k|m|b|bn|mn|km|kg|cm|mm|m2|km2|g|s|h|hrs?|min|ms|mi|ft|lbs?|l|ml|kw|mw|gw|kwh|mph|kmh|x|pts?|yds?|yrs?)\.?(?:\s.*)?$/i;
const WHOLE = new RegExp(
  String.raw`^([-+−])?\s*${CURRENCY}?\s*([-+−])?\s*(${DIGITS})(?:[eE]([-+]?\d+))?(?:\s*(%|percent\b|per cent\b))?(?:\s*(thousand|million|billion|trillion|bn|mn)\b)?(\s*)([^\d]{0,24})$`,
  "i",
);

/**
 * The number an answer item states, or null when it is not one number. Currency in front, a
 * unit or a few words after ("468.3 km", "12 gold medals") are allowed; a second number
 * ("1990 - 91", "3 - 0") makes it not a number.
 */
export function parseNumber(text: string): ParsedNumber | null {
  const match = WHOLE.exec(text.trim());
  if (!match?.[3]) return null;
  const [, sign1, sign2, digits, exponent, percent, scaleWord, space, unit] = match;
  // A unit is words: "5 -", "5 (" or "5, x" are something else (a range, a remark, a list).
  if (unit && /^[-–—(/:,;]/.test(unit.trim())) return null;
  // Letters glued to the digits make a name ("8F", "62xx", "777ER") unless they are a unit.
  if (unit && !space && !percent && !scaleWord && /^[a-z]/i.test(unit) && !GLUED_UNIT.test(unit))
    return null;
  const negative = [sign1, sign2].some((s) => s === "-" || s === "−");
  const magnitude = Number(`${digits.replace(/,/g, "")}${exponent ? `e${exponent}` : ""}`);
  if (!Number.isFinite(magnitude)) return null;
  return {
    value: negative ? -magnitude : magnitude,
    places: exponent ? placesOf(magnitude) : (/\.(\d+)/.exec(digits)?.[1]?.length ?? 0),
    percent: Boolean(percent),
    scale: scaleWord ? (SCALES[scaleWord.toLowerCase()] ?? 1) : gluedScale(unit ?? "", space ?? ""),
  };
}

/**
 * A scale letter after the digits: "74.9k" and "74.9 k" are thousands, "$3.1M" and "3.1 MM"
 * millions, "2bn" and "$2B" billions. A lower-case "m" stays metres.
 */
function gluedScale(unit: string, space: string): number {
  const word = /^(k|K|M|MM|B)\b/.exec(unit)?.[1];
  if (!word || (space && word === "B")) return 1;
  return word === "k" || word === "K" ? 1e3 : word === "B" ? 1e9 : 1e6;
}

function placesOf(value: number): number {
  const text = String(value);
  if (text.includes("e-"))
    return Number(text.split("e-")[1]) + (/\.(\d+)/.exec(text)?.[1]?.length ?? 0);
  return /\.(\d+)/.exec(text)?.[1]?.length ?? 0;
}

/*
 * A number token inside free text. The sign counts only where a program would put one (start,
 * after a space or bracket), so "2019-05-01" gives 2019, 5 and 1, and "x2" gives nothing.
 */
const TOKEN =
  /(?<![\w.])(?:(?<=^|[\s([{:=,;'"])([-+−]))?((?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d+))?(?![\w.]*\d)(\s*%)?/g;

/** Every number inside a printed line or a cell: "total: 1,062.5 (45%)" gives 1062.5 and 45%. */
export function numbersIn(text: string): ParsedNumber[] {
  const found: ParsedNumber[] = [];
  for (const match of text.matchAll(TOKEN)) {
    const [, sign, digits = "", exponent, percent] = match;
    const negative = sign === "-" || sign === "−";
    const magnitude = Number(`${digits.replace(/,/g, "")}${exponent ? `e${exponent}` : ""}`);
    if (!Number.isFinite(magnitude)) continue;
    found.push({
      value: negative ? -magnitude : magnitude,
      places: exponent ? placesOf(magnitude) : (/\.(\d+)/.exec(digits)?.[1]?.length ?? 0),
      percent: Boolean(percent),
      scale: 1,
    });
  }
  return found;
}

export interface CarryOptions {
  /** Accept a value that rounds to the claim at the claim's precision (computed values). */
  rounding: boolean;
  /** The question asks for a percentage, so 0.45 may be written 45. */
  percentQuestion?: boolean;
  /**
   * The found value is a fraction (a share computed without a factor of 100), so a claim
   * written with a percent sign must be 100 times it: 0.2368 is 23.68%, never 0.24%.
   */
  fraction?: boolean;
  /**
   * Scales the found value is counted in besides ones (its column's unit, "in thousands" in the
   * question): 74886 in a column of thousands carries "$74.9 million".
   */
  scales?: readonly number[];
}

/** Half a unit in the last place the claim states, with room for binary floating point. */
function tolerance(claimed: ParsedNumber): number {
  return (0.5 * 10 ** -claimed.places * (1 + 1e-9) + 1e-12) * claimed.scale;
}

function close(candidate: number, claimed: number, within: number): boolean {
  return Math.abs(candidate - claimed) <= within;
}

/**
 * Whether `found` carries the number `claimed`. With rounding, a value carries a claim that
 * rounds it to the precision the claim states (10.6 is carried by 10.57 and 10.6000001, 11 by
 * 10.6, but 10.57 is not carried by 10.6); without, only an equal value does. A fraction and
 * its percent (0.45 and 45%) are the same value; so are 1.2 million and 1200000.
 */
export function numberCarried(
  claimed: ParsedNumber,
  found: ParsedNumber,
  options: CarryOptions = { rounding: true },
): boolean {
  const value = found.value * found.scale;
  const bases = [value, ...(options.scales ?? []).map((s) => value * s)];
  const candidates: number[] = [];
  for (const base of bases) {
    if (claimed.percent && !found.percent) {
      // A fraction is never its own percentage: 0.2368 is 23.68%, not 0.24%.
      if (!options.fraction || Math.abs(base) > 1) candidates.push(base);
      candidates.push(base * 100);
    } else {
      candidates.push(base);
      if (found.percent && !claimed.percent) candidates.push(base / 100);
      else if (!found.percent && options.percentQuestion) candidates.push(base * 100);
    }
  }
  const target = claimed.value * claimed.scale;
  const within = options.rounding ? tolerance(claimed) : 1e-9 * Math.max(1, Math.abs(target));
  return candidates.some((candidate) => close(candidate, target, within));
}

/** The numbers of a sentence as written ("42.86%", "-0.13"), for tracing each one. */
export function numberTokens(text: string): string[] {
  return [...text.matchAll(TOKEN)].map((m) => m[0].replace(/\s+%$/, "%"));
}

/**
 * The scale a unit or a phrase states: "USD m", "(millions)", "'000", "in thousands" give 1e6,
 * 1e6, 1e3, 1e3; null when it states none.
 */
export function scaleOfUnit(text: string): number | null {
  const t = text.toLowerCase();
  if (/\bthousands?\b|'000|\b000s\b|\bk\b/.test(t)) return 1e3;
  if (/\bmillions?\b|\bmn\b|\bmio\b|\bm\b|\bmm\b/.test(t)) return 1e6;
  if (/\bbillions?\b|\bbn\b|\bb\b/.test(t)) return 1e9;
  return null;
}
