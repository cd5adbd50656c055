import { containsWords, normalizeText } from "./matching.js";
import type { PreparedTable } from "./table-search.js";

/*
 * What a question asks of a table, read by rules: the operation (total, average, median,
 * extreme, spread), how many items, the columns it names and the rows it picks. The alignment
 * (alignment.ts) holds these against what the code did.
 */

export type AskedOperation = "sum" | "mean" | "median" | "max" | "min" | "std" | "var" | "count";

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
  const others = names.filter((n) => !OPERATION_NAME.test(n));
  // "average total points" over columns "average" and "total points": an operation on the
  // column that follows, not the column "average". Such words are kept (marked, so that no
  // name matches them).
  for (const name of names.filter((n) => OPERATION_NAME.test(n))) {
    for (const other of others)
      text = text.split(` ${name} ${other} `).join(` \u0001${name} ${other} `);
  }
  for (const name of names.sort((a, b) => b.length - a.length)) {
    text = text.split(` ${name} `).join("  ");
  }
  return text;
}

/** Column names that are operation words, not what is measured. */
const OPERATION_NAME =
  /^(?:total|sum|average|avg|mean|median|count|number|no|rank|ranking|max|min|overall|all|id|index|pos|position)$/;

// "best" and "worst" are left out: a best time is the lowest, a best score the highest.
const MAX =
  /\b(?:highest|largest|most|maximum|max|greatest|biggest|top|peak|longest|tallest|oldest|heaviest)\b/;
const MIN = /\b(?:lowest|smallest|least|fewest|minimum|min|bottom|shortest|youngest|lightest)\b/;

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
  if (/\bhow many\b|\bcount\b/.test(text)) asked.add("count");
  return asked;
}

/** Words that make a question reach rows beyond the ones it names (a comparison, a share, an exclusion). */
const BEYOND_NAMED =
  /\b(?:than|compared?|comparison|relative|versus|vs|share|percentage|percent|proportion|fraction|ratio|rank\w*|other|others|except|excluding|besides|apart|without|not|among|across|between|from|to|until|since|after|before|above|below|over|under|more|less|fewer|most|least|highest|lowest|largest|smallest)\b/;

/**
 * Whether the rows the question names bound the rows its answer may rest on: nothing in it
 * reaches beyond them once the phrases that pick the rows ("more than 10 dances") are taken out.
 */
export function namedRowsBound(
  question: string,
  selectors: readonly Selector[] = [],
  columns: readonly ColumnName[] = [],
): boolean {
  return !BEYOND_NAMED.test(
    withoutMentioned(withoutPhrases(question, selectors), question, columns),
  );
}

/** The question (normalized) without the phrases the selectors read: what else it says of rows. */
export function withoutPhrases(question: string, selectors: readonly Selector[]): string {
  let text = ` ${normalizeText(question)} `;
  for (const phrase of selectors.flatMap((s) => s.phrases))
    text = text.split(` ${phrase} `).join("  ");
  return text;
}

/**
 * `text` without the words of the columns the question mentions: they are names ("a win
 * percentage", "viewers (in millions)"), not a share or a scale.
 */
export function withoutMentioned(
  text: string,
  question: string,
  columns: readonly ColumnName[],
): string {
  const names = new Set(
    mentionedColumns(question, columns).flatMap((c) => stems(coreName(c)).split(" ")),
  );
  return normalizeText(text.replace(/\([^)]*\)/g, " "))
    .split(" ")
    .filter((w) => !names.has(stem(w)))
    .join(" ");
}

const YEAR = /^(?:1[89]\d\d|20\d\d)$/;
/** Cells too common to pick a row by ("yes", "no", "total", a single letter). */
const GENERIC = /^(?:yes|no|y|n|true|false|total|all|none|na|n a|other|others|unknown|the|a)$/;
/** Words next to a number that make it a bound of a range, not a value to pick by. */
const RANGE_BEFORE =
  /(?:since|after|before|between|from|until|through|to|and|or|than|over|under|above|below|least|most|within|by|per|top|first|last)$/;
const RANGE_AFTER = /^(?:to|and|or|through|onward\w*|later|earlier)\b/;

