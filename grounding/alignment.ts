import type { Alignment, AlignmentFinding, CodeResult, Lineage } from "../blackboard/schemas.js";
import { rowAddress } from "../tables/cell-address.js";
import { type CodeOperations, codeOperations, columnsInCode } from "./code-operations.js";
import { containsWords, normalizeText } from "./matching.js";
import {
  type AskedOperation,
  askedColumns,
  askedCount,
  askedOperations,
  bestNamed,
  mentionedColumns,
  namedColumns,
  namedRowsBound,
  pickedRows,
  type Selector,
  selectorsOf,
  touchesColumn,
  withoutMentioned,
  withoutPhrases,
} from "./question-asks.js";
import type { LoadedTable } from "./table-search.js";

/*
 * Does the computation answer the question? Derivation shows a result moves with the table;
 * alignment holds what the question asks against what the result rests on (its lineage) and
 * what the code did (its operations):
 *   columns      a measure column the question names is among those the result depends on;
 *   rows         the rows the result depends on are rows the question picks (its entities,
 *                years, categories), unless it reaches beyond them (a comparison, a share);
 *                a row labelled as a total is not summed with the rows it totals;
 *   operation    the aggregation asked (median, mean, total, extreme, spread) is one the code
 *                performs, not a neighbour of it;
 *   extreme      for "the highest"/"the lowest", the result's rows do not sit at the other end;
 *   cardinality  "which two", "top 3": as many items as asked.
 * Each finding is stated in words; any conflict keeps the answer from passing.
 */

const OPERATION_WORDS: Record<AskedOperation, string> = {
  sum: "total",
  mean: "mean",
  median: "median",
  max: "maximum",
  min: "minimum",
  std: "standard deviation",
  var: "variance",
  count: "count",
};

export interface AlignmentInput {
  question: string;
  /** The run's source tables, read and indexed. */
  sources: readonly LoadedTable[];
  code: string;
  result: CodeResult;
  /** The items the answer gives. */
  items: readonly string[];
  /** Per source (same order), the values the question picks rows by, when the caller has them. */
  selectors?: readonly (readonly Selector[])[];
}

interface TableFacts {
  loaded: LoadedTable;
  lineage: Lineage | undefined;
  measures: Set<string>;
  labelColumn: string | null;
  selectors: Selector[];
  picked: Set<number> | null;
  /** Numbers per column and row. */
  numbers: Map<string, Map<number, number>>;
  labels: Map<number, string>;
}

function factsOf(
  loaded: LoadedTable,
  question: string,
  lineage: Lineage | undefined,
  read?: readonly Selector[],
): TableFacts {
  const numbers = new Map<string, Map<number, number>>();
  const counts = new Map<string, { numbers: number; all: number; years: number }>();
  for (const cell of loaded.table.cells) {
    const tally = counts.get(cell.column) ?? { numbers: 0, all: 0, years: 0 };
    tally.all++;
    if (cell.number) {
      tally.numbers++;
      if (/^(?:1[89]\d\d|20\d\d)$/.test(cell.raw.trim())) tally.years++;
      const column = numbers.get(cell.column) ?? new Map<number, number>();
      column.set(cell.row, cell.number.value * cell.number.scale);
      numbers.set(cell.column, column);
    }
    counts.set(cell.column, tally);
  }
  const measures = new Set<string>();
  let labelColumn: string | null = null;
  for (const column of loaded.table.columns) {
    const t = counts.get(column.name);
    if (!t) continue;
    if (t.numbers * 2 > t.all && t.years < t.numbers) measures.add(column.name);
    else if (labelColumn === null && t.numbers * 2 <= t.all) labelColumn = column.name;
  }
  const labels = new Map<number, string>();
  if (labelColumn) {
    for (const cell of loaded.table.cells)
      if (cell.column === labelColumn) labels.set(cell.row, cell.raw);
  }
  const selectors = [...(read ?? selectorsOf(loaded.table, question, loaded.ref.columns))];
  return {
    loaded,
    lineage,
    measures,
    labelColumn,
    selectors,
    picked: pickedRows(selectors),
    numbers,
    labels,
  };
}

