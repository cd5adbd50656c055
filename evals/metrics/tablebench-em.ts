import { pyStrip } from "../../grounding/python-text.js";
import {
  DecimalSignal,
  decimalEquals,
  divide,
  divideBy100,
  lessOrEqualFloat,
  type PyDecimal,
  pyAbs,
  pyDecimal,
  quantizedKey,
  quantizeHalfUp,
  subtract,
} from "./python-decimal.js";

/*
 * TableBench's exact match for one (reference, prediction) pair, as upstream's
 * metrics/custom_em_metric.py scores it (compute_em, compute_em_with_tolerance), on the strings
 * it is given: QAMetric normalizes both first (see exactMatch in tablebench.ts), which leaves
 * no commas, points, signs or percent signs, but these functions take any text, as upstream's do.
 *
 * - Both sides are split on "," and each item stripped (Python's whitespace); reference item i
 *   is compared with prediction item i and is worth 1 / (number of reference items); items the
 *   prediction lacks score nothing.
 * - A reference item that matches `^-?\d+(\.\d+)?%?$` (\d: a decimal digit of any script, as
 *   Python's re has it) is a number, compared as a Python Decimal; anything else must be equal
 *   as a string. Whatever raises on the way (a prediction Decimal() cannot read, a quantize
 *   with more than 28 digits, ...) scores that item 0.
 * - A number is read by `normalize_number`: "x%" (every leading and trailing "%" stripped) is
 *   Decimal(x) / 100 quantized to 4 places ROUND_HALF_UP, anything else Decimal(text).
 * - EM, a percent reference: the two numbers must be equal. EM, a plain reference: both are
 *   quantized ROUND_HALF_UP to the fewest decimals among the list's plain numeric reference
 *   items and must print the same (so "-0" differs from "0", and a reference of more than 28
 *   digits never matches).
 * - With tolerance: a zero reference needs a zero; otherwise abs(r - p) / abs(r), computed in
 *   Decimal's 28 digits, must be <= error_range / 100 as a float (0.1 is a little more than
 *   0.1, and the comparison is exact).
 */

/** The decimal digit class of Python's `re` for str patterns. */
const NUMBER = /^-?\p{Nd}+(?:\.\p{Nd}+)?%?$/u;

/** Upstream's `is_number`. */
export function isTableBenchNumber(text: string): boolean {
  return NUMBER.test(pyStrip(text));
}

/** Python's `text.strip("%")`. */
const stripPercent = (text: string) => text.replace(/^%+|%+$/g, "");

/** Upstream's `normalize_number`. */
function normalizeNumber(text: string): PyDecimal {
  if (text.endsWith("%")) return quantizeHalfUp(divideBy100(pyDecimal(stripPercent(text))), 4);
  return pyDecimal(text);
}

/** Upstream's `get_decimal_precision`: the fewest decimals among plain numeric items. */
function decimalPlaces(items: string[]): number {
  const places = items
    .filter((item) => !item.endsWith("%"))
    .map((item) => (item.includes(".") ? [...(item.split(".").at(-1) ?? "")].length : 0));
  return places.length > 0 ? Math.min(...places) : 0;
}

type ItemRule = (reference: string, prediction: string, items: string[]) => boolean;

/** Splits, pairs and weighs the items as upstream's loop does; `numeric` compares numbers. */
function itemScore(reference: string, prediction: string, numeric: ItemRule): number {
  const references = reference.split(",").map(pyStrip);
  const predictions = prediction.split(",").map(pyStrip);
  const weight = 1 / references.length;
  let score = 0;
  references.forEach((r, i) => {
    const p = predictions[i];
    if (p === undefined) return;
    if (!isTableBenchNumber(r)) {
      if (r === p) score += weight;
      return;
    }
    try {
      if (numeric(r, p, references)) score += weight;
    } catch (error) {
      if (!(error instanceof DecimalSignal)) throw error;
    }
  });
  return score;
}

const exactNumber: ItemRule = (r, p, items) => {
  if (r.endsWith("%")) return decimalEquals(normalizeNumber(r), normalizeNumber(p));
  const places = decimalPlaces(items.filter(isTableBenchNumber));
  const key = (text: string) => quantizedKey(quantizeHalfUp(normalizeNumber(text), places));
  // Python evaluates the reference first: a reference that cannot be quantized raises.
  const reference = key(r);
  return reference === key(p);
};

/** Upstream's `compute_em` of one pair: the share of reference items matched, 0 to 1. */
export function computeEm(reference: string, prediction: string): number {
  return itemScore(reference, prediction, exactNumber);
}

/**
 * Upstream's `compute_em_with_tolerance` of one pair, `errorRange` a percent as upstream
 * takes it (10 for EM_with_error_10).
 */
export function computeEmWithTolerance(
  reference: string,
  prediction: string,
  errorRange: number,
): number {
  const limit = errorRange / 100;
  return itemScore(reference, prediction, (r, p) => {
    const expected = normalizeNumber(r);
    const predicted = normalizeNumber(p);
    const zero = pyDecimal("0");
    if (decimalEquals(expected, zero)) return decimalEquals(predicted, expected);
    const error = divide(pyAbs(subtract(expected, predicted)), pyAbs(expected));
    return lessOrEqualFloat(error, limit);
  });
}
