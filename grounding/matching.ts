import {
  type CarryOptions,
  numberCarried,
  numbersIn,
  type ParsedNumber,
  parseNumber,
} from "./numbers.js";

/** Case, accents, punctuation and spacing removed: how names are compared. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Whether `hay` holds the words of `needle` as whole words. */
export function containsWords(hay: string, needle: string): boolean {
  return needle !== "" && ` ${hay} `.includes(` ${needle} `);
}

/** An item as the matcher sees it. */
export interface Claimed {
  text: string;
  norm: string;
  number: ParsedNumber | null;
}

export function claimed(text: string): Claimed {
  return { text, norm: normalizeText(text), number: parseNumber(text) };
}

/**
 * Whether a printed line or a cell carries an item. Numbers: any number in it, at the item's
 * precision (`rounding`), or the whole cell exactly. Names: the item's words inside a printed
 * line, or the whole cell equal to the item.
 */
export function carriedBy(
  item: Claimed,
  value: string | number | boolean,
  options: CarryOptions,
): boolean {
  if (typeof value === "boolean") return false;
  if (item.number) {
    const target = item.number;
    let found: ParsedNumber[];
    if (typeof value === "number") found = [{ value, places: 0, percent: false, scale: 1 }];
    else if (options.rounding) found = numbersIn(value);
    else {
      const whole = parseNumber(value);
      found = whole ? [whole] : [];
    }
    return found.some((f) => numberCarried(target, f, options));
  }
  const hay = normalizeText(String(value));
  return options.rounding ? containsWords(hay, item.norm) : hay === item.norm;
}
