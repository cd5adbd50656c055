/**
 * What a question asks the table for, read without a model: words that may name columns
 * (column queries) and strings that may be cell values (cell keywords).
 */

/** Words that say nothing about the table. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the of in on at to for from by with without into onto over under about as and or nor " +
    "but not no is are was were be been being am do does did has have had having will would " +
    "shall should can could may might must what which who whom whose when where why how that " +
    "this these those there here it its they them their he she his her we our you your i me my " +
    "than then so such if else any all each every some many much more most less least few " +
    "fewer same other another only also just very please give tell show find list name names " +
    "according based based on between among during per vs versus"
  ).split(" "),
);

/**
 * Analysis words: they may name a column ("total", "rank") but are never looked up as cell
 * values on their own.
 */
const ANALYSIS_WORDS: ReadonlySet<string> = new Set(
  (
    "average mean median total sum count number numbers highest lowest maximum minimum max min " +
    "largest smallest biggest greatest top bottom first last difference ratio percentage " +
    "percent proportion share rate change increase decrease trend compare compared comparison " +
    "rank ranked ranking value values table row rows column columns record records entry " +
    "entries overall combined greater larger higher lower smaller times ones one year years"
  ).split(" "),
);

export type KeywordKind = "quoted" | "number" | "date" | "phrase";

export interface Keyword {
  /** Lower-cased, spaces collapsed: what a cell is compared with. */
  text: string;
  kind: KeywordKind;
  /** Words in the keyword (1 for numbers and dates). */
  words: number;
  /** The keyword's number, for numbers. */
  number?: number;
  /** How much a match counts: quoted strings and longer phrases most. */
  weight: number;
}

export interface QuestionTerms {
  /** Stemmed content words, matched against column names. */
  columnQueries: string[];
  /** Strings to look up among the cells, most telling first. */
  cellKeywords: Keyword[];
}

/** Lower case, spaces collapsed, trimmed: the form cells and keywords are compared in. */
export function normalizeText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/** A crude stem, so "medals" finds the column `medal`. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The words of a text or a column name: camelCase and snake_case split, lower case. */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

const QUOTED = /"([^"]+)"|“([^”]+)”|«([^»]+)»|(?<=^|[\s(])'([^']+)'(?=$|[\s.,;:?!)])/g;
const DATE = /\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}\/\d{1,2}\/\d{2,4}\b/g;
const NUMBER = /(?<![\p{L}\d._])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\p{L}\d_])/gu;

/** The value a number is written as: "1,062" is 1062, "12%" is 12. */
function numberKeyword(raw: string): Keyword | null {
  const plain = raw.replace(/,/g, "").replace(/%$/, "").replace(/^\+/, "");
  const number = Number(plain);
  if (!Number.isFinite(number)) return null;
  return { text: plain, kind: "number", words: 1, number, weight: 2 };
}

const MAX_NGRAM = 3;

/**
 * Column queries and cell keywords of a question, deterministically: quoted strings, dates,
 * numbers, and the 1- to 3-word n-grams of the runs of words between stop words and
 * punctuation. At most `maxKeywords` keywords: quoted, then longer n-grams, dates and numbers,
 * then single words, each in question order.
 */