function list(names: readonly string[]): string {
  const quoted = names.map((n) => `\`${n}\``);
  return quoted.length <= 1
    ? (quoted[0] ?? "")
    : `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
}

function rowWords(facts: TableFacts, rows: readonly number[]): string {
  const shown = rows.slice(0, 4).map((r) => {
    const label = facts.labels.get(r);
    return label ? `${r + 1} (${label})` : `${r + 1}`;
  });
  const more = rows.length > 4 ? ` and ${rows.length - 4} more` : "";
  return `row${rows.length === 1 ? "" : "s"} ${shown.join(", ")}${more}`;
}

function selectorWords(selectors: readonly Selector[]): string {
  return selectors
    .map((s) => `${s.column} ${s.values.map((v) => `"${v}"`).join(" or ")}`)
    .join(", ");
}

const TOTAL_LABEL = /^(?:grand\s+|sub)?totals?(?:\s*[:(\-–].*)?$|^(?:sum|overall|all)$/i;

/**
 * The columns check: what the question asks of a column (the object of its operation, the
 * target of its "which") must be among the columns the result depends on, and so must a
 * measure it names.
 */
function columnsFindings(
  facts: TableFacts,
  question: string,
  named: string[],
  code: string,
): AlignmentFinding[] {
  const traced = facts.lineage?.columns;
  if (!traced) return [];
  // Re-runs find the columns a result moves with, which can miss one it reads (an argmax that
  // scaling leaves alone): a column the code names counts as used too.
  const names = facts.loaded.ref.columns.map((c) => c.name);
  const used = [...new Set([...traced, ...columnsInCode(code, names)])];
  const findings: AlignmentFinding[] = [];
  // A metric the question defines ("X is calculated as ...") is not a column to look for.
  const defines = /\b(?:defined as|calculated as|computed as|refers to|measured as)\b/i.test(
    question,
  );
  for (const asked of defines ? [] : askedColumns(question, facts.loaded.ref.columns)) {
    // An operation applies to a measure; a "which" asks for a label.
    const group = asked.columns.filter((c) => facts.measures.has(c) === (asked.kind === "object"));
    if (group.length === 0) continue;
    if (group.some((c) => used.includes(c))) {
      const hit = group.filter((c) => used.includes(c));
      findings.push({
        aspect: "columns",
        conflict: false,
        text: `it uses ${list(hit)}, as the question asks`,
      });
    } else {
      findings.push({
        aspect: "columns",
        conflict: true,
        text: `the result does not depend on ${list(group)}, which the question asks about; it depends on ${list(used.slice(0, 4)) || "no column"}`,
      });
    }
  }
  // The measures the question states best (every word of their name, the most of their path).
  const columns = facts.loaded.ref.columns;
  const measures = [...new Set([...named, ...mentionedColumns(question, columns)])].filter((c) =>
    facts.measures.has(c),
  );
  const namedMeasures = bestNamed(question, columns, measures);
  const usedMeasures = used.filter((c) => facts.measures.has(c));
  // "points" is said of "points won" too.
  const said = (c: string) =>
    namedMeasures.some((n) => c === n || containsWords(normalizeText(c), normalizeText(n)));
  // A result that rests only on measures the question says no word of, where it says a word
  // of another: another column than the one asked.
  const touched = columns.filter((c) => facts.measures.has(c.name) && touchesColumn(question, c));
  const untouched =
    usedMeasures.length > 0 && !usedMeasures.some((u) => touched.some((t) => t.name === u));
  if (untouched && touched.length > 0 && namedMeasures.length === 0) {
    findings.push({
      aspect: "columns",
      conflict: true,
      text: `the result depends on ${list(usedMeasures)}, of which the question says nothing; it speaks of ${list(touched.slice(0, 3).map((t) => t.name))}`,
    });
  }
  if (namedMeasures.length > 0 && usedMeasures.length > 0 && !usedMeasures.some(said)) {
    findings.push({
      aspect: "columns",
      conflict: true,
      text: `the result depends on ${list(usedMeasures)}, not on ${list(namedMeasures)}, which the question names`,
    });
  }
  return findings;
}

/** The rows check: the rows the result rests on against the rows the question picks. */
function rowsFindings(
  facts: TableFacts,
  question: string,
  ops: CodeOperations,
  result: CodeResult,
): AlignmentFinding[] {
  const rows = facts.lineage?.rows;
  if (!rows) return [];
  if (rows.length === 0) {
    // An aggregate of nothing (0, or missing) that rests on no row: the filter kept none of the rows named.
    const empty =
      result.values.length === 1 && (result.values[0] === 0 || result.values[0] === null);
    return empty && facts.picked && facts.lineage?.columns?.length
      ? [
          {
            aspect: "rows",
            conflict: true,
            text: `the result rests on none of the rows the question names (${selectorWords(facts.selectors)})`,
          },
        ]
      : [];
  }
  const findings: AlignmentFinding[] = [];
  const totals = rows.filter((r) => TOTAL_LABEL.test((facts.labels.get(r) ?? "").trim()));
  const aggregates =
    ops.aggregates.has("sum") || ops.aggregates.has("mean") || ops.aggregates.has("median");
  if (totals.length > 0 && totals.length < rows.length && aggregates && !ops.divides) {
    findings.push({
      aspect: "rows",
      conflict: true,
      text: `the result adds ${rowWords(facts, totals)}, a total, to the rows it totals`,
    });
  }
  const picked = facts.picked;
  if (!picked) return findings;
  const inside = rows.filter((r) => picked.has(r));
  const outside = rows.filter((r) => !picked.has(r));
  const names = selectorWords(facts.selectors);
  if (
    inside.length === 0 &&
    !/\b(?:after|before|next|previous|following|preceding)\b/i.test(question)
  ) {
    findings.push({
      aspect: "rows",
      conflict: true,
      text: `the result rests on ${rowWords(facts, rows)}, none of them the rows the question names (${names})`,
    });
  } else if (
    outside.length > 0 &&
    namedRowsBound(question, facts.selectors, facts.loaded.ref.columns)
  ) {
    findings.push({
      aspect: "rows",
      conflict: true,
      text: `the result also rests on ${rowWords(facts, outside)}, which the question does not name (it names ${names})`,
    });
  } else if (outside.length === 0) {
    findings.push({
      aspect: "rows",
      conflict: false,
      text: `it rests on ${rowWords(facts, inside)}, the rows the question names (${names})`,
    });
  }
  return findings;
}

/** The operation check: the aggregation asked against the ones the code calls. */
function operationFinding(
  asked: Set<AskedOperation>,
  said: Set<AskedOperation>,
  ops: CodeOperations,
): AlignmentFinding | null {
  const did = ops.aggregates;
  const conflict = (want: AskedOperation, got: AskedOperation[]): AlignmentFinding => ({
    aspect: "operation",
    conflict: true,
    text: `the code computes the ${got.map((g) => OPERATION_WORDS[g]).join(" and ")}; the question asks for the ${OPERATION_WORDS[want]}`,
  });
  const others = (...names: AskedOperation[]) => names.filter((n) => did.has(n));
  if (asked.has("median") && !did.has("median") && others("mean", "sum").length > 0)
    return conflict("median", others("mean", "sum"));
  if (asked.has("mean") && !asked.has("median") && !did.has("mean") && !ops.divides) {
    const got = others("median", "sum");
    if (got.length > 0) return conflict("mean", got);
  }
  // "The total number of votes" asks for a total even over a column named "total": the words
  // as said (`said`, column names left in) decide between a total and a mean.
  if (
    said.has("sum") &&
    !said.has("mean") &&
    !said.has("median") &&
    !did.has("sum") &&
    !/[\w)\]]\s*\+\s*[\w(]/.test(ops.bare)
  ) {
    const got = others("mean", "median");
    if (got.length > 0) return conflict("sum", got);
  }
  if (
    asked.has("count") &&
    !said.has("mean") &&
    !said.has("median") &&
    !did.has("count") &&
    !did.has("sum")
  ) {
    const got = others("mean", "median");
    if (got.length > 0) return conflict("count", got);
  }
  if (asked.has("max") && asked.has("min") && !ops.sorts) {
    const only = others("max", "min");
    if (only.length === 1) {
      const missing = only[0] === "max" ? "min" : "max";
      return {
        aspect: "operation",
        conflict: true,
        text: `the question asks for both the highest and the lowest; the code computes only the ${OPERATION_WORDS[only[0] as AskedOperation]}, not the ${OPERATION_WORDS[missing]}`,
      };
    }
  }
  if (asked.has("std") && !did.has("std") && did.has("var")) return conflict("std", ["var"]);
  if (asked.has("var") && !did.has("var") && did.has("std")) return conflict("var", ["std"]);
  for (const [want, other] of [
    ["max", "min"],
    ["min", "max"],
  ] as const) {
    if (asked.has(want) && !asked.has(other) && did.has(other) && !did.has(want) && !ops.sorts)
      return conflict(want, [other]);
  }
  const agreed = (Object.keys(OPERATION_WORDS) as AskedOperation[]).filter(
    (a) => (asked.has(a) || said.has(a)) && did.has(a),
  );
  if (agreed.length === 0) return null;
  return {
    aspect: "operation",
    conflict: false,
    text: `it computes the ${agreed.map((a) => OPERATION_WORDS[a]).join(" and ")}, as asked`,
  };
}

/** Words that narrow the rows a question is about: comparisons, exclusions, bounds, orders, changes. */
const NARROWING_WORDS =
  "than|except|excluding|other|others|not|without|between|from|since|after|before|above|below|over|under|more|less|fewer|least|among|per|each|every|second|third|runner|next|previous|following|consecutive|change|increase|decrease|difference|growth|ratio|rate";
const narrowing = (more: string) => new RegExp(String.raw`\b(?:${NARROWING_WORDS}|${more})\b|\d`);

/** Beyond the values a question names: those words, or a clause that may hold a filter. */
const NARROWING = narrowing("who|whose|that|where|with");

/** Beyond the phrases the selectors read: those words, or an extreme, a rank, a "non-". */
const NARROWED = narrowing(
  "non|no|most|top|bottom|first|last|median|highest|lowest|largest|smallest|best|worst",
);

/** Whether the phrases the selectors read are all the question says of which rows count. */
function namesItsRows(question: string, facts: TableFacts): boolean {
  return !NARROWED.test(withoutPhrases(question, facts.selectors));
}

function strictScope(question: string, facts: TableFacts): boolean {
  return !NARROWING.test(withoutPhrases(question, facts.selectors));
}

/**
 * The one measure column the result is of: among `preferred` (when any is used), else among
 * the used measures the question names, else among all the used measures; none when several fit.
 */
function measureOf(
  used: readonly string[],
  named: readonly string[],
  preferred: readonly string[] = [],
): string | undefined {
  const first = preferred.filter((c) => used.includes(c));
  const namedUsed = used.filter((c) => named.includes(c));
  const candidates = first.length > 0 ? first : namedUsed.length > 0 ? namedUsed : used;
  return candidates.length === 1 ? candidates[0] : undefined;
}

/** For "the highest"/"the lowest": the result's rows must not sit at the other end of the measure. */
function extremeFinding(
  facts: TableFacts,
  asked: Set<AskedOperation>,
  named: string[],
  question: string,
  items: readonly string[],
): AlignmentFinding | null {
  const want =
    asked.has("max") && !asked.has("min")
      ? "max"
      : asked.has("min") && !asked.has("max")
        ? "min"
        : null;
  const rows = facts.lineage?.rows;
  const used = facts.lineage?.columns;
  if (!want || !rows || rows.length === 0 || !used) return null;
  const column = measureOf(
    used.filter((c) => facts.measures.has(c)),
    named,
  );
  const values = column ? facts.numbers.get(column) : undefined;
  if (!column || !values) return null;
  // The answer named from another row than the extreme one the code found (a row off by one).
  const traced = rows.filter((r) => values.has(r));
  if (traced.length >= 2) {
    const pick = want === "max" ? Math.max : Math.min;
    const extremeValue = pick(...traced.map((r) => values.get(r) as number));
    const extremeRows = traced.filter((r) => values.get(r) === extremeValue);
    const norms = items.map(normalizeText).filter((n) => n !== "" && !/^[\d\s]+$/.test(n));
    const answered = rows.filter((r) =>
      facts.loaded.table.cells.some((c) => c.row === r && norms.includes(c.norm)),
    );
    if (answered.length > 0 && !answered.some((r) => extremeRows.includes(r))) {
      return {
        aspect: "extreme",
        conflict: true,
        text: `the answer comes from ${rowWords(facts, answered)}, but the ${want === "max" ? "highest" : "lowest"} \`${column}\` the code found is in ${rowWords(facts, extremeRows)}`,
      };
    }
  }
  const scope = [...values.entries()].filter(([r]) => !facts.picked || facts.picked.has(r));
  const mine = rows.flatMap((r) =>
    values.has(r) && (!facts.picked || facts.picked.has(r)) ? [values.get(r) as number] : [],
  );
  const k = mine.length;
  if (k === 0 || scope.length < 2 * k) return null;
  const sorted = scope.map(([, v]) => v).sort((a, b) => a - b);
  const lowK = sorted[k - 1] as number;
  const highK = sorted[sorted.length - k] as number;
  if (lowK >= highK) return null;
  const atLow = mine.every((v) => v <= lowK);
  const atHigh = mine.every((v) => v >= highK);
  const rowsText = rowWords(
    facts,
    rows.filter((r) => values.has(r)),
  );
  if (want === "max" && atLow)
    return {
      aspect: "extreme",
      conflict: true,
      text: `the result comes from ${rowsText}, where \`${column}\` is lowest; the question asks for the highest`,
    };
  if (want === "min" && atHigh)
    return {
      aspect: "extreme",
      conflict: true,
      text: `the result comes from ${rowsText}, where \`${column}\` is highest; the question asks for the lowest`,
    };
  // Where nothing in the question narrows the rows beyond what it names, the result must come
  // from the very top (or bottom): the second highest is not the highest.
  if (strictScope(question, facts) && !((want === "max" && atHigh) || (want === "min" && atLow))) {
    const best = want === "max" ? (sorted.at(-1) as number) : (sorted[0] as number);
    return {
      aspect: "extreme",
      conflict: true,
      text: `the result comes from ${rowsText}, where \`${column}\` is ${mine.join(", ")}; the ${want === "max" ? "highest" : "lowest"} is ${best}`,
    };
  }
  if ((want === "max" && atHigh) || (want === "min" && atLow))
    return {
      aspect: "extreme",
      conflict: false,
      text: `it comes from the ${want === "max" ? "highest" : "lowest"} \`${column}\``,
    };
  return null;
}

