/**
 * The checker's labelled cases, built from tables whose answers are known by construction:
 * questions from templates over a table's columns (a total, an average, the highest or lowest
 * value, which row has it, a cell looked up, a count over a threshold, a yes/no comparison of
 * two rows, the difference between two rows), each with pandas code that computes it and the
 * right answer computed here, in TypeScript, from the table itself. Each question then gets
 * wrong variants: the answer replaced by another cell of the table, code that reads only the
 * table's metadata or hard-codes the answer as a literal, and an answer that contradicts the
 * code's declared result.
 *
 * Label: a case is right when its answer is the right one and it is supported the way the
 * checker is asked to require: the code derives it from the table (its declared `result`, or
 * the value it prints last), or, for a question that only looks a cell up ("What is the
 * <column> of <row>?"), the source cell in the column the question names and the row it
 * identifies holds it, whatever the code did (`support: "looked-up"`). Everything else is
 * wrong: a right answer to a computed question resting only on a literal or on metadata is not
 * derived.
 *
 * The variants of a question (its right code declares `result = <expr>`; the printing form
 * ends in `print(<expr>)` instead):
 *   right-result, right-print       the right answer on the right code, in either form;
 *   cell-same-column, cell-same-row, cell-other-column
 *                                   another cell of the table (the answer's column in another
 *                                   row; the question's row in another column; another column
 *                                   and row) on the printing form of the right code;
 *   metadata                        the right answer on `print(df.columns.tolist())`;
 *   literal-result, literal-print   the right answer on code that hard-codes it;
 *   contradicts-result              another cell (for yes/no, the other truth value) on the
 *                                   declaring form of the right code.
 * A wrong cell is of the gold answer's kind where the table has one (a number for a number),
 * and never the right answer in other words (see isWrongAnswer).
 *
 * Tables qualify when their columns keep their names through ingest, a text column names the
 * rows uniquely, some columns are clean numbers (plain numerals only, no gaps), and no row
 * sums up the others (a "Total" row). Deterministic: the same tables and seed give the same
 * cases.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { TableSource } from "../../blackboard/schemas.js";
import { NA_VALUES } from "../../tables/dtypes.js";
import { seeded } from "../../tests/support/generated-cases.js";
import type { CaseFile, CaseTable, CheckerCase, Template, Variant } from "./checker-runner.js";

export type { CaseFile, CaseTable, CheckerCase, Template, Variant };

export const TEMPLATES: readonly Template[] = [
  "sum",
  "mean",
  "max",
  "min",
  "argmax",
  "argmin",
  "lookup",
  "count",
  "compare",
  "difference",
];

export const VARIANTS: readonly Variant[] = [
  "right-result",
  "right-print",
  "cell-same-column",
  "cell-same-row",
  "cell-other-column",
  "metadata",
  "literal-result",
  "literal-print",
  "contradicts-result",
];

/** A table with its cells as the text a run stores them as. */
export interface RawTable {
  id: string;
  source: TableSource;
  columns: string[];
  rows: string[][];
}

// --- seeded randomness -----------------------------------------------------------------

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T | undefined {
  return items.length === 0 ? undefined : items[Math.floor(random() * items.length)];
}

function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A stable number from a string (FNV-1a), to seed each table's own generator. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// --- exact decimals ----------------------------------------------------------------------

/** A decimal number held exactly: n / 10^scale. */
export interface Decimal {
  n: bigint;
  scale: number;
}

const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;
/** Beyond this many significant digits a float64 (pandas) no longer holds the value exactly. */
const MAX_DIGITS = 15;

/** A plain decimal numeral (no sign but "-", no separators, no exponent), else null. */
export function parseDecimal(text: string): Decimal | null {
  if (!PLAIN_NUMBER.test(text)) return null;
  const negative = text.startsWith("-");
  const [whole = "", fraction = ""] = (negative ? text.slice(1) : text).split(".");
  if ((whole + fraction).replace(/^0+/, "").length > MAX_DIGITS) return null;
  const n = BigInt(whole + fraction);
  return { n: negative ? -n : n, scale: fraction.length };
}

function scaled(d: Decimal, scale: number): bigint {
  return d.n * 10n ** BigInt(scale - d.scale);
}

