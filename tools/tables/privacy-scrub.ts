/*
 * The last line of the privacy modes: before a prompt leaves, every cell of the run's tables
 * that it quotes is replaced by HIDDEN. The modes' own rules keep cells out of prompts in the
 * first place (tools/tables/privacy.ts); this catches what text built on this machine (a checker's
 * note, an error message, an earlier answer) carries along.
 */

export const HIDDEN = "[hidden]";

/** Text cells shorter than this are not scrubbed: they would take ordinary words with them. */
const MIN_TEXT_CHARS = 3;
/** Numbers with fewer digits are not scrubbed: they would take line numbers and scores. */
const MIN_NUMBER_DIGITS = 3;

/** Cells that say nothing of anyone: scrubbing them would only garble prompts. */
const GENERIC = new Set([
  ..."a an as at be by do if in is it of on or so to up we".split(" "),
  "yes",
  "no",
  "true",
  "false",
  "none",
  "nan",
  "null",
  "n/a",
  "total",
  "totals",
  "subtotal",
  "all",
  "other",
  "others",
  "unknown",
  "the",
  "and",
]);

const WORD = /[\p{L}\p{N}]+/gu;
const EDGES = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
/** A number as prompts write it: 1234, 1,234, 12.5, 1.5e6; not part of a word or an id. */
const NUMBER =
  /(?<![\p{L}\p{N}_.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\p{L}\p{N}_])/gu;
const isWordChar = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

interface Entry {
  lower: string;
  length: number;
}

export interface ScrubOptions {
  /** Cells the user's own question names stay. */
  question?: string;
  /** Numbers shown anyway (the mode's aggregates): they stay, unless `strict`. */
  released?: ReadonlySet<number>;
  /**
   * Scrub short cells and numbers of any length too: for notes made on this machine, which say
   * nothing a model needs of the words around them. Cells `allowed` mentions (the code the
   * model wrote) stay.
   */
  strict?: boolean;
  allowed?: string;
}

/** `text` as a regular expression that matches it literally. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `haystack` (lower case) holds `needle` (lower case) as a whole word or phrase. */
function mentions(haystack: string, needle: string): boolean {
  if (!haystack.includes(needle)) return false;
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(needle)}(?![\\p{L}\\p{N}])`, "u").test(
    haystack,
  );
}

/** Numbers a prompt writes, as values. */
export function numbersIn(text: string): number[] {
  return [...text.matchAll(NUMBER)].map((m) => Number(m[0].replaceAll(",", "")));
}

const digits = (text: string) => text.replace(/\D/g, "").length;

/** Scrubs prompts of the cells of some tables. */
export class CellScrubber {
  /** Text cells by their first word (lower case), longest first. */
  private readonly byFirstWord = new Map<string, Entry[]>();
  private readonly numbers: ReadonlySet<number>;

  constructor(texts: Iterable<string>, numbers: Iterable<number>, names: Iterable<string> = []) {
    const named = new Set([...names].map((n) => n.trim().toLowerCase()));
    for (const text of texts) {
      const core = text.replace(EDGES, "");
      const lower = core.toLowerCase();
      if (core.length === 0 || GENERIC.has(lower) || named.has(lower)) continue;
      // Case folding that changes a text's length would break the position arithmetic below.
      if (lower.length !== core.length) continue;
      const first = lower.match(WORD)?.[0];
      if (!first) continue;
      const list = this.byFirstWord.get(first) ?? [];
      if (!list.some((e) => e.lower === lower)) list.push({ lower, length: core.length });
      this.byFirstWord.set(first, list);
    }
    for (const list of this.byFirstWord.values()) list.sort((a, b) => b.length - a.length);
    this.numbers = new Set(numbers);
  }

  /**
   * `text` with each cell it quotes replaced by HIDDEN: a text cell (three characters or more)
   * on word boundaries, any case; a number of at least three digits that a cell holds. `strict`
   * takes shorter ones too. See ScrubOptions for what stays.
   */
  scrub(text: string, options: ScrubOptions = {}): string {
    const { question = "", released = new Set<number>(), strict = false } = options;
    const asked = question.toLowerCase();
    const allowed = (options.allowed ?? "").toLowerCase();
    const cuts: [number, number][] = [];
    for (const match of text.matchAll(WORD)) {
      const start = match.index;
      if (cuts.length > 0 && start < (cuts.at(-1)?.[1] ?? 0)) continue;
      const entries = this.byFirstWord.get(match[0].toLowerCase());
      const hit = entries?.find(
        (e) =>
          (strict || e.length >= MIN_TEXT_CHARS) &&
          text.slice(start, start + e.length).toLowerCase() === e.lower &&
          !isWordChar(text[start + e.length]) &&
          !mentions(asked, e.lower) &&
          !mentions(allowed, e.lower),
      );
      if (hit) cuts.push([start, start + hit.length]);
    }
    const kept = new Set([...numbersIn(question), ...numbersIn(options.allowed ?? "")]);
    for (const match of text.matchAll(NUMBER)) {
      const value = Number(match[0].replaceAll(",", ""));
      const start = match.index;
      const end = start + match[0].length;
      const short = !strict && digits(match[0]) < MIN_NUMBER_DIGITS;
      // A note that ties an aggregate to its cell says more than the aggregate.
      if (short || (!strict && released.has(value)) || kept.has(value)) continue;
      if (!this.numbers.has(value) && !this.numbers.has(-value)) continue;
      if (cuts.some(([a, b]) => start < b && end > a)) continue;
      cuts.push([start, end]);
    }
    if (cuts.length === 0) return text;
    cuts.sort((a, b) => a[0] - b[0]);
    let out = "";
    let at = 0;
    for (const [start, end] of cuts) {
      out += text.slice(at, start) + HIDDEN;
      at = end;
    }
    return out + text.slice(at);
  }

  /** Whether `value` is a number some cell holds, of at least three digits. */
  isCellNumber(value: number): boolean {
    return (
      digits(String(Math.abs(value))) >= MIN_NUMBER_DIGITS &&
      (this.numbers.has(value) || this.numbers.has(-value))
    );
  }
}