function cardinalityFinding(
  question: string,
  items: number,
  asked: Set<AskedOperation>,
): AlignmentFinding | null {
  const aggregate = ["sum", "mean", "median", "count"].some((a) => asked.has(a as AskedOperation));
  if (
    aggregate &&
    items > 1 &&
    !/\b(?:and|each|per|respectively|list|which|what are|both)\b/i.test(question)
  ) {
    return {
      aspect: "cardinality",
      conflict: true,
      text: `the question asks for one value; the answer gives ${items}`,
    };
  }
  const k = askedCount(question);
  // "The average of the top 5" asks for one value over five rows, not five items.
  if (k === null || items === 0 || aggregate) return null;
  if (items === k || items === 2 * k)
    return { aspect: "cardinality", conflict: false, text: `it gives ${k} items, as asked` };
  return {
    aspect: "cardinality",
    conflict: true,
    text: `the question asks for ${k} items; the answer gives ${items}`,
  };
}

/** The question without the phrases that pick its rows and the words of the columns it names. */
function plainWords(question: string, facts: TableFacts): string {
  return withoutMentioned(
    withoutPhrases(question, facts.selectors),
    question,
    facts.loaded.ref.columns,
  );
}

type Plain = "sum" | "mean" | "median" | "count" | "max" | "min";