export function compareDecimals(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = scaled(a, scale);
  const y = scaled(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** n / 10^scale as the shortest plain numeral: no trailing zeros, no "-0". */
export function formatDecimal(d: Decimal): string {
  const negative = d.n < 0n;
  const digits = (negative ? -d.n : d.n).toString().padStart(d.scale + 1, "0");
  const whole = digits.slice(0, digits.length - d.scale);
  const fraction = digits.slice(digits.length - d.scale).replace(/0+$/, "");
  const text = fraction ? `${whole}.${fraction}` : whole;
  return negative && text !== "0" ? `-${text}` : text;
}

/** num / den rounded half away from zero to `places` decimals (den > 0). */
function roundedQuotient(num: bigint, den: bigint, places: number): Decimal {
  const scaledNum = num * 10n ** BigInt(places);
  const negative = scaledNum < 0n;
  const magnitude = negative ? -scaledNum : scaledNum;
  let q = magnitude / den;
  if ((magnitude % den) * 2n >= den) q += 1n;
  return { n: negative ? -q : q, scale: places };
}

function sumOf(values: readonly Decimal[]): Decimal {
  const scale = Math.max(0, ...values.map((v) => v.scale));
  return { n: values.reduce((total, v) => total + scaled(v, scale), 0n), scale };
}

// --- reading the tables ------------------------------------------------------------------

/** A JSON cell as the text a run stores (tables/grid.ts does the same). */
function jsonCellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value) ?? "";
}

/** RFC 4180 fields: quotes around a field, "" for a quote inside one. */
function parseDelimitedText(text: string, delimiter: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === delimiter) {
      record.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      if (record.some((f) => f !== "")) records.push(record);
      record = [];
      field = "";
    } else field += ch;
  }
  record.push(field);
  if (record.some((f) => f !== "")) records.push(record);
  return records;
}

/** The distinct tables of the TableBench test set, in file order, each named by its first question. */
export function tableBenchTables(file: string): RawTable[] {
  const seen = new Set<string>();
  const tables: RawTable[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { id: string; table: { columns: unknown[]; data: unknown } };
    const key = JSON.stringify(row.table);
    if (seen.has(key)) continue;
    seen.add(key);
    const { columns, data } = row.table;
    if (!Array.isArray(data) || !data.every(Array.isArray)) continue;
    const rows = (data as unknown[][]).map((r) => r.map(jsonCellText));
    const names = columns.map(jsonCellText);
    tables.push({
      id: `tablebench:${row.id}`,
      source: { name: "table", columns: names, data: data as unknown[][] },
      columns: names,
      rows,
    });
  }
  return tables;
}

/** The example tables (CSV, TSV, `{columns, data}` JSON), read from their files. */
export function exampleTables(dir: string): RawTable[] {
  const tables: RawTable[] = [];
  for (const name of readdirSync(dir).sort()) {
    const file = path.resolve(dir, name);
    const extension = path.extname(name).toLowerCase();
    let grid: string[][];
    if (extension === ".csv" || extension === ".tsv") {
      grid = parseDelimitedText(readFileSync(file, "utf8"), extension === ".tsv" ? "\t" : ",");
    } else if (extension === ".json") {
      const value = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (!value || typeof value !== "object" || !("columns" in value) || !("data" in value)) {
        continue;
      }
      const { columns, data } = value as { columns: unknown[]; data: unknown[][] };
      grid = [columns.map(jsonCellText), ...data.map((r) => r.map(jsonCellText))];
    } else continue;
    const [header = [], ...rows] = grid;
    tables.push({ id: `examples/${name}`, source: { path: file }, columns: header, rows });
  }
  return tables;
}

// --- what a table offers -----------------------------------------------------------------

/** What pandas could read as a float, a truth value or a number with a separator. */
const NOT_A_NAME = /^\s*[-+]?(?:[\d_,]*\.?\d*(?:[eE][-+]?\d+)?|inf(?:inity)?|nan|true|false)\s*$/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;
const ANSWER_WORDS = new Set(["yes", "no", "true", "false"]);
/** A row that sums up the others: an aggregate over the table would count it twice. */
const SUMMARY_ROW = /^\s*(?:(?:grand\s+|sub-?\s*)?totals?|sum|average|mean|overall|all)\s*:?\s*$/i;

