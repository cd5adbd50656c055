import { z } from "zod";
import { normalizeText, questionTerms, stem, wordsOf } from "../../tables/context-keywords.js";
import { type Condition, conditionText, parseConditions } from "./language.js";

/*
 * What the query language knows of the table a query runs on: its columns by exact name, each
 * a number or text column, and for a text column with few distinct values, those values. The
 * coder's prompt lists them in the form `renderQueryTable` writes, and the local model's grammar
 * is built from that listing (`queryTableIn`): one format, written and read here.
 */

/** Text columns with at most this many distinct values list them (the grammar offers them). */
export const MAX_LISTED_VALUES = 24;
/** Columns past this many are left out of the listing (and so of the grammar). */
export const MAX_QUERY_COLUMNS = 40;
const MAX_VALUE_CHARS = 60;

export const QueryColumnSchema = z.object({
  name: z.string().min(1),
  kind: z.enum(["number", "text"]),
  values: z.array(z.string()).optional(),
});
export type QueryColumn = z.infer<typeof QueryColumnSchema>;

export interface QueryTable {
  columns: QueryColumn[];
  /** Conditions the question names (`club is "Wattstown RFC"`, `gold = 5`). */
  named?: Condition[];
  /** What the question asks for, when it is clear: a number, or a name (a row's label, a year). */
  answer?: QueryAnswer;
}

const MAX_NAMED = 4;

export type QueryAnswer = "number" | "name";

const NUMERIC_DTYPES = new Set(["int64", "uint64", "float64"]);

/**
 * The query view of a table: its columns (numbers by dtype), the short lists of text values,
 * and the conditions the question names: a text cell the question spells out whole, or a
 * number of a column the question names beside it.
 */
export function queryTableOf(
  columns: readonly { name: string; dtype: string }[],
  rows: readonly (readonly string[])[],
  question = "",
): QueryTable {
  const listed = {
    columns: columns.slice(0, MAX_QUERY_COLUMNS).map((column, i): QueryColumn => {
      if (NUMERIC_DTYPES.has(column.dtype)) return { name: column.name, kind: "number" };
      const distinct = new Set<string>();
      for (const row of rows) {
        const value = (row[i] ?? "").trim();
        if (value === "" || value.length > MAX_VALUE_CHARS || /["`\n\r]/.test(value)) continue;
        distinct.add(value);
        if (distinct.size > MAX_LISTED_VALUES) break;
      }
      return distinct.size > 0 && distinct.size <= MAX_LISTED_VALUES
        ? { name: column.name, kind: "text", values: [...distinct] }
        : { name: column.name, kind: "text" };
    }),
  };
  const named = namedConditions(listed.columns, rows, question);
  return named.length > 0 ? { ...listed, named } : listed;
}

function namedConditions(
  columns: readonly QueryColumn[],
  rows: readonly (readonly string[])[],
  question: string,
): Condition[] {
  if (!question) return [];
  const terms = questionTerms(question);
  const asked = new Set(terms.columnQueries);
  const named = new Map<string, Condition>();
  for (const keyword of terms.cellKeywords) {
    columns.forEach((column, i) => {
      if (column.kind === "text" && keyword.number === undefined) {
        const cell = rows.find((row) => normalizeText(row[i] ?? "") === keyword.text)?.[i];
        const value = cell?.trim();
        if (value)
          named.set(`${column.name}\0${value}`, { column: column.name, test: "is", value });
      } else if (column.kind === "number" && keyword.number !== undefined) {
        const namedColumn = wordsOf(column.name.toLowerCase()).some((w) => asked.has(stem(w)));
        const holds = rows.some(
          (row) => Number((row[i] ?? "").replace(/,/g, "")) === keyword.number,
        );
        const value = keyword.number;
        if (namedColumn && holds)
          named.set(`${column.name}\0${value}`, { column: column.name, test: "=", value });
      }
    });
  }
  return [...named.values()].slice(0, MAX_NAMED);
}

const LISTING_HEADER = "Columns (name, kind, values):";

/** The columns as the query coder's prompt lists them, one JSON array per line. */
export function renderQueryTable(table: QueryTable): string {
  const lines = table.columns.map(
    (c) => `- ${JSON.stringify([c.name, c.kind, ...(c.values ?? [])])}`,
  );
  return [LISTING_HEADER, ...lines].join("\n");
}

/** The table a prompt lists with `renderQueryTable`, or undefined when it lists none. */
export function queryTableIn(prompt: string): QueryTable | undefined {
  const at = prompt.indexOf(LISTING_HEADER);
  if (at < 0) return undefined;
  const columns: QueryColumn[] = [];
  for (const line of prompt.slice(at + LISTING_HEADER.length + 1).split("\n")) {
    if (!line.startsWith("- [")) break;
    const parsed = z
      .tuple([z.string().min(1), z.enum(["number", "text"])])
      .rest(z.string())
      .safeParse(safeJson(line.slice(2)));
    if (!parsed.success) break;
    const [name, kind, ...values] = parsed.data;
    columns.push(values.length > 0 ? { name, kind, values } : { name, kind });
  }
  if (columns.length === 0) return undefined;
  const line = NAMED_LINE.exec(prompt.slice(at))?.[1];
  const named = line ? parseConditions(line, { columns }) : [];
  const answer = ANSWER_LINE.exec(prompt.slice(at))?.[1] as QueryAnswer | undefined;
  return {
    columns,
    ...(named.length > 0 ? { named } : {}),
    ...(answer ? { answer } : {}),
  };
}

const ANSWER_LINE = /^The answer is a (number|name)\.$/m;

/** The line that tells the model (and the grammar) what kind of answer to compute. */
export function renderAnswer(table: QueryTable): string {
  return table.answer ? `The answer is a ${table.answer}.` : "";
}

const NAMED_PREFIX = "Named in the question: ";
const NAMED_LINE = new RegExp(`^${NAMED_PREFIX}(.*)$`, "m");

/** The line that tells the model (and the grammar) the conditions the question names. */
export function renderNamed(table: QueryTable): string {
  return table.named?.length ? `${NAMED_PREFIX}${table.named.map(conditionText).join(", ")}` : "";
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