/** The aggregates of some values, each as its operation computes it. */
function aggregates(values: readonly number[]): Record<Plain, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = values.reduce((a, b) => a + b, 0);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return {
    sum,
    mean: sum / values.length,
    median,
    count: values.length,
    max: sorted.at(-1) as number,
    min: sorted[0] as number,
  };
}

/** Whether a computed value is `exact` as the code may have rounded or truncated it. */
function near(value: number, exact: number): boolean {
  const places = /\.(\d+)/.exec(String(value))?.[1]?.length ?? 0;
  const within = Number.isInteger(value) ? 1 : 0.5 * 10 ** -places;
  return Math.abs(value - exact) <= within + 1e-9 * Math.max(1, Math.abs(exact));
}

/**
 * The result's value read back against the column it rests on: which aggregate of the rows it
 * depends on it is (the mean of `points` over 12 rows), held against the aggregate the question
 * asks for; and, where nothing in the question narrows the rows beyond what it names, that
 * aggregate over the rows it names.
 */
function valueFinding(
  facts: TableFacts,
  question: string,
  result: CodeResult,
  named: string[],
): AlignmentFinding | null {
  const said = askedOperations(
    question,
    facts.loaded.ref.columns.map((c) => c.name),
  );
  const plain: Plain[] = ["median", "mean", "sum", "count"];
  const asked = plain.filter((p) => said.has(p));
  const value = result.values.length === 1 ? result.values[0] : undefined;
  const rows = facts.lineage?.rows;
  const used = (facts.lineage?.columns ?? []).filter((c) => facts.measures.has(c));
  if (asked.length !== 1 || typeof value !== "number" || !rows || rows.length < 2) return null;
  if (NOT_PLAIN.test(plainWords(question, facts)) || said.has("max") || said.has("min"))
    return null;
  const want = asked[0] as Plain;
  // The column aggregated: the one the operation is said of ("the average number of viewers"),
  // else the one measure the result rests on.
  const objects = askedColumns(question, facts.loaded.ref.columns)
    .filter((a) => a.kind === "object")
    .flatMap((a) => a.columns);
  const column = measureOf(used, named, objects);
  const cells = column ? facts.numbers.get(column) : undefined;
  if (!column || !cells) return null;
  const mine = rows.flatMap((r) => cells.get(r) ?? []);
  if (mine.length < 2) return null;
  const over = aggregates(mine);
  const is = (["sum", "mean", "median", "max", "min"] as const).filter((op) =>
    near(value, over[op]),
  );
  if (is.length === 0 || is.length === 5) return null;
  if (!is.includes(want as never) && want !== "count") {
    return {
      aspect: "operation",
      conflict: true,
      text: `the result ${value} is the ${OPERATION_WORDS[is[0] as Plain]} of \`${column}\` over the ${mine.length} rows it rests on; the question asks for the ${OPERATION_WORDS[want]} (${over[want]})`,
    };
  }
  const picked = facts.picked;
  if (!picked || want === "count" || !namesItsRows(question, facts)) return null;
  const theirs = [...picked].flatMap((r) => cells.get(r) ?? []);
  if (theirs.length === 0) return null;
  const expected = aggregates(theirs)[want];
  if (near(value, expected)) return null;
  return {
    aspect: "rows",
    conflict: true,
    text: `over the rows the question names (${selectorWords(facts.selectors)}) the ${OPERATION_WORDS[want]} of \`${column}\` is ${expected}, not ${value}`,
  };
}