export const MIN_ROWS = 5;
export const MAX_ROWS = 40;
const MIN_COLUMNS = 3;
const MAX_COLUMNS = 15;
const MAX_LABEL_CHARS = 60;

interface Profile {
  table: RawTable;
  /** The column that names the rows: text, unique, never a number or a missing value. */
  label: number;
  /** Columns every cell of which is a plain numeral, with at least two distinct values. */
  numeric: Map<number, Decimal[]>;
}

function isLabelCell(cell: string): boolean {
  return (
    cell !== "" &&
    cell === cell.trim() &&
    cell.length <= MAX_LABEL_CHARS &&
    !NA_VALUES.has(cell) &&
    !CONTROL.test(cell) &&
    /\p{L}/u.test(cell) &&
    !NOT_A_NAME.test(cell)
  );
}

function isLabelColumn(cells: readonly string[]): boolean {
  if (!cells.every(isLabelCell)) return false;
  return new Set(cells.map((c) => c.toLowerCase())).size === cells.length;
}

function numericColumn(cells: readonly string[]): Decimal[] | null {
  const values: Decimal[] = [];
  for (const cell of cells) {
    const value = parseDecimal(cell);
    if (!value) return null;
    values.push(value);
  }
  return new Set(values.map(formatDecimal)).size >= 2 ? values : null;
}

/** What the templates need of a table, or null when the table does not qualify. */
export function profileTable(table: RawTable): Profile | null {
  const { columns, rows } = table;
  if (columns.length < MIN_COLUMNS || columns.length > MAX_COLUMNS) return null;
  if (rows.length < MIN_ROWS || rows.length > MAX_ROWS) return null;
  // Names the run keeps as they are (no blank or repeated name to rename).
  if (new Set(columns).size !== columns.length) return null;
  if (columns.some((c) => c.trim() === "" || CONTROL.test(c))) return null;
  if (rows.some((r) => r.length !== columns.length)) return null;
  if (rows.some((r) => r.some((cell) => SUMMARY_ROW.test(cell)))) return null;
  const column = (c: number) => rows.map((r) => r[c] ?? "");
  const label = columns.findIndex((_, c) => isLabelColumn(column(c)));
  if (label < 0) return null;
  const numeric = new Map<number, Decimal[]>();
  columns.forEach((_, c) => {
    if (c === label) return;
    const values = numericColumn(column(c));
    if (values) numeric.set(c, values);
  });
  return numeric.size > 0 ? { table, label, numeric } : null;
}

// --- the templates -----------------------------------------------------------------------

/** One question of a template on a table, with its right code and answer. */
export interface Instance {
  template: Template;
  question: string;
  /** Lines of right code; the last is `result = <expr>`. */
  lines: string[];
  expr: string;
  gold: string;
  /** How the gold answer is written as a Python literal. */
  goldLiteral: string;
  /** The column whose cells are of the answer's kind, and the row the question is about. */
  answerColumn: number;
  focusRow: number;
  /** Only a computation over the table answers it (everything but a cell looked up). */
  computed: boolean;
}

const py = (text: string) => JSON.stringify(text);

function cellAt(profile: Profile, row: number, column: number): string {
  const values = profile.numeric.get(column);
  const value = values?.[row];
  if (value) return formatDecimal(value);
  return profile.table.rows[row]?.[column] ?? "";
}

function rowSelect(profile: Profile, row: number, column: number): string {
  const { columns } = profile.table;
  const label = cellAt(profile, row, profile.label);
  return `df.loc[df[${py(columns[profile.label] ?? "")}] == ${py(label)}, ${py(columns[column] ?? "")}].iloc[0]`;
}

function extremeRows(values: readonly Decimal[], highest: boolean): number[] {
  let best: Decimal | undefined;
  for (const v of values) {
    const c = best ? compareDecimals(v, best) : 0;
    if (!best || (highest ? c > 0 : c < 0)) best = v;
  }
  return values.flatMap((v, i) => (best && compareDecimals(v, best) === 0 ? [i] : []));
}

function columnsFor(profile: Profile, template: Template): number[] {
  const all = [...profile.numeric.keys()];
  if (template === "argmax") {
    return all.filter((c) => extremeRows(profile.numeric.get(c) ?? [], true).length === 1);
  }
  if (template === "argmin") {
    return all.filter((c) => extremeRows(profile.numeric.get(c) ?? [], false).length === 1);
  }
  return all;
}