export function questionTerms(question: string, maxKeywords = 16): QuestionTerms {
  const keywords: Keyword[] = [];
  let rest = question;
  for (const match of question.matchAll(QUOTED)) {
    const text = normalizeText(match.slice(1).find((group) => group !== undefined) ?? "");
    if (text) keywords.push({ text, kind: "quoted", words: wordsOf(text).length, weight: 4 });
    rest = rest.replace(match[0], " , ");
  }
  for (const match of rest.matchAll(DATE)) {
    keywords.push({ text: match[0], kind: "date", words: 1, weight: 3 });
  }
  rest = rest.replace(DATE, " , ");
  for (const match of rest.matchAll(NUMBER)) {
    const keyword = numberKeyword(match[0]);
    if (keyword) keywords.push(keyword);
  }

  const columnQueries: string[] = [];
  const phrases: Keyword[] = [];
  // Clauses end at punctuation; a run of words ends at a stop word or a number.
  for (const clause of rest.split(/[.,;:?!()[\]{}"“”]+/)) {
    let run: string[] = [];
    const flush = () => {
      for (let n = Math.min(MAX_NGRAM, run.length); n >= 1; n--) {
        for (let i = 0; i + n <= run.length; i++) {
          const gram = run.slice(i, i + n);
          if (gram.every((word) => ANALYSIS_WORDS.has(word))) continue;
          if (n === 1 && (gram[0]?.length ?? 0) < 2) continue;
          phrases.push({ text: gram.join(" "), kind: "phrase", words: n, weight: n });
        }
      }
      run = [];
    };
    // snake_case identifiers stay whole: they usually name a column (`city_2`).
    const clauseWords = clause
      .toLowerCase()
      .split(/[^\p{L}\p{N}_]+/u)
      .map((word) => word.replace(/^_+|_+$/g, ""))
      .filter(Boolean);
    for (const word of clauseWords) {
      // Numbers may name columns (`2019`, `measure_7`) but end a run of words.
      for (const part of wordsOf(word)) columnQueries.push(/^\d/.test(part) ? part : stem(part));
      if (STOP_WORDS.has(word) || /^\d/.test(word)) {
        flush();
        continue;
      }
      run.push(word);
    }
    flush();
  }
  phrases.sort((a, b) => b.words - a.words);
  const ordered = [
    ...keywords.filter((k) => k.kind === "quoted"),
    ...phrases.filter((k) => k.words > 1),
    ...keywords.filter((k) => k.kind !== "quoted"),
    ...phrases.filter((k) => k.words === 1),
  ];
  const seen = new Set<string>();
  const cellKeywords = ordered.filter((k) => !seen.has(k.text) && seen.add(k.text));
  return {
    columnQueries: [...new Set(columnQueries)],
    cellKeywords: cellKeywords.slice(0, maxKeywords),
  };
}

export type MatchKind = "exact" | "partial";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const boundaryCache = new Map<string, RegExp>();

/** `keyword` as whole words inside a text, not as part of a longer word or number. */
function containsWords(text: string, keyword: string): boolean {
  if (!text.includes(keyword)) return false;
  let pattern = boundaryCache.get(keyword);
  if (!pattern) {
    pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(keyword)}(?![\\p{L}\\p{N}])`, "u");
    if (boundaryCache.size > 4096) boundaryCache.clear();
    boundaryCache.set(keyword, pattern);
  }
  return pattern.test(text);
}

/**
 * How a cell matches a keyword: `exact` when it is the keyword (or the same number),
 * `partial` when it holds the keyword as whole words, else null. `cell` is normalized.
 */
export function matchCell(keyword: Keyword, cell: string): MatchKind | null {
  if (!cell) return null;
  if (cell === keyword.text) return "exact";
  if (keyword.number !== undefined) {
    const plain = cell.replace(/,/g, "");
    if (/^[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?$/.test(plain)) {
      return Number(plain.replace(/%$/, "")) === keyword.number ? "exact" : null;
    }
  }
  return containsWords(cell, keyword.text) ? "partial" : null;
}

/** Points for one keyword's match: an exact match counts twice a partial one. */
export function matchScore(keyword: Keyword, kind: MatchKind): number {
  return keyword.weight * (kind === "exact" ? 2 : 1);
}

/** How well a column name answers the column queries, 0 when no word of it is asked for. */
export function columnScore(columnName: string, columnQueries: readonly string[]): number {
  const words = wordsOf(columnName).map(stem);
  if (words.length === 0) return 0;
  const asked = new Set(columnQueries);
  const hits = words.filter((word) => asked.has(word)).length;
  return hits / words.length;
}
