import { alt, type Grammar, lit, opt, rep, seq, textExcept, textOf } from "../local-grammar-dsl.js";
import type { QueryColumn, QueryTable } from "./table.js";

/*
 * A small query language for models too small to write Python: a query names the table's own
 * columns and a handful of operations, so a grammar built from the table (`queryGrammar`) leaves
 * the model choices among real columns, values and operations, and `compileQuery` turns it into
 * pandas that runs in the sandbox like any coder's code. One query is either
 *
 *   result = <measure>
 *
 * or two measures and arithmetic on them:
 *
 *   a = <measure>
 *   b = <measure>
 *   result = a - b          (+ - * /, optionally "* 100")
 *
 * where a measure is one of
 *
 *   sum|mean|median|min|max <number column> [where ...]
 *   count rows [where ...]
 *   value <column> [where ...]
 *   top|bottom [n] <column> by [sum|mean|...] <number column> [where ...]
 *
 * and `where` takes up to three conditions joined by `and`: `<number column> <|<=|=|!=|>=|> 12`,
 * `<text column> is|is not|contains "text"`.
 */

export const AGGREGATES = ["sum", "mean", "median", "min", "max"] as const;
export type Aggregate = (typeof AGGREGATES)[number];
const COMPARISONS = [">=", "<=", "!=", ">", "<", "="] as const;
const TEXT_TESTS = ["is not", "is", "contains"] as const;
const ARITHMETIC = ["+", "-", "*", "/"] as const;
const MAX_CONDITIONS = 3;
const MAX_TAKE = 20;

export type Condition =
  | { column: string; test: (typeof COMPARISONS)[number]; value: number }
  | { column: string; test: (typeof TEXT_TESTS)[number]; value: string };

export type Measure = { where: Condition[] } & (
  | { kind: "aggregate"; aggregate: Aggregate; column: string }
  | { kind: "count" }
  | { kind: "value"; column: string }
  | {
      kind: "rank";
      order: "top" | "bottom";
      take: number;
      column: string;
      by: string;
      aggregate?: Aggregate;
    }
);

export type Query =
  | { kind: "measure"; measure: Measure }
  | {
      kind: "arithmetic";
      a: Measure;
      b: Measure;
      op: (typeof ARITHMETIC)[number];
      percent: boolean;
    };

export const QUERY_FENCE = "```query\n";

/** A reply that is no query of this table; the message says where it went wrong. */
export class QueryParseError extends Error {
  override name = "QueryParseError";
}

// ---------------------------------------------------------------------------------------------
// The grammar

const number = seq(
  opt(lit("-")),
  textOf("0123456789", 1, 12),
  opt(seq(lit("."), textOf("0123456789", 1, 6))),
);

function quoted(values: readonly string[] | undefined): Grammar {
  const free = seq(lit('"'), textExcept('"\\`', 1, 60), lit('"'));
  return values?.length ? alt(...values.map((v) => lit(JSON.stringify(v)))) : free;
}

function condition(column: QueryColumn): Grammar {
  if (column.kind === "number") {
    return seq(lit(`${column.name} `), alt(...COMPARISONS.map(lit)), lit(" "), number);
  }
  return alt(
    seq(lit(`${column.name} `), alt(lit("is not"), lit("is")), lit(" "), quoted(column.values)),
    seq(lit(`${column.name} contains `), quoted(undefined)),
  );
}

/*
 * When the question names cells of the table (`Wattstown RFC`, `5 gold medals`), a measure keeps
 * rows by one of the columns named first: a small model otherwise sums the whole column.
 */
function measure(table: QueryTable): Grammar {
  const all = table.columns.map((c) => lit(c.name));
  const numbers = table.columns.filter((c) => c.kind === "number").map((c) => lit(c.name));
  const aggregate = alt(...AGGREGATES.map(lit));
  const cond = alt(...table.columns.map(condition));
  const namedColumns = new Set(table.named?.map((c) => c.column));
  const first = namedColumns.size
    ? alt(...table.columns.filter((c) => namedColumns.has(c.name)).map(condition))
    : cond;
  const conditions = seq(
    lit(" where "),
    first,
    rep(seq(lit(" and "), cond), 0, MAX_CONDITIONS - 1),
  );
  const where = namedColumns.size ? conditions : opt(conditions);
  const answer = table.answer;
  const texts = table.columns.filter((c) => c.kind === "text").map((c) => lit(c.name));
  // A number is read from a number column; a name from a text column (when the table has one).
  const values = answer === "number" ? numbers : answer === "name" && texts.length ? texts : all;
  const forms: Grammar[] = [seq(lit("value "), alt(...values), where)];
  if (answer !== "name") forms.push(seq(lit("count rows"), where));
  if (numbers.length > 0) {
    const byNumber = alt(...numbers);
    if (answer !== "name") forms.unshift(seq(aggregate, lit(" "), byNumber, where));
    // "Which nation has the most gold?" asks for one: a name is the top one, not the top few.
    const take = answer === "name" ? seq() : opt(seq(lit(" "), textOf("123456789", 1, 1)));
    if (answer !== "number") {
      forms.push(
        seq(
          alt(lit("top"), lit("bottom")),
          take,
          lit(" "),
          alt(...values),
          lit(" by "),
          opt(seq(aggregate, lit(" "))),
          byNumber,
          where,
        ),
      );
    }
  }
  return alt(...forms);
}