/** An instance of a template on a table, or null when the table offers none. */
export function instanceOf(profile: Profile, template: Template, random: Random): Instance | null {
  const column = pick(random, columnsFor(profile, template));
  if (column === undefined) return null;
  const values = profile.numeric.get(column) ?? [];
  const { columns, rows } = profile.table;
  const col = columns[column] ?? "";
  const labelName = columns[profile.label] ?? "";
  const label = (row: number) => cellAt(profile, row, profile.label);
  const series = `df[${py(col)}]`;
  const anyRow = () => Math.floor(random() * rows.length);
  const numeric = (gold: Decimal | string) => {
    const text = typeof gold === "string" ? gold : formatDecimal(gold);
    return { gold: text, goldLiteral: text };
  };
  const base = { template, answerColumn: column, computed: true };
  switch (template) {
    case "sum": {
      const expr = `${series}.sum()`;
      return {
        ...base,
        question: `What is the total ${col}?`,
        lines: [`result = ${expr}`],
        expr,
        ...numeric(sumOf(values)),
        focusRow: anyRow(),
      };
    }
    case "mean": {
      const total = sumOf(values);
      // Rounded as an answer is given: two decimals, or as many as the cells have.
      const places = Math.max(2, total.scale);
      const mean = roundedQuotient(
        total.n,
        BigInt(values.length) * 10n ** BigInt(total.scale),
        places,
      );
      const expr = `${series}.mean()`;
      return {
        ...base,
        question: `What is the average ${col}?`,
        lines: [`result = ${expr}`],
        expr,
        ...numeric(mean),
        focusRow: anyRow(),
      };
    }
    case "max":
    case "min": {
      const highest = template === "max";
      const row = extremeRows(values, highest)[0] ?? 0;
      const expr = `${series}.${template}()`;
      return {
        ...base,
        question: `What is the ${highest ? "maximum" : "minimum"} value of ${col}?`,
        lines: [`result = ${expr}`],
        expr,
        ...numeric(cellAt(profile, row, column)),
        focusRow: row,
      };
    }
    case "argmax":
    case "argmin": {
      const highest = template === "argmax";
      const row = extremeRows(values, highest)[0] ?? 0;
      const expr = `df.loc[${series}.${highest ? "idxmax" : "idxmin"}(), ${py(labelName)}]`;
      return {
        ...base,
        question: `Which ${labelName} has the ${highest ? "highest" : "lowest"} ${col}?`,
        lines: [`result = ${expr}`],
        expr,
        gold: label(row),
        goldLiteral: py(label(row)),
        answerColumn: profile.label,
        focusRow: row,
      };
    }
    case "lookup": {
      const row = anyRow();
      const expr = rowSelect(profile, row, column);
      return {
        ...base,
        question: `What is the ${col} of ${label(row)}?`,
        lines: [`result = ${expr}`],
        expr,
        ...numeric(cellAt(profile, row, column)),
        focusRow: row,
        computed: false,
      };
    }
    case "count": {
      const distinct = [...new Map(values.map((v) => [formatDecimal(v), v])).values()].sort(
        compareDecimals,
      );
      // Below the largest value, so that at least one row is above and one is not.
      const threshold = pick(random, distinct.slice(0, -1)) ?? distinct[0];
      if (!threshold) return null;
      const count = values.filter((v) => compareDecimals(v, threshold) > 0).length;
      const t = formatDecimal(threshold);
      const expr = `int((${series} > ${t}).sum())`;
      return {
        ...base,
        question: `How many rows have ${col} greater than ${t}?`,
        lines: [`result = ${expr}`],
        expr,
        ...numeric(String(count)),
        focusRow: anyRow(),
      };
    }
    case "compare":
    case "difference": {
      const a = anyRow();
      const first = values[a];
      const others = values.flatMap((v, i) =>
        first && compareDecimals(v, first) !== 0 ? [i] : [],
      );
      let b = pick(random, others);
      if (b === undefined || !first) return null;
      let rowA = a;
      if (template === "difference" && compareDecimals(values[b] as Decimal, first) > 0) {
        // The larger first, so that the difference asked for is positive.
        [rowA, b] = [b, a];
      }
      const lines = [
        `a = ${rowSelect(profile, rowA, column)}`,
        `b = ${rowSelect(profile, b, column)}`,
      ];
      const va = values[rowA] as Decimal;
      const vb = values[b] as Decimal;
      if (template === "compare") {
        const gold = compareDecimals(va, vb) > 0 ? "Yes" : "No";
        const expr = `"Yes" if a > b else "No"`;
        return {
          ...base,
          question: `Does ${label(rowA)} have a higher ${col} than ${label(b)}?`,
          lines: [...lines, `result = ${expr}`],
          expr,
          gold,
          goldLiteral: py(gold),
          focusRow: rowA,
        };
      }
      const scale = Math.max(va.scale, vb.scale);
      const difference = { n: scaled(va, scale) - scaled(vb, scale), scale };
      return {
        ...base,
        question: `What is the difference in ${col} between ${label(rowA)} and ${label(b)}?`,
        lines: [...lines, "result = a - b"],
        expr: "a - b",
        ...numeric(difference),
        focusRow: rowA,
      };
    }
  }
}