/** A value the question uses to pick rows: a cell named in the question, or a bound on a named column. */
export interface Selector {
  column: string;
  /** The named values (normalized), or the bound in words ("more than 10"). */
  values: string[];
  /** The table's rows it picks. */
  rows: Set<number>;
  /** The words of the question that pick them (normalized), taken out before `namedRowsBound`. */
  phrases: string[];
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
    if (t.text * 2 >= t.all || (t.year === t.all && t.all > 1)) labels.add(column);
  }
  return labels;
}

/** Whether the number at word `i` of `words` stands alone (not a bound, not part of a range). */
function standsAlone(words: readonly string[], i: number): boolean {
  const before = words.slice(Math.max(0, i - 2), i).join(" ");
  const after = words.slice(i + 1, i + 3).join(" ");
  // "and"/"or" join a range only after "between"/"from" ("5 gold and 2 silver" is two values).
  const ranged = words.slice(Math.max(0, i - 5), i).some((w) => w === "between" || w === "from");
  const joined = /(?:^|\s)(?:and|or)$/.test(before) && !ranged;
  return (joined || !RANGE_BEFORE.test(before)) && !RANGE_AFTER.test(after);
}

const BOUNDS: [RegExp, (x: number, n: number) => boolean][] = [
  [
    /^(?:more than|greater than|higher than|larger than|over|above|exceeding|exceeds|exceeded)$/,
    (x, n) => x > n,
  ],
  [/^(?:at least|no less than|minimum of)$/, (x, n) => x >= n],
  [/^(?:less than|fewer than|lower than|smaller than|under|below)$/, (x, n) => x < n],
  [/^(?:at most|no more than|maximum of)$/, (x, n) => x <= n],
];

/** Bounds written after the number: "6.0 or higher", "50 and above". */
const AFTER_BOUNDS: [RegExp, (x: number, n: number) => boolean][] = [
  [/^(?:\S+ ){0,2}(?:or|and) (?:more|higher|above|greater|over|later)$/, (x, n) => x >= n],
  [/^(?:\S+ ){0,2}(?:or|and) (?:less|lower|below|fewer|under|earlier)$/, (x, n) => x <= n],
];

/**
 * The values the question picks rows by: a cell of a label column (text, or years) named in
 * the question as whole words; a number that equals cells of a column the question names
 * ("won 18 gold medals"); a bound on such a column ("more than 10 dances", "an elevation of at
 * least 3000"). A year or a number next to range words picks nothing by itself.
 */
export function selectorsOf(
  table: PreparedTable,
  question: string,
  columns: readonly ColumnName[] = table.columns.map((c) => ({ name: c.name })),
): Selector[] {
  const hay = normalizeText(question);
  const words = hay.split(" ");
  const labels = labelColumns(table);
  const columnNames = new Set(table.columns.map((c) => c.norm));
  const found = new Map<string, Selector>();
  const selector = (column: string) => {
    const known = found.get(column) ?? { column, values: [], rows: new Set<number>(), phrases: [] };
    found.set(column, known);
    return known;
  };
  for (const cell of table.cells) {
    if (!labels.has(cell.column) || cell.norm.length < 2 || GENERIC.test(cell.norm)) continue;
    if (columnNames.has(cell.norm)) continue;
    const year = YEAR.test(cell.raw.trim());
    if (!year && cell.number !== null) continue;
    if (!containsWords(hay, cell.norm)) continue;
    if (year && !words.some((w, i) => w === cell.norm && standsAlone(words, i))) continue;
    const s = selector(cell.column);
    if (!s.values.includes(cell.norm)) s.values.push(cell.norm);
    if (!s.phrases.includes(cell.norm)) s.phrases.push(cell.norm);
    s.rows.add(cell.row);
  }
  // A value named inside a longer value of the same column ("Japan" in "Japan B") counts once,
  // as the longer; the rows are those whose cell holds a named value as whole words ("greece"
  // picks "greece ( crete )" too): more rows than meant, never fewer.
  for (const s of found.values()) {
    s.values = s.values.filter((v) => !s.values.some((w) => w !== v && containsWords(w, v)));
    s.rows = new Set(
      table.cells
        .filter((c) => c.column === s.column && s.values.some((v) => containsWords(c.norm, v)))
        .map((c) => c.row),
    );
  }
  numberSelectors(table, question, columns, labels, selector);
  yearRanges(table, hay, question, labels, selector);
  // "The top 5 in banking" ranks within the rows named, not the whole table.
  if (found.size === 0) topRanks(table, hay, selector);
  return [...found.values()].filter((s) => s.rows.size > 0);
}

