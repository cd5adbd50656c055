/*
 * The last line of the privacy modes: before a prompt leaves, every cell of the run's tables
 * that it quotes is replaced by HIDDEN. The modes' own rules keep cells out of prompts in the
 * first place (tables/privacy.ts); this catches what text built on this machine (a checker's
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
/**
 * Text cells this long are found anywhere in a text, inside other words too (an error message
 * glues cells together: "ZQX-canary-7741foo barplain"); shorter ones only as whole words.
 */
const ANYWHERE_CHARS = 6;
/** Characters a cell is found by, at its start. */
const KEY_CHARS = 3;

/**
 * Lower case that keeps every offset: a character whose lower case is longer ("İ" is "i" and a
 * combining dot) takes its first part ("i"), in the cells and in the text alike.
 */
export function foldCase(text: string): string {
  let out = "";
  for (const ch of text) out += ch.toLowerCase().slice(0, ch.length);
  return out;
}

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

/** Whether the span `start`..`end` overlaps a cut already made. */
const overlaps = (cuts: readonly [number, number][], start: number, end: number) =>
  cuts.some(([a, b]) => start < b && end > a);

/** Scrubs prompts of the cells of some tables. */
export class CellScrubber {
  /** Text cells (folded) by their first KEY_CHARS characters, longest first. */
  private readonly byKey = new Map<string, Entry[]>();
  private readonly numbers: ReadonlySet<number>;
  /** Column names (folded): they go as written, even when a cell's text is inside one. */
  private readonly names: string[];

  constructor(texts: Iterable<string>, numbers: Iterable<number>, names: Iterable<string> = []) {
    this.names = [...names].map((n) => foldCase(n.trim())).filter((n) => n !== "");
    const named = new Set(this.names);
    for (const text of texts) {
      const core = text.replace(EDGES, "");
      const lower = foldCase(core);
      if (core.length === 0 || GENERIC.has(lower) || named.has(lower)) continue;
      const key = lower.slice(0, KEY_CHARS);
      const list = this.byKey.get(key) ?? [];
      if (!list.some((e) => e.lower === lower)) list.push({ lower, length: core.length });
      this.byKey.set(key, list);
    }
    for (const list of this.byKey.values()) list.sort((a, b) => b.length - a.length);
    this.numbers = new Set(numbers);
  }

  /** Where column names stand in a text (folded): no cell is cut out of them. */
  private nameSpans(folded: string): [number, number][] {
    const spans: [number, number][] = [];
    for (const name of this.names) {
      for (let at = folded.indexOf(name); at >= 0; at = folded.indexOf(name, at + 1)) {
        spans.push([at, at + name.length]);
      }
    }
    return spans;
  }

  /**
   * `text` with each cell it quotes replaced by HIDDEN, in any case (case folded so that
   * offsets hold): a text cell of six characters or more wherever it stands, inside other words
   * too; a shorter one (three characters or more) on word boundaries; a number of at least
   * three digits that a cell holds. Column names go as written. `strict` takes shorter cells
   * and numbers too. See ScrubOptions for what stays.
   */
  scrub(text: string, options: ScrubOptions = {}): string {
    const { question = "", released = new Set<number>(), strict = false } = options;
    const asked = foldCase(question);
    const allowed = foldCase(options.allowed ?? "");
    const folded = foldCase(text);
    const names = this.nameSpans(folded);
    const inName = (a: number, b: number) => names.some(([x, y]) => a >= x && b <= y);
    // Cells the question or the model's own code names stay.
    const keep = (e: Entry) => !mentions(asked, e.lower) && !mentions(allowed, e.lower);
    const cuts: [number, number][] = [];
    for (let start = 0; start < folded.length; start++) {
      if (cuts.length > 0 && start < (cuts.at(-1)?.[1] ?? 0)) continue;
      const entries = this.byKey.get(folded.slice(start, start + KEY_CHARS));
      if (!entries) continue;
      const bounded = (e: Entry) =>
        !isWordChar(text[start - 1]) && !isWordChar(text[start + e.length]);
      const hit = entries.find(
        (e) =>
          (strict || e.length >= MIN_TEXT_CHARS) &&
          folded.startsWith(e.lower, start) &&
          (e.length >= ANYWHERE_CHARS || bounded(e)) &&
          !inName(start, start + e.length) &&
          keep(e),
      );
      if (hit) cuts.push([start, start + hit.length]);
    }
    this.gluedCells(folded, cuts, keep);
    if (strict) this.shortCells(text, folded, cuts, keep);
    const kept = new Set([...numbersIn(question), ...numbersIn(options.allowed ?? "")]);
    for (const match of text.matchAll(NUMBER)) {
      const value = Number(match[0].replaceAll(",", ""));
      const start = match.index;
      const end = start + match[0].length;
      const short = !strict && digits(match[0]) < MIN_NUMBER_DIGITS;
      // A note that ties an aggregate to its cell says more than the aggregate.
      if (short || (!strict && released.has(value)) || kept.has(value)) continue;
      if (!this.numbers.has(value) && !this.numbers.has(-value)) continue;
      if (overlaps(cuts, start, end)) continue;
      cuts.push([start, end]);
    }
    if (cuts.length === 0) return text;
    cuts.sort((a, b) => a[0] - b[0]);
    let out = "";
    let at = 0;
    for (const [start, end] of cuts) {
      if (start < at) continue;
      out += text.slice(at, start) + HIDDEN;
      at = end;
    }
    return out + text.slice(at);
  }

  /**
   * Shorter cells glued to a cell already cut (an error's "…7741foo barplain"): a cut's edge is
   * a word boundary for them, on either side.
   */
  private gluedCells(folded: string, cuts: [number, number][], keep: (e: Entry) => boolean): void {
    const edges = new Set(cuts.flat());
    if (edges.size === 0) return;
    for (const list of this.byKey.values()) {
      for (const e of list) {
        if (e.length >= ANYWHERE_CHARS || e.length < MIN_TEXT_CHARS || !keep(e)) continue;
        for (let at = folded.indexOf(e.lower); at >= 0; at = folded.indexOf(e.lower, at + 1)) {
          const end = at + e.length;
          const left = edges.has(at) || !isWordChar(folded[at - 1]);
          const right = edges.has(end) || !isWordChar(folded[end]);
          if ((edges.has(at) || edges.has(end)) && left && right && !overlaps(cuts, at, end)) {
            cuts.push([at, end]);
          }
        }
      }
    }
  }

  /** Under `strict`, cells shorter than KEY_CHARS, as whole words. */
  private shortCells(
    text: string,
    folded: string,
    cuts: [number, number][],
    keep: (e: Entry) => boolean,
  ): void {
    const short = [...this.byKey.values()].flat().filter((e) => e.length < KEY_CHARS);
    if (short.length === 0) return;
    for (const match of folded.matchAll(WORD)) {
      const start = match.index;
      if (overlaps(cuts, start, start + match[0].length)) continue;
      const hit = short.find(
        (e) => e.lower === match[0] && !isWordChar(text[start + e.length]) && keep(e),
      );
      if (hit) cuts.push([start, start + hit.length]);
    }
  }

  /** Whether `value` is a number some cell holds, of at least three digits. */
  isCellNumber(value: number): boolean {
    return (
      digits(String(Math.abs(value))) >= MIN_NUMBER_DIGITS &&
      (this.numbers.has(value) || this.numbers.has(-value))
    );
  }
}