// --- wrong answers -----------------------------------------------------------------------

/** A number in an answer, leniently: separators, a currency sign or a percent sign dropped. */
function looseNumber(text: string): number | null {
  const cleaned = text
    .trim()
    .replace(/^[$€£]/, "")
    .replace(/%$/, "")
    .replace(/[,\s]/g, "");
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(cleaned)) return null;
  return Number(cleaned);
}

/**
 * Whether a candidate answer is unmistakably not the gold one: not the same text, not the same
 * number (nor one within rounding of it), and not a truth word that could read as yes or no.
 */
export function isWrongAnswer(candidate: string, gold: string): boolean {
  const text = candidate.trim();
  if (text === "" || NA_VALUES.has(text) || CONTROL.test(text)) return false;
  const norm = (s: string) => s.trim().toLowerCase().replace(/\s+/g, " ");
  if (norm(text) === norm(gold) || ANSWER_WORDS.has(norm(text))) return false;
  const c = looseNumber(text);
  const g = looseNumber(gold);
  if (c !== null && g !== null) return Math.abs(c - g) > Math.max(1e-3 * Math.abs(g), 0.01);
  return true;
}

function cells(profile: Profile, where: (row: number, column: number) => boolean): string[] {
  const out: string[] = [];
  profile.table.rows.forEach((_, r) => {
    profile.table.columns.forEach((_, c) => {
      if (where(r, c)) out.push(cellAt(profile, r, c));
    });
  });
  return out;
}

/**
 * A wrong answer of a variant: a cell of the kind the gold answer is (a number for a number, a
 * name for a name) where the table has one, so that the answer is plausible and a type check
 * alone does not catch it. In the row of a "which" question, the other columns may name the
 * same row in other words (a symbol and a name), so only its numbers are taken there.
 */
function wrongAnswer(
  profile: Profile,
  instance: Instance,
  variant: Variant,
  random: Random,
): string | undefined {
  const { answerColumn: ac, focusRow: fr, gold } = instance;
  const numericGold = looseNumber(gold) !== null;
  const candidates = (where: (row: number, column: number) => boolean) => {
    const wrong = cells(profile, where).filter((cell) => isWrongAnswer(cell, gold));
    const alike = wrong.filter((cell) => (looseNumber(cell) !== null) === numericGold);
    return alike.length > 0 ? alike : wrong;
  };
  // For a name, the other text cells of its row may name the same row (a symbol and a name).
  const names = ac === profile.label;
  const sameThing = (r: number, c: number) =>
    names && r === fr && c !== ac && !profile.numeric.has(c);
  switch (variant) {
    case "cell-same-column":
      return pick(
        random,
        candidates((r, c) => c === ac && r !== fr),
      );
    case "cell-same-row":
      return pick(
        random,
        candidates((r, c) => r === fr && c !== ac && !sameThing(r, c)),
      );
    case "cell-other-column":
      return pick(
        random,
        candidates((r, c) => r !== fr && c !== ac),
      );
    case "contradicts-result":
      if (instance.template === "compare") return gold === "Yes" ? "No" : "Yes";
      return pick(
        random,
        candidates((r, c) => !sameThing(r, c)),
      );
    default:
      return undefined;
  }
}