/** "from 2000 to 2008", "between 1990 and 1995": the rows of a year column in that range. */
function yearRanges(
  table: PreparedTable,
  hay: string,
  question: string,
  labels: Set<string>,
  selector: (column: string) => Selector,
): void {
  const ranges = [
    ...[...hay.matchAll(/\b(?:from|between) (\d{4}) (?:to|and|through|until) (\d{4})\b/g)].map(
      (m) => [m[0], m[1], m[2]] as const,
    ),
    // "2000-2007", unless the table holds such a period as a label.
    ...[...question.matchAll(/\b(\d{4})\s*[-–]\s*(\d{4})\b/g)]
      .filter((m) => !table.cells.some((c) => c.norm === normalizeText(m[0])))
      .map((m) => [normalizeText(m[0]), m[1], m[2]] as const),
  ];
  for (const [phrase, a, b] of ranges) {
    const low = Math.min(Number(a), Number(b));
    const high = Math.max(Number(a), Number(b));
    for (const column of labels) {
      const cells = table.cells.filter((c) => c.column === column);
      if (cells.length === 0 || !cells.every((c) => YEAR.test(c.raw.trim()))) continue;
      const rows = cells
        .filter((c) => Number(c.raw) >= low && Number(c.raw) <= high)
        .map((c) => c.row);
      if (rows.length === 0 || rows.length === cells.length) continue;
      const s = selector(column);
      s.values.push(phrase);
      s.phrases.push(phrase);
      for (const r of rows) s.rows.add(r);
    }
  }
}

/** Numbers of the question that pick rows of a measure column it names: equal to cells, or bounds. */
function numberSelectors(
  table: PreparedTable,
  question: string,
  columns: readonly ColumnName[],
  labels: Set<string>,
  selector: (column: string) => Selector,
): void {
  const plain = question.replace(/(\d),(\d{3})/g, "$1$2").replace(/(\d)\.(\d)/g, "$1DOT$2");
  const words = normalizeText(plain)
    .split(" ")
    .map((w) => w.replace(/dot/g, "."));
  const measures = columns.filter((c) => !labels.has(c.name));
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    const n = Number(word);
    if (!/^\d+(?:\.\d+)?$/.test(word) || !Number.isFinite(n)) continue;
    const before = words.slice(Math.max(0, i - 3), i);
    const after = words.slice(i + 1, i + 5);
    const bound =
      BOUNDS.find(([pattern]) =>
        [1, 2, 3].some((k) => k <= before.length && pattern.test(before.slice(-k).join(" "))),
      ) ??
      AFTER_BOUNDS.find(([pattern]) =>
        [2, 3, 4].some((k) => k <= after.length && pattern.test(after.slice(0, k).join(" "))),
      );
    const afterBound = bound && !BOUNDS.includes(bound);
    const boundWords = bound
      ? afterBound
        ? [word, ...after.slice(0, after.findIndex((w) => w === "or" || w === "and") + 2)]
        : [...before.slice(-2), word]
      : [word];
    if (!bound && (!standsAlone(words, i) || YEAR.test(word))) continue;
    // The column: one the question names within a few words of the number whose cells the
    // number picks some of (when several do, the number is ambiguous and picks nothing).
    const near = new Set(stems(words.slice(Math.max(0, i - 6), i + 7).join(" ")).split(" "));
    const picks = measures.flatMap((c) => {
      const core = stems(coreName(c.name));
      if (core === "" || OPERATION_NAME.test(core)) return [];
      if (!core.split(" ").every((w) => near.has(w))) return [];
      const cells = table.cells.filter((cell) => cell.column === c.name && cell.number !== null);
      const rows = cells
        .filter((cell) => {
          const x = (cell.number?.value ?? 0) * (cell.number?.scale ?? 1);
          return bound ? bound[1](x, n) : x === n;
        })
        .map((cell) => cell.row);
      return rows.length > 0 && rows.length < cells.length ? [{ column: c, rows }] : [];
    });
    // Several columns fit: the one named right after the number ("5 gold medals"), else right before.
    const at = (c: ColumnName) => {
      const first = stems(coreName(c.name)).split(" ")[0] ?? "";
      const after = words
        .slice(i + 1, i + 3)
        .map(stem)
        .indexOf(first);
      if (after >= 0) return after;
      const before = words
        .slice(Math.max(0, i - 2), i)
        .map(stem)
        .reverse()
        .indexOf(first);
      return before >= 0 ? 2 + before : 99;
    };
    const nearest = Math.min(...picks.map((p) => at(p.column)));
    const chosen =
      picks.length === 1 ? picks : picks.filter((p) => at(p.column) === nearest && nearest < 99);
    if (chosen.length !== 1) continue;
    const [{ column, rows }] = chosen as [{ column: ColumnName; rows: number[] }];
    const s = selector(column.name);
    const phrase = boundWords.join(" ");
    s.values.push(phrase);
    s.phrases.push(normalizeText(phrase));
    for (const r of rows) s.rows.add(r);
  }
}