/** The grammar of a fenced query over `table`. */
export function queryGrammar(table: QueryTable): Grammar {
  const one = measure(table);
  const arithmetic = seq(
    lit("a = "),
    one,
    lit("\nb = "),
    one,
    lit("\nresult = a "),
    alt(...ARITHMETIC.map(lit)),
    lit(" b"),
    opt(lit(" * 100")),
  );
  const body =
    table.answer === "name"
      ? seq(lit("result = "), one)
      : alt(seq(lit("result = "), one), arithmetic);
  return seq(lit(QUERY_FENCE), body, lit("\n```"));
}

// ---------------------------------------------------------------------------------------------
// The parser

class Cursor {
  at = 0;
  constructor(
    readonly text: string,
    readonly table: QueryTable,
  ) {}

  fail(expected: string): never {
    const rest = this.text.slice(this.at, this.at + 30);
    throw new QueryParseError(`expected ${expected} at "${rest}"`);
  }

  take(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  expect(word: string): void {
    if (!this.take(word)) this.fail(JSON.stringify(word));
  }

  oneOf<T extends string>(words: readonly T[], what: string): T {
    const word = words.find((w) => this.take(w));
    return word ?? this.fail(what);
  }

  /** The longest column name here that ends where a word does. */
  column(kind?: QueryColumn["kind"]): QueryColumn {
    const fits = this.table.columns
      .filter(
        (c) => (kind === undefined || c.kind === kind) && this.text.startsWith(c.name, this.at),
      )
      .filter((c) => /^(?:\s|$)/.test(this.text.slice(this.at + c.name.length)))
      .sort((x, y) => y.name.length - x.name.length);
    const found = fits[0] ?? this.fail(kind ? `a ${kind} column` : "a column");
    this.at += found.name.length;
    return found;
  }

  number(): number {
    const m = /^-?\d+(?:\.\d+)?/.exec(this.text.slice(this.at));
    if (!m) this.fail("a number");
    this.at += m[0].length;
    return Number(m[0]);
  }

  string(): string {
    const m = /^"([^"\\`\n]*)"/.exec(this.text.slice(this.at));
    if (!m) this.fail('a "quoted" text');
    this.at += m[0].length;
    return m[1] ?? "";
  }
}

function parseCondition(c: Cursor): Condition {
  const column = c.column();
  c.expect(" ");
  if (column.kind === "number") {
    const test = c.oneOf(COMPARISONS, "a comparison");
    c.expect(" ");
    return { column: column.name, test, value: c.number() };
  }
  const test = c.oneOf(TEXT_TESTS, "is, is not or contains");
  c.expect(" ");
  return { column: column.name, test, value: c.string() };
}

/** A condition in query words: `gold >= 10`, `nation is "Japan"`. */
export function conditionText(c: Condition): string {
  return `${c.column} ${c.test} ${typeof c.value === "number" ? c.value : JSON.stringify(c.value)}`;
}

/** Conditions joined by ", " (the prompt's named line); what does not read as one ends the list. */
export function parseConditions(text: string, table: QueryTable): Condition[] {
  const c = new Cursor(text.trim(), table);
  const conditions: Condition[] = [];
  try {
    do conditions.push(parseCondition(c));
    while (c.take(", "));
  } catch (error) {
    if (!(error instanceof QueryParseError)) throw error;
  }
  return conditions;
}

function parseWhere(c: Cursor): Condition[] {
  if (!c.take(" where ")) return [];
  const conditions = [parseCondition(c)];
  while (conditions.length < MAX_CONDITIONS && c.take(" and ")) conditions.push(parseCondition(c));
  return conditions;
}

function parseMeasure(c: Cursor): Measure {
  if (c.take("count rows")) return { kind: "count", where: parseWhere(c) };
  if (c.take("value ")) {
    const column = c.column().name;
    return { kind: "value", column, where: parseWhere(c) };
  }
  const order = (["top", "bottom"] as const).find((word) => c.take(word));
  if (order) {
    let take = 1;
    if (c.take(" ") && /^\d/.test(c.text.slice(c.at))) {
      take = Math.min(MAX_TAKE, Math.max(1, c.number()));
      c.expect(" ");
    }
    const column = c.column().name;
    c.expect(" by ");
    const aggregate = AGGREGATES.find((a) => c.take(`${a} `));
    const by = c.column("number").name;
    const rank = { kind: "rank" as const, order, take, column, by };
    return { ...rank, ...(aggregate ? { aggregate } : {}), where: parseWhere(c) };
  }
  const aggregate = c.oneOf(AGGREGATES, "count rows, value, top, bottom or an aggregate");
  c.expect(" ");
  const column = c.column("number").name;
  return { kind: "aggregate", aggregate, column, where: parseWhere(c) };
}

/** The text of the query a reply holds: its ```query block, else the whole reply. */
export function queryText(reply: string): string {
  const start = reply.indexOf(QUERY_FENCE);
  const body = start >= 0 ? reply.slice(start + QUERY_FENCE.length).split("```")[0] : reply;
  return (body ?? "").trim();
}

/** The query a reply holds (fenced or not), read against the table's columns. */
export function parseQuery(reply: string, table: QueryTable): Query {
  const c = new Cursor(queryText(reply), table);
  let query: Query;
  if (c.take("result = ")) {
    query = { kind: "measure", measure: parseMeasure(c) };
  } else {
    c.expect("a = ");
    const a = parseMeasure(c);
    c.expect("\nb = ");
    const b = parseMeasure(c);
    c.expect("\nresult = a ");
    const op = c.oneOf(ARITHMETIC, "+, -, * or /");
    c.expect(" b");
    query = { kind: "arithmetic", a, b, op, percent: c.take(" * 100") };
  }
  if (c.at < c.text.length) c.fail("the end of the query");
  return query;
}
