import { containsWords, normalizeText } from "./matching.js";
import type { PreparedTable } from "./table-search.js";

/*
 * What a question asks of a table, read by rules: the operation (total, average, median,
 * extreme, spread), how many items, the columns it names and the rows it picks. The alignment
 * (alignment.ts) holds these against what the code did.
 */

export type AskedOperation = "sum" | "mean" | "median" | "max" | "min" | "std" | "var";

const NUMBER_WORDS: Record<string, number> = {
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
const COUNT = String.raw`(\d+|two|three|four|five|six|seven|eight|nine|ten)`;
const EXTREME_WORDS = String.raw`(?:largest|highest|most|greatest|biggest|top|best|smallest|lowest|least|fewest|worst|bottom|\w+est)`;
const CARDINALITY = [
  new RegExp(String.raw`\b(?:top|first|last|bottom)\s+${COUNT}\b`, "i"),
  new RegExp(
    String.raw`\b(?:which|what|name|list|identify)\s+(?:are\s+)?(?:the\s+)?${COUNT}\b`,
    "i",
  ),
  new RegExp(String.raw`\bthe\s+${COUNT}\s+(?:[\w-]+\s+){0,2}?${EXTREME_WORDS}\b`, "i"),
];

/** How many items the question asks for ("which two", "top 3", "the three largest"); null when it does not say. */
export function askedCount(question: string): number | null {
  for (const pattern of CARDINALITY) {
    const word = pattern.exec(question)?.[1]?.toLowerCase();
    if (!word) continue;
    const n = NUMBER_WORDS[word] ?? Number(word);
    if (Number.isInteger(n) && n >= 2 && n <= 50) return n;
  }
  return null;
}

/** The question with the names of the table's columns taken out: "the total of Japan" over a column "total" names it. */
export function withoutColumnNames(question: string, columns: readonly string[]): string {
  let text = ` ${normalizeText(question)} `;
  const names = columns.map(normalizeText).filter(Boolean);
  for (const name of names.sort((a, b) => b.length - a.length))
    text = text.split(` ${name} `).join("  ");
  return text;
}

// "best" and "worst" are left out: a best time is the lowest, a best score the highest.
const MAX =
  /\b(?:highest|largest|most|maximum|max|greatest|biggest|top|peak|longest|tallest|oldest|heaviest)\b/;
const MIN =
  /\b(?:lowest|smallest|least|fewest|minimum|min|bottom|shortest|youngest|lightest)\b/;

/** The operations the question asks for, from its words (column names taken out). */
export function askedOperations(question: string, columns: readonly string[]): Set<AskedOperation> {
  // "at least 5", "at most 3", "most recent" are thresholds and times, not extremes.
  const text = withoutColumnNames(question, columns).replace(
    /\bat (?:least|most)\b|\bmost recent\b|\bleast recent\b/g,
    " ",
  );
  const asked = new Set<AskedOperation>();
  if (/\bmedian\b/.test(text)) asked.add("median");
  if (/\b(?:average|mean|avg)\b/.test(text)) asked.add("mean");
  if (/\b(?:sum|total|combined|altogether|cumulative)\b/.test(text)) asked.add("sum");
  if (MAX.test(text)) asked.add("max");
  if (MIN.test(text)) asked.add("min");
  if (/\bstandard deviation\b|\bstd\b/.test(text)) asked.add("std");
  if (/\bvariance\b/.test(text)) asked.add("var");
  return asked;
}

/** Words that make a question reach rows beyond the ones it names (a comparison, a share, an exclusion). */
const BEYOND_NAMED =
  /\b(?:than|compared?|comparison|relative|versus|vs|share|percentage|percent|proportion|fraction|ratio|rank\w*|other|others|except|excluding|besides|apart|without|not|all|overall|every|each|whole|entire|among|across|between|from|to|until|since|after|before|above|below|over|under|more|less|fewer|most|least|highest|lowest|largest|smallest)\b/;

/** Whether the rows the question names bound the rows its answer may rest on. */
export function namedRowsBound(question: string): boolean {
  return !BEYOND_NAMED.test(normalizeText(question));
}

const YEAR = /^(?:1[89]\d\d|20\d\d)$/;
/** Cells too common to pick a row by ("yes", "no", "total", a single letter). */
const GENERIC = /^(?:yes|no|y|n|true|false|total|all|none|na|n a|other|others|unknown|the|a)$/;

/** A value the question uses to pick rows: a cell of a label column named in the question. */
export interface Selector {
  column: string;
  /** The named values (normalized) of that column. */
  values: string[];
  /** The table's rows holding one of them. */
  rows: Set<number>;
}

function labelColumns(table: PreparedTable): Set<string> {
  const byColumn = new Map<string, { text: number; year: number; all: number }>();
  for (const cell of table.cells) {
    const tally = byColumn.get(cell.column) ?? { text: 0, year: 0, all: 0 };
    tally.all++;
    if (cell.number === null) tally.text++;
    else if (YEAR.test(cell.raw.trim())) tally.year++;
    byColumn.set(cell.column, tally);
  }
  const labels = new Set<string>();
  for (const [column, t] of byColumn) {
    const yearName = /\b(?:year|season|yr)\b/.test(normalizeText(column));
    if (t.text * 2 >= t.all || (t.year === t.all && (yearName || t.all > 1))) labels.add(column);
  }
  return labels;
}

/**
 * The values the question picks rows by, per label column (text columns and year columns): a
 * cell named in the question as whole words. A year counts only where no range words surround
 * the question's numbers.
 */
export function selectorsOf(table: PreparedTable, question: string): Selector[] {
  const hay = normalizeText(question);
  const labels = labelColumns(table);
  const ranged =
    /\b(?:since|after|before|between|from|until|through|to|and|or|later|earlier|prior)\b/.test(hay);
  const columnNames = new Set(table.columns.map((c) => c.norm));
  const found = new Map<string, Selector>();
  for (const cell of table.cells) {
    if (!labels.has(cell.column) || cell.norm.length < 2 || GENERIC.test(cell.norm)) continue;
    if (columnNames.has(cell.norm)) continue;
    const year = YEAR.test(cell.raw.trim());
    if (year && ranged) continue;
    if (!year && cell.number !== null) continue;
    if (!containsWords(hay, cell.norm)) continue;
    const selector = found.get(cell.column) ?? { column: cell.column, values: [], rows: new Set() };
    if (!selector.values.includes(cell.norm)) selector.values.push(cell.norm);
    selector.rows.add(cell.row);
    found.set(cell.column, selector);
  }
  // A value named inside a longer value of the same column ("Japan" in "Japan B") counts once, as the longer.
  for (const selector of found.values()) {
    const longest = selector.values.filter(
      (v) => !selector.values.some((w) => w !== v && containsWords(w, v)),
    );
    if (longest.length < selector.values.length) {
      selector.values = longest;
      selector.rows = new Set(
        table.cells
          .filter((c) => c.column === selector.column && longest.includes(c.norm))
          .map((c) => c.row),
      );
    }
  }
  return [...found.values()];
}

/** The rows that hold every selector's value (one of them per column); null when none or no selector. */
export function pickedRows(selectors: readonly Selector[]): Set<number> | null {
  if (selectors.length === 0) return null;
  const [first, ...rest] = selectors;
  const rows = new Set([...(first?.rows ?? [])].filter((r) => rest.every((s) => s.rows.has(r))));
  return rows.size > 0 ? rows : null;
}

/** Singular and plural of a word compared alike: "medals" names the column "medal". */
function stem(word: string): string {
  if (word.length <= 3) return word;
  return word.replace(/ies$/, "y").replace(/(?:ches|shes|xes)$/, (m) => m.slice(0, -2)).replace(/(?<![su])s$/, "");
}

function stems(text: string): string {
  return normalizeText(text).split(" ").filter(Boolean).map(stem).join(" ");
}

/** Column names that are operation words, not what is measured. */
const OPERATION_NAME =
  /^(?:total|sum|average|avg|mean|median|count|number|no|rank|ranking|max|min|overall|all|id|index|pos|position)$/;

/** The columns a question names (their name, or a part of their header path, as whole words). */
export function namedColumns(
  question: string,
  columns: readonly { name: string; path?: readonly string[] }[],
): string[] {
  const hay = stems(question);
  return columns
    .filter((column) => {
      const names = [column.name, ...(column.path ?? []).slice(-1)];
      return names.some((name) => {
        const needle = stems(name);
        return needle !== "" && !OPERATION_NAME.test(needle) && containsWords(hay, needle);
      });
    })
    .map((c) => c.name);
}