// --- the cases ---------------------------------------------------------------------------

export const METADATA_CODE = "print(df.columns.tolist())";

function printed(instance: Instance): string {
  return [...instance.lines.slice(0, -1), `print(${instance.expr})`].join("\n");
}

/** The cases of one instance: the right ones and each wrong variant the table allows. */
export function casesOf(
  tableId: string,
  profile: Profile,
  instance: Instance,
  random: Random,
): CheckerCase[] {
  const declared = instance.lines.join("\n");
  const out: CheckerCase[] = [];
  const add = (
    variant: Variant,
    code: string,
    answer: string | undefined,
    support: CheckerCase["support"],
  ) => {
    if (answer === undefined) return;
    out.push({
      id: `${tableId}#${instance.template}/${variant}`,
      table: tableId,
      template: instance.template,
      variant,
      question: instance.question,
      code,
      answer,
      gold: instance.gold,
      right: support !== null,
      support,
    });
  };
  // The right answer on code that does not compute it: only a lookup's cell could hold it up.
  const notDerived = instance.computed ? null : "looked-up";
  add("right-result", declared, instance.gold, "derived");
  add("right-print", printed(instance), instance.gold, "derived");
  for (const variant of ["cell-same-column", "cell-same-row", "cell-other-column"] as const) {
    add(variant, printed(instance), wrongAnswer(profile, instance, variant, random), null);
  }
  add("metadata", METADATA_CODE, instance.gold, notDerived);
  add("literal-result", `result = ${instance.goldLiteral}`, instance.gold, notDerived);
  add("literal-print", `print(${instance.goldLiteral})`, instance.gold, notDerived);
  const contradiction = wrongAnswer(profile, instance, "contradicts-result", random);
  add("contradicts-result", declared, contradiction, null);
  return out;
}

export interface GenerateOptions {
  seed: number;
  /** How many TableBench tables to take (the example tables are always taken). */
  tableBench: number;
  /** How many templates per table (the least used so far that the table allows). */
  perTable: number;
}

export const DEFAULT_OPTIONS: GenerateOptions = { seed: 21, tableBench: 40, perTable: 2 };

/**
 * The case file: the example tables and a seeded draw of the TableBench tables that qualify,
 * each with `perTable` templates, spread so that every template is used about equally.
 */
export function generateCases(
  examples: readonly RawTable[],
  tableBench: readonly RawTable[],
  options: GenerateOptions = DEFAULT_OPTIONS,
): CaseFile {
  const qualified = (tables: readonly RawTable[]) =>
    tables.flatMap((table) => {
      const profile = profileTable(table);
      return profile ? [profile] : [];
    });
  const drawn = shuffled(seeded(options.seed), qualified(tableBench)).slice(0, options.tableBench);
  const profiles = [...qualified(examples), ...drawn];
  const used = new Map<Template, number>(TEMPLATES.map((t) => [t, 0]));
  const tables: CaseTable[] = [];
  const cases: CheckerCase[] = [];
  for (const profile of profiles) {
    const id = profile.table.id;
    const random = seeded(options.seed ^ hash(id));
    const instances: Instance[] = [];
    // Least used first; ties in a seeded order.
    const order = shuffled(random, TEMPLATES).sort(
      (a, b) => (used.get(a) ?? 0) - (used.get(b) ?? 0),
    );
    for (const template of order) {
      if (instances.length >= options.perTable) break;
      const instance = instanceOf(profile, template, random);
      if (!instance) continue;
      instances.push(instance);
      used.set(template, (used.get(template) ?? 0) + 1);
    }
    if (instances.length === 0) continue;
    tables.push({ id, source: profile.table.source });
    for (const instance of instances) cases.push(...casesOf(id, profile, instance, random));
  }
  return { seed: options.seed, tables, cases };
}

/** The cases of the project's example tables and the TableBench test set. */
export function buildCaseFile(
  paths: { examples: string; tableBench: string },
  options: GenerateOptions = DEFAULT_OPTIONS,
): CaseFile {
  return generateCases(exampleTables(paths.examples), tableBenchTables(paths.tableBench), options);
}