/** Words that make a total or a mean something else: a share, a change, a rate. */
const NOT_PLAIN =
  /\b(?:per|ratio|rate|percent\w*|proportion|share|differen\w*|change\w*|increase\w*|decrease\w*|growth|grow\w*|than|times|divided|minus|plus|if|would|difference|predict\w*|forecast\w*|estimate\w*|thousands?|millions?|billions?)\b/i;

/**
 * The result against the values it rests on: a total of non-negative values over several rows
 * is at least the largest of them, a mean lies between the smallest and the largest. A result
 * outside that is another aggregate than the one asked (the mean for "the total", the total for
 * "the average").
 */
function magnitudeFinding(
  facts: TableFacts,
  question: string,
  result: CodeResult,
  named: string[],
): AlignmentFinding | null {
  const said = askedOperations(question, []);
  // "The total average rating" says both: it decides nothing.
  const plain = !(said.has("mean") && said.has("sum")) && !said.has("median");
  const want = !plain ? null : said.has("mean") ? "mean" : said.has("sum") ? "sum" : null;
  const value = result.values.length === 1 ? result.values[0] : undefined;
  const rows = facts.lineage?.rows;
  const used = (facts.lineage?.columns ?? []).filter((c) => facts.measures.has(c));
  if (
    !want ||
    typeof value !== "number" ||
    !rows ||
    rows.length < 2 ||
    NOT_PLAIN.test(plainWords(question, facts))
  )
    return null;
  const column = measureOf(used, named);
  const values = column ? rows.flatMap((r) => facts.numbers.get(column)?.get(r) ?? []) : [];
  if (!column || values.length < 2 || values.some((v) => v < 0)) return null;
  const low = Math.min(...values);
  const high = Math.max(...values);
  const slack = 1e-6 * Math.max(1, Math.abs(high));
  if (want === "sum" && value < high - 0.5 - slack && low < high) {
    return {
      aspect: "operation",
      conflict: true,
      text: `the result ${value} is less than the largest \`${column}\` it rests on (${high}): it is not their total`,
    };
  }
  if (want === "mean" && (value > high + slack + 0.5 || value < low - slack - 0.5)) {
    return {
      aspect: "operation",
      conflict: true,
      text: `the result ${value} lies outside the \`${column}\` values it rests on (${low} to ${high}): it is not their mean`,
    };
  }
  return null;
}

