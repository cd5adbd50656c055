import { lastSuccessful } from "../blackboard/attempts.js";
import type { Attempt, CodeResult, ResultScalar } from "../blackboard/schemas.js";
import { type Claimed, normalizeText } from "./matching.js";
import { type CarryOptions, numberCarried, type ParsedNumber, parseNumber } from "./numbers.js";
import { printedBooleans, printedValue } from "./printed.js";

/*
 * Matching an answer's items against what the code computed: its declared `result` (else the
 * last value it printed), as the sandbox captured it with its lineage and derivation.
 */

/** What questions can only be answered by computing: superlatives, aggregates, counts, comparisons, arithmetic. */
const COMPUTED =
  /\b(?:most|least|fewest|highest|lowest|largest|smallest|biggest|greatest|best|worst|top|bottom|max(?:imum)?|min(?:imum)?|\w+est|total|sum|average|mean|median|mode|overall|combined|altogether|cumulative|how many|how much|number of|count|more|less|fewer|greater|higher|lower|larger|smaller|than|exceed\w*|compare\w*|differen\w*|percent\w*|ratio|rate|proportion|share|increase\w*|decrease\w*|change\w*|growth|grow\w*|times|twice|double|half|rank\w*|correlat\w*|trend\w*|std|standard deviation|variance|range|above|below|over|under|at least|at most|all|any|every|each|none)\b/i;
/** Words ending in -est that are not superlatives. */
const NOT_SUPERLATIVE =
  /\b(?:interest|forest|west|rest|test|contest|request|guest|nest|quest|harvest|protest|honest|suggest|manifest|digest|arrest|invest|chest|crest|pest|vest|zest|latest)\b/gi;

/**
 * Whether only a computation over the table can answer the question (a cell looked up cannot).
 * Column names the question quotes are names, not requests: "the total of Japan" over a column
 * named "total" is a lookup.
 */
export function needsDerivation(question: string, columns: string[] = []): boolean {
  let text = ` ${normalizeText(question)} `;
  const names = columns.map(normalizeText).filter(Boolean);
  for (const column of names.sort((a, b) => b.length - a.length)) {
    text = text.split(` ${column} `).join("  ");
  }
  return COMPUTED.test(text.replace(NOT_SUPERLATIVE, " "));
}

/**
 * The code's result an answer is judged against: the last successful attempt whose result the
 * answer cites (an orchestrator's answer rests on the packets it selected, not on whichever
 * worker ran last), else the last successful attempt.
 */
export function resultOf(
  attempts: Attempt[],
  cited: readonly string[] = [],
): { attempt: Attempt; result: CodeResult } | null {
  const citedRun = attempts.findLast(
    (a) => a.result?.ok && a.result.result && cited.includes(`${a.id}:result`),
  );
  const attempt = citedRun ?? lastSuccessful(attempts);
  const result = attempt?.result?.result;
  return attempt && result ? { attempt, result } : null;
}

/** Where a result came from, in words for a prompt. */
export function resultOrigin(result: CodeResult): string {
  return result.from === "declared" ? "assigned to `result`" : "the last value printed";
}

/** One element of a result, as the matcher compares it. */
interface Element {
  number: ParsedNumber | null;
  norm: string;
  bool: boolean | null;
}

function element(value: ResultScalar, printed: boolean): Element | null {
  if (value === null) return null;
  if (typeof value === "boolean") return { number: null, norm: String(value), bool: value };
  if (typeof value === "number") {
    return {
      number: { value, places: 0, percent: false, scale: 1 },
      norm: String(value),
      bool: null,
    };
  }
  // A printed line "total: 203" holds the value after its label.
  const text = printed ? (printedValue(value.trim()) ?? "") : value.trim();
  const truth = printed ? printedBooleans(value) : printedBooleans(text);
  return {
    number: parseNumber(text),
    norm: normalizeText(text),
    bool: truth.length === 1 ? (truth[0] ?? null) : null,
  };
}

/** The elements of a result an item may be matched to: its values, and for names its labels too. */
export interface ResultElements {
  values: Element[];
  labels: Element[];
  /** How many values the result holds (a list answer must name as many). */
  size: number;
}

export function resultElements(result: CodeResult): ResultElements {
  const printed = result.from === "printed";
  const values = result.values.flatMap((v) => element(v, printed) ?? []);
  const labels = result.labels.flatMap((v) => element(v, false) ?? []);
  return { values, labels, size: result.values.length };
}

/** Significant digits an answer's number states: "0" none, "4" one, "10.6" three. */
function significantDigits(item: Claimed): number {
  const digits = (/[\d.,]+/.exec(item.text)?.[0] ?? "").replace(/[.,]/g, "");
  return digits.replace(/^0+/, "").length;
}

/** How an element's numbers are read besides exactly: see CarryOptions. */
export type ResultReading = Pick<CarryOptions, "percentQuestion" | "fraction" | "scales">;

/**
 * Whether an element carries an item: the same number at the item's precision, the same name,
 * the same truth value. Rounding needs two significant digits: "0" for 0.1 or "4" for 4.5 says
 * too little to be the value computed.
 */
function carries(item: Claimed, e: Element, reading: ResultReading, yesno: boolean): boolean {
  if (yesno) return e.bool !== null && e.bool === /^(?:yes|true)$/i.test(item.text.trim());
  if (item.number) {
    if (e.number === null) return false;
    if (numberCarried(item.number, e.number, { ...reading, rounding: false })) return true;
    return (
      significantDigits(item) >= 2 &&
      numberCarried(item.number, e.number, { ...reading, rounding: true })
    );
  }
  return item.norm !== "" && e.norm === item.norm;
}

/** Which elements of a result carry an item; names may also be a series' labels (group keys). */
export function matchResult(
  item: Claimed,
  elements: ResultElements,
  options: ResultReading & { yesno: boolean },
): boolean {
  const { yesno, ...reading } = options;
  if (elements.values.some((e) => carries(item, e, reading, yesno))) return true;
  return !item.number && !yesno && elements.labels.some((e) => carries(item, e, {}, false));
}

/**
 * Whether a result can speak to an item at all: it holds a value of the same kind (a number
 * for a number, a name for a name, a truth value for yes/no). Only then does a mismatch
 * contradict the answer.
 */
export function comparable(item: Claimed, elements: ResultElements, yesno: boolean): boolean {
  const all = [...elements.values, ...elements.labels];
  if (yesno) return elements.values.some((e) => e.bool !== null);
  if (item.number) return elements.values.some((e) => e.number !== null);
  return all.some(
    (e) => e.number === null && e.bool === null && e.norm !== "" && e.norm.split(" ").length <= 6,
  );
}
