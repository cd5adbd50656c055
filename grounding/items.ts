import { numberTokens, parseNumber } from "./numbers.js";

/*
 * Cutting an answer into the items it claims: list entries, "and" parts, the numbers of a
 * sentence, the word of a yes/no. The answerer, the checker and the type rules all cut
 * answers here, so an item means the same thing everywhere.
 */

const MONTH =
  "(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?";
/** A date, a month and year, or a season such as "1990 - 91" or "2019/20". */
const DATE = new RegExp(
  String.raw`^(?:\d{4}-\d{2}(?:-\d{2})?|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}\s*[-–/]\s*\d{2}(?:\d{2})?|(?:\d{1,2}(?:st|nd|rd|th)?\s+)?${MONTH}(?:\s+\d{1,2}(?:st|nd|rd|th)?,?)?(?:\s+\d{4})?)$`,
  "i",
);
const MONTH_DAY = new RegExp(String.raw`${MONTH}\s+\d{1,2}(?:st|nd|rd|th)?$`, "i");

/** A date as answers write them; it has a digit ("May" alone is not one). */
export function isDate(text: string): boolean {
  const t = text.trim();
  return /\d/.test(t) && DATE.test(t);
}

export const YES_NO = /^(?:yes|no|true|false)$/i;

/** "Yes", "No.", "Yes, the total is higher": the answer a yes/no question got, or null. */
export function leadingYesNo(answer: string): "yes" | "no" | null {
  const match =
    /^\W*(yes|no|true|false)\b(?:\s*$|\s*[,.;:!—–-]|\s+(?:it|the|they|there|because|since|as)\b)/i.exec(
      answer.trim(),
    );
  if (!match?.[1]) return null;
  return /^(?:yes|true)$/i.test(match[1]) ? "yes" : "no";
}

/**
 * The entries of a list answer, with "and" left inside them: "a, b and c" gives "a" and "b and
 * c". Thousands separators ("1,062") and dates ("March 3, 1999") are not split.
 */
export function listSegments(answer: string): string[] {
  const text = answer.trim();
  if (!text) return [];
  if (isDate(text)) return [text];
  const pieces = text
    .split(/\s*;\s*|\s*\n\s*|,(?!\d{3}(?!\d))\s*/)
    .map((piece) => piece.trim())
    .filter(Boolean);
  const merged: string[] = [];
  for (const piece of pieces) {
    const previous = merged.at(-1);
    // Put back "March 3, 1999": a month and day followed by a year.
    if (previous && /^\d{4}$/.test(piece) && MONTH_DAY.test(previous)) {
      merged[merged.length - 1] = `${previous}, ${piece}`;
    } else merged.push(piece);
  }
  return merged;
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Prose: a sentence or an explanation rather than values. */
/** Little words inside a long proper name ("Office of the United Nations High Commissioner for Refugees"). */
const NAME_JOINERS = new Set([
  "of",
  "for",
  "the",
  "and",
  "on",
  "in",
  "de",
  "du",
  "des",
  "la",
  "le",
  "von",
  "van",
  "der",
  "den",
  "y",
  "e",
  "et",
  "di",
  "da",
  "&",
  "-",
  "–",
]);

/** A long segment that is a proper name: every word capitalised but the little joining words. */
function isLongName(segment: string): boolean {
  const words = segment.trim().split(/\s+/);
  return words.every(
    (word) => /^[\p{Lu}\p{N}("'“]/u.test(word) || NAME_JOINERS.has(word.toLowerCase()),
  );
}

export function isProse(answer: string): boolean {
  return (
    listSegments(answer).some((segment) => wordCount(segment) > 7 && !isLongName(segment)) ||
    /[a-z][.!?]\s+[A-Z]/.test(answer) ||
    /\b(?:because|since|therefore|which means|due to|indicat\w+|suggest\w*)\b/i.test(answer)
  );
}

/**
 * The items of an answer: "a, b and c" has three; "1,062" is one number; "March 3, 1999" one
 * date. A segment joined by "and" stays whole when `foundWhole` says the evidence has it whole
 * ("Trinidad and Tobago").
 */
export function answerItems(
  answer: string,
  foundWhole: (segment: string) => boolean = () => false,
): string[] {
  return listSegments(answer).flatMap((segment) => {
    if (isDate(segment)) return [segment];
    const parts = segment
      .split(/\s+(?:and|&)\s+/i)
      .map((part) => part.trim())
      .filter(Boolean);
    return parts.length <= 1 || foundWhole(segment) ? [segment] : parts;
  });
}

/** What an item is: a number, a yes/no, a name or phrase, or a sentence nothing can trace. */
export type ItemKind = "number" | "yesno" | "text" | "prose";

/** The items an answer makes claims with, and what kind each is. */
export function claimItems(
  answer: string,
  foundWhole: (segment: string) => boolean = () => false,
): { item: string; kind: ItemKind }[] {
  const text = answer.trim();
  if (!text) return [];
  if (leadingYesNo(text)) {
    const word = /^\W*(\w+)/.exec(text)?.[1] ?? text;
    const rest = text.slice(text.indexOf(word) + word.length);
    return [
      { item: word, kind: "yesno" },
      ...numberTokens(rest).map((item) => ({ item, kind: "number" as const })),
    ];
  }
  if (isProse(text)) {
    const numbers = numberTokens(text).map((item) => ({ item, kind: "number" as const }));
    return numbers.length > 0 ? numbers : [{ item: text, kind: "prose" }];
  }
  return answerItems(text, foundWhole).map((item) => ({
    item,
    kind: parseNumber(item) ? "number" : "text",
  }));
}