/** "The top 5" over a column of ranks: the rows ranked 1 to 5. */
function topRanks(table: PreparedTable, hay: string, selector: (column: string) => Selector): void {
  const match = /\btop (\d+)\b/.exec(hay);
  if (!match) return;
  const n = Number(match[1]);
  const column = table.columns.find((c) => /^(?:rank|ranking|position|pos|place)$/.test(c.norm));
  if (!column) return;
  const cells = table.cells.filter((c) => c.column === column.name && c.number !== null);
  const rows = cells.filter((c) => (c.number?.value ?? 0) <= n).map((c) => c.row);
  if (rows.length === 0 || rows.length === cells.length) return;
  const s = selector(column.name);
  s.values.push(match[0]);
  s.phrases.push(match[0]);
  for (const r of rows) s.rows.add(r);
}

/** The rows that hold every selector's value (one of them per column); null when none or no selector. */
export function pickedRows(selectors: readonly Selector[]): Set<number> | null {
  if (selectors.length === 0) return null;
  const [first, ...rest] = selectors;
  const rows = new Set([...(first?.rows ?? [])].filter((r) => rest.every((s) => s.rows.has(r))));
  return rows.size > 0 ? rows : null;
}

/** Words columns are often named by, and what questions say instead. */
const SYNONYMS: Record<string, string> = {
  pct: "percentage",
  percent: "percentage",
  pop: "population",
  avg: "average",
  num: "number",
  yr: "year",
  pts: "point",
};

/** Singular and plural of a word compared alike: "medals" names the column "medal". */
function stem(word: string): string {
  const synonym = SYNONYMS[word];
  if (synonym) return synonym;
  if (word.length <= 3) return word;
  return word
    .replace(/ies$/, "y")
    .replace(/(?:ches|shes|xes)$/, (m) => m.slice(0, -2))
    .replace(/(?<![su])s$/, "");
}

function stems(text: string): string {
  return normalizeText(text).split(" ").filter(Boolean).map(stem).join(" ");
}

/**
 * A column's name without a trailing unit in brackets or leading counting words:
 * "population (2010 census)" -> "population", "number of dances" -> "dances".
 */