/** What the computation is, in words: "the mean of `salary` over 16 of 16 rows". */
function describe(facts: TableFacts | undefined, ops: CodeOperations): string {
  const order: AskedOperation[] = ["median", "mean", "std", "var", "sum", "max", "min"];
  const op = order.find((o) => ops.aggregates.has(o));
  const columns = facts?.lineage?.columns ?? null;
  const rows = facts?.lineage?.rows ?? null;
  const what = op ? `the ${OPERATION_WORDS[op]}` : "a value";
  const of = columns && columns.length > 0 ? ` of ${list(columns.slice(0, 4))}` : "";
  const total = facts ? new Set(facts.loaded.table.cells.map((c) => c.row)).size : 0;
  const over =
    rows && rows.length > 0
      ? rows.length === total
        ? ` over all ${total} rows`
        : ` over ${rowWords(facts as TableFacts, rows)}`
      : "";
  return `the result is ${what}${of}${over}`;
}

/** Words asking for total rows themselves ("the subtotals", "the total rows"). */
const ASKS_FOR_TOTALS = /\b(?:sub-?totals?|totals|total rows?)\b/i;

/**
 * Whether one of `rows` is, in a column the result reads, the sum of the others (a nation's
 * row among its states' rows): summed together, the parts count twice.
 */