function coreName(name: string): string {
  const bare = name.replace(/\s*[([][^)\]]*[)\]]\s*$/, "").trim() || name;
  return bare.replace(/^(?:(?:number|no|num|total|#)\.?\s+of\s+|#\s*|all\s+)/i, "").trim() || bare;
}

export interface ColumnName {
  name: string;
  path?: readonly string[] | undefined;
}

/** The words of a column's name and header path (stemmed), for telling named columns apart. */
function fullWords(column: ColumnName): string[] {
  return stems([column.name, ...(column.path ?? [])].join(" "))
    .split(" ")
    .filter(Boolean);
}

/** How much of a column's full name the question states (0-1). */
function coverage(question: string, column: ColumnName): number {
  const hay = ` ${stems(question)} `;
  const all = fullWords(column);
  return all.length === 0 ? 0 : all.filter((w) => hay.includes(` ${w} `)).length / all.length;
}

/**
 * The columns a question names: their name (without a unit in brackets) or the last part of
 * their header path, as whole words; the best covered first.
 */
export function namedColumns(question: string, columns: readonly ColumnName[]): string[] {
  const hay = stems(question);
  return columns
    .filter((column) => {
      const names = [coreName(column.name), column.name, ...(column.path ?? []).slice(-1)];
      return names.some((name) => {
        const needle = stems(name);
        return needle !== "" && !OPERATION_NAME.test(needle) && containsWords(hay, needle);
      });
    })
    .map((c) => ({ name: c.name, score: coverage(question, c) }))
    .sort((a, b) => b.score - a.score)
    .map((c) => c.name);
}

/**
 * The columns every word of whose name (without a unit in brackets or counting words) the
 * question holds, in any order: "the total number of medals" mentions "total medals".
 */
export function mentionedColumns(question: string, columns: readonly ColumnName[]): string[] {
  const hay = new Set(stems(question).split(" "));
  return columns
    .filter((c) => {
      const words = stems(coreName(c.name)).split(" ").filter(Boolean);
      return (
        words.length > 0 && !OPERATION_NAME.test(words.join(" ")) && words.every((w) => hay.has(w))
      );
    })
    .map((c) => c.name);
}

/** Words that name no column by themselves. */
const STOP =
  /^(?:the|a|an|of|in|on|for|by|to|and|or|with|per|at|as|from|into|number|total|average|mean|median|count|sum|how|many|much|what|which|who|whose|when|where|is|was|were|are|be|been|did|do|does|has|have|had|that|this|these|those|all|each|every|than|more|less|most|least|highest|lowest|largest|smallest|maximum|minimum|max|min|value|values|table|according|its|their|his|her|there|it|they|s)$/;

/** The words of a name that can name it (not stop words), stemmed. */
function contentWords(text: string): string[] {
  return stems(text.replace(/%/g, " percent "))
    .split(" ")
    .filter((w) => w !== "" && !STOP.test(w));
}

/** Whether the question says any content word of a column's name or header path. */
export function touchesColumn(question: string, column: ColumnName): boolean {
  const said = new Set(contentWords(question));
  return contentWords([column.name, ...(column.path ?? [])].join(" ")).some((w) => said.has(w));
}

/** Of `among`, the columns the question states best (the highest coverage of their full name). */
export function bestNamed(
  question: string,
  columns: readonly ColumnName[],
  among: readonly string[],
): string[] {
  const scored = columns
    .filter((c) => among.includes(c.name))
    .map((c) => ({ name: c.name, score: coverage(question, c) }));
  const top = Math.max(0, ...scored.map((c) => c.score));
  return scored.filter((c) => c.score === top).map((c) => c.name);
}

const OBJECT_OF =
  /\b(?:total|sum|average|mean|median|highest|lowest|maximum|minimum|largest|smallest|earliest|latest|most|least|combined|cumulative)\s+(?=((?:\S+\s+){0,5}\S+))/g;
const TARGET = /\b(?:which|what)\s+(?=((?:\S+\s+){0,2}\S+))/g;
const FILLER =
  /^(?:the|a|an|of|number|amount|value|count|its|their|his|her|in|on|for|is|was|are|were|did|does|do|has|had)$/;

/** A column named at the start of `words` (after filler words), the best covered ones. */
function columnAt(words: string, question: string, columns: readonly ColumnName[]): string[] {
  const list = words.split(" ");
  let i = 0;
  while (i < list.length && FILLER.test(list[i] ?? "")) i++;
  const rest = ` ${stems(list.slice(i).join(" "))} `;
  if (rest.trim() === "") return [];
  const hits = columns.filter((c) =>
    [coreName(c.name), ...(c.path ?? [])].some((name) => {
      const needle = stems(name);
      return needle !== "" && !OPERATION_NAME.test(needle) && rest.startsWith(` ${needle} `);
    }),
  );
  return hits.length > 0
    ? bestNamed(
        question,
        columns,
        hits.map((h) => h.name),
      )
    : [];
}

/**
 * Columns the question asks something of: what an operation applies to ("the average market
 * value" -> market value) and what a "which"/"what" asks for ("in which season" -> season).
 * Each group holds the columns that fit equally well; one of each must be among the columns
 * the result depends on.
 */
export function askedColumns(
  question: string,
  columns: readonly ColumnName[],
): { kind: "object" | "target"; columns: string[] }[] {
  const text = normalizeText(question);
  const groups: { kind: "object" | "target"; columns: string[] }[] = [];
  for (const [kind, pattern] of [
    ["object", OBJECT_OF],
    ["target", TARGET],
  ] as const) {
    for (const match of text.matchAll(pattern)) {
      const hit = columnAt(match[1] ?? "", question, columns);
      if (hit.length > 0) groups.push({ kind, columns: hit });
    }
  }
  return groups;
}