function nested(facts: TableFacts, rows: readonly number[]): boolean {
  if (rows.length < 3) return false;
  for (const column of facts.lineage?.columns ?? []) {
    const values = rows.map((r) => facts.numbers.get(column)?.get(r));
    if (values.some((v) => v === undefined)) continue;
    const all = (values as number[]).reduce((a, b) => a + b, 0);
    if ((values as number[]).some((v) => Math.abs(2 * v - all) <= 1e-3 * Math.abs(v) + 1e-9))
      return true;
  }
  return false;
}

/**
 * A sum, count or mean over total rows (a table's `<name>_totals`) together with rows of the
 * table they add up, or over total rows one of which adds up the others: rows count twice.
 * Unless the question asks for totals or names each total row it takes.
 */
function totalsFinding(
  input: AlignmentInput,
  facts: readonly TableFacts[],
  ops: CodeOperations,
): AlignmentFinding | null {
  if (!(["sum", "count", "mean"] as const).some((op) => ops.aggregates.has(op))) return null;
  if (ASKS_FOR_TOTALS.test(input.question)) return null;
  const asked = normalizeText(input.question);
  for (const main of input.sources) {
    const totals = main.ref.reading?.totals;
    const aside = facts.find((f) => f.loaded.ref.name === totals?.table);
    if (!totals?.table || !aside) continue;
    const rows = aside.lineage?.rows ?? [];
    const data = input.result.lineage.find((l) => l.table === main.ref.name)?.rows ?? [];
    if (rows.length === 0 || (data.length === 0 && !nested(aside, rows))) continue;
    const labels = rows.map((r) => totals.labels[r] ?? `row ${r + 1}`);
    if (labels.every((label) => label !== "" && containsWords(asked, normalizeText(label))))
      continue;
    const listed = labels
      .slice(0, 4)
      .map((label) => JSON.stringify(label))
      .join(", ");
    const more = labels.length > 4 ? ` and ${labels.length - 4} more` : "";
    const how =
      data.length > 0
        ? ` with ${data.length} rows of ${main.ref.name} they add up`
        : ", one of which adds up the others";
    return {
      aspect: "totals",
      conflict: true,
      text: `the result adds up ${labels.length} total row${labels.length === 1 ? "" : "s"} of ${totals.table} (${listed}${more})${how}: rows count twice, and the question does not ask for totals`,
    };
  }
  return null;
}

/** Words that leave part of a total out on purpose ("excluding the federal government"). */
const EXCLUDES =
  /\b(?:without|excluding|exclude[sd]?|except|not counting|other than|apart from|only)\b/i;

/**
 * The total row that states the total of the rows a sum takes: the one whose label or key cell
 * holds a value the code filters by (a state's row for a sum over its constituencies, a year's
 * row for a sum over that year), else, for a sum that filters nothing, the largest total of
 * the column (the nation's). Null when none or several fit.
 */
function statedTotalRow(
  totals: TableFacts,
  column: string,
  ops: CodeOperations,
  names: ReadonlySet<string>,
): number | null {
  const values = totals.numbers.get(column);
  if (!values || values.size === 0) return null;
  const strings = new Set(ops.strings.filter((s) => s !== "" && !names.has(s)));
  const literals = new Set(ops.literals);
  const keyed = new Set<number>();
  for (const cell of totals.loaded.table.cells) {
    if (totals.measures.has(cell.column) || !values.has(cell.row)) continue;
    const number = cell.number ? cell.number.value : null;
    if (strings.has(cell.norm) || (number !== null && literals.has(number))) keyed.add(cell.row);
  }
  if (keyed.size > 0) return keyed.size === 1 ? ([...keyed][0] as number) : null;
  if (/==|!=|\bisin\(|\.query\(|\.str\.contains|[<>]=?\s*\d/.test(ops.bare)) return null;
  let best: number | null = null;
  for (const [row, value] of values)
    if (best === null || value > (values.get(best) ?? 0)) best = row;
  return best;
}

/**
 * A sum over data rows for which the table states its own total (a row of `<name>_totals` of
 * the same scope) with another value: the total counts what the rows round away or leave out
 * (an area outside every district, a federal share), so the table's figure answers a question
 * about the total. Unless the question leaves something out on purpose.
 */
function statedTotalFinding(
  input: AlignmentInput,
  facts: readonly TableFacts[],
  ops: CodeOperations,
): AlignmentFinding | null {
  const did = ops.aggregates;
  const value = input.result.values.length === 1 ? input.result.values[0] : undefined;
  if (!did.has("sum") || did.has("mean") || did.has("count") || ops.divides) return null;
  if (typeof value !== "number" || EXCLUDES.test(input.question)) return null;
  for (const main of facts) {
    const table = main.loaded.ref.reading?.totals?.table;
    const totals = facts.find((f) => f.loaded.ref.name === table);
    if (!table || !totals || (totals.lineage?.rows?.length ?? 0) > 0) continue;
    const used = (main.lineage?.columns ?? []).filter((c) => main.measures.has(c));
    const column = measureOf(used, namedColumns(input.question, main.loaded.ref.columns));
    if (!column) continue;
    const names = new Set(main.loaded.ref.columns.map((c) => normalizeText(c.name)));
    const row = statedTotalRow(totals, column, ops, names);
    const stated = row === null ? undefined : totals.numbers.get(column)?.get(row);
    if (stated === undefined || Math.abs(stated - value) <= 1e-9 * Math.max(1, Math.abs(stated)))
      continue;
    const label = totals.labels.get(row as number);
    const where = `${rowAddress(totals.loaded.ref, row as number)}${label ? `, ${JSON.stringify(label)}` : ""}`;
    return {
      aspect: "totals",
      conflict: true,
      text: `the table states its own total of \`${column}\` for these rows, ${stated} (${where}); the rows add up to ${value}: the total counts what they round away or leave out`,
    };
  }
  return null;
}

/** The alignment of a run's result with the question (see the comment at the top of this file). */
export function alignmentOf(input: AlignmentInput): Alignment {
  const ops = codeOperations(input.code);
  const facts = input.sources.map((loaded, i) =>
    factsOf(
      loaded,
      input.question,
      input.result.lineage.find((l) => l.table === loaded.ref.name),
      input.selectors?.[i],
    ),
  );
  const columnNames = input.sources.flatMap((s) => s.table.columns.map((c) => c.name));
  const asked = askedOperations(input.question, columnNames);
  // A rank, a position or a place counts down: its "highest" is its smallest number.
  if (/\b(?:rank\w*|position|place[sd]?|seed\w*|ranking)\b/i.test(input.question)) {
    asked.delete("max");
    asked.delete("min");
  }
  const findings: AlignmentFinding[] = [];
  for (const table of facts) {
    const named = namedColumns(input.question, table.loaded.ref.columns);
    findings.push(...columnsFindings(table, input.question, named, input.code));
    findings.push(...rowsFindings(table, input.question, ops, input.result));
    const extreme = extremeFinding(table, asked, named, input.question, input.items);
    if (extreme) findings.push(extreme);
    const magnitude =
      valueFinding(table, input.question, input.result, named) ??
      magnitudeFinding(table, input.question, input.result, named);
    if (magnitude) findings.push(magnitude);
  }
  const operation = operationFinding(asked, askedOperations(input.question, []), ops);
  if (operation) findings.push(operation);
  const totals = totalsFinding(input, facts, ops) ?? statedTotalFinding(input, facts, ops);
  if (totals) findings.push(totals);
  // "The average of the top 5" asks for one value over five rows, not five items.
  const cardinality = cardinalityFinding(input.question, input.items.length, asked);
  if (cardinality) findings.push(cardinality);
  const conflicts = findings.filter((f) => f.conflict);
  const head = describe(
    facts.find((f) => f.lineage),
    ops,
  );
  const status = conflicts.length > 0 ? "conflicted" : findings.length > 0 ? "aligned" : "unknown";
  const tail =
    status === "conflicted"
      ? conflicts.map((f) => f.text).join("; ")
      : status === "aligned"
        ? findings.map((f) => f.text).join("; ")
        : "nothing in the question could be held against it";
  return { status, summary: `${head}; ${tail}`, findings };
}
