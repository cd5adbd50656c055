import { pyStrip } from "../../grounding/python-text.js";
import { decimalDigit } from "./python-numbers.js";

/*
 * The part of Python's `decimal` module (CPython's _decimal, libmpdec) that TableBench's exact
 * match computes with: Decimal(str), quantize(..., ROUND_HALF_UP), division, subtraction,
 * abs(), == and <= against a float, all in the default context: 28 significant digits,
 * ROUND_HALF_EVEN, Emax 999999, Emin -999999, and InvalidOperation, DivisionByZero and
 * Overflow trapped. A trapped signal throws a DecimalSignal, where Python raises.
 */

export class DecimalSignal extends Error {
  override name = "DecimalSignal";
}

export type PyDecimal =
  | { kind: "finite"; negative: boolean; coefficient: bigint; exponent: bigint }
  | { kind: "infinity"; negative: boolean }
  | { kind: "nan"; signaling: boolean };
type Finite = Extract<PyDecimal, { kind: "finite" }>;

const PREC = 28;
const EMAX = 999_999n;
const ETINY = -999_999n - BigInt(PREC - 1);
/** libmpdec's widest context, in which Decimal(str) must be exact. */
const MAX_EMAX = 999_999_999_999_999_999n;
const MAX_ETINY = -1_999_999_999_999_999_997n;

const invalid = (why: string) => new DecimalSignal(`InvalidOperation: ${why}`);
const pow10 = (n: number | bigint) => 10n ** BigInt(n);
/** The smaller of two bigints (Math.min takes numbers only). */
const smaller = (a: bigint, b: bigint) => (b < a ? b : a);
const digitCount = (c: bigint) => (c === 0n ? 1 : c.toString().length);
const finite = (negative: boolean, coefficient: bigint, exponent: bigint): Finite => ({
  kind: "finite",
  negative,
  coefficient,
  exponent,
});
/** The exponent of the most significant digit (Python's `adjusted()`). */
const adjusted = (x: Finite) => x.exponent + BigInt(digitCount(x.coefficient)) - 1n;

const FINITE_TEXT = /^([+-])?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/;
const INFINITY_TEXT = /^([+-])?inf(?:inity)?$/i;
const NAN_TEXT = /^[+-]?(s)?nan\d*$/i;

/**
 * What _decimal hands libmpdec: Python's whitespace dropped at the ends, every "_" dropped,
 * a decimal digit of any script as its ASCII digit; any other non-ASCII character (or NUL)
 * makes the text invalid.
 */
function asciiText(text: string): string | null {
  let out = "";
  for (const char of pyStrip(text)) {
    if (char === "_") continue;
    const code = char.codePointAt(0) ?? 0;
    if (code > 0 && code < 0x80) {
      out += char;
      continue;
    }
    const digit = decimalDigit(char);
    if (digit === null) return null;
    out += String(digit);
  }
  return out;
}

/** Python's `Decimal(text)`; throws (InvalidOperation) where Python raises. */
export function pyDecimal(text: string): PyDecimal {
  const ascii = asciiText(text);
  if (ascii === null) throw invalid(`Decimal(${JSON.stringify(text)})`);
  const nan = NAN_TEXT.exec(ascii);
  if (nan) return { kind: "nan", signaling: nan[1] !== undefined };
  const inf = INFINITY_TEXT.exec(ascii);
  if (inf) return { kind: "infinity", negative: inf[1] === "-" };
  const m = FINITE_TEXT.exec(ascii);
  if (!m) throw invalid(`Decimal(${JSON.stringify(text)})`);
  const [, sign, whole = "", fraction = "", onlyFraction, exp = "0"] = m;
  const fractionDigits = onlyFraction ?? fraction;
  const coefficient = BigInt(whole + fractionDigits);
  const exponent = BigInt(exp) - BigInt(fractionDigits.length);
  const x = finite(sign === "-", coefficient, exponent);
  // The conversion must be exact in libmpdec's widest context.
  const top = coefficient === 0n ? exponent : adjusted(x);
  if (top > MAX_EMAX || exponent < MAX_ETINY) throw invalid(`Decimal(${JSON.stringify(text)})`);
  return x;
}

/** `coefficient / 10**shift` rounded half-even or half-up (`sticky`: a non-zero part was cut below). */
function shiftRight(
  coefficient: bigint,
  shift: bigint,
  mode: "even" | "up",
  sticky = false,
): bigint {
  if (shift <= 0n) return coefficient * pow10(-shift);
  if (shift > BigInt(digitCount(coefficient)) + 1n) return 0n; // below half of the last unit
  const unit = pow10(shift);
  const quotient = coefficient / unit;
  const rest = coefficient % unit;
  const half = unit / 2n;
  const up = rest > half || (rest === half && (mode === "up" || sticky || quotient % 2n === 1n));
  return up ? quotient + 1n : quotient;
}

/** A result brought into the context: 28 digits half-even, Overflow trapped, subnormals rounded. */
function finalize(x: Finite, sticky = false): Finite {
  let { coefficient, exponent } = x;
  const digits = digitCount(coefficient);
  if (coefficient !== 0n && digits > PREC) {
    const shift = BigInt(digits - PREC);
    coefficient = shiftRight(coefficient, shift, "even", sticky);
    exponent += shift;
    if (digitCount(coefficient) > PREC) {
      coefficient /= 10n;
      exponent += 1n;
    }
  }
  if (coefficient === 0n) {
    if (exponent > EMAX) exponent = EMAX;
    if (exponent < ETINY) exponent = ETINY;
    return finite(x.negative, 0n, exponent);
  }
  if (adjusted(finite(x.negative, coefficient, exponent)) > EMAX) {
    throw new DecimalSignal("Overflow");
  }
  if (exponent < ETINY) {
    coefficient = shiftRight(coefficient, ETINY - exponent, "even", sticky);
    exponent = ETINY;
  }
  return finite(x.negative, coefficient, exponent);
}

/** The NaN an operation on these operands gives; an sNaN operand raises (InvalidOperation). */
function nanOf(...xs: PyDecimal[]): PyDecimal {
  if (xs.some((x) => x.kind === "nan" && x.signaling)) throw invalid("sNaN");
  return { kind: "nan", signaling: false };
}

/** `x.quantize(Decimal(f"1.{'0' * places}"), rounding=ROUND_HALF_UP)`. */
export function quantizeHalfUp(x: PyDecimal, places: number): PyDecimal {
  if (x.kind === "nan") return nanOf(x);
  if (x.kind === "infinity") throw invalid("quantize of an infinity");
  const target = BigInt(-places);
  if (target > EMAX || target < ETINY) throw invalid("quantize exponent out of range");
  if (x.coefficient === 0n) return finite(x.negative, 0n, target);
  const shift = x.exponent - target;
  if (BigInt(digitCount(x.coefficient)) + shift > BigInt(PREC)) {
    throw invalid("quantize result has too many digits");
  }
  const coefficient = shiftRight(x.coefficient, -shift, "up");
  if (digitCount(coefficient) > PREC) throw invalid("quantize result has too many digits");
  return finite(x.negative, coefficient, target);
}

/** `x / Decimal('100')`. */
export function divideBy100(x: PyDecimal): PyDecimal {
  if (x.kind === "nan") return nanOf(x);
  if (x.kind === "infinity") return x;
  return finalize(finite(x.negative, x.coefficient, x.exponent - 2n));
}

/** `abs(x)`: the magnitude, brought into the context. */
export function pyAbs(x: PyDecimal): PyDecimal {
  if (x.kind === "nan") return nanOf(x);
  if (x.kind === "infinity") return { kind: "infinity", negative: false };
  return finalize(finite(false, x.coefficient, x.exponent));
}

/** `a - b`. */
export function subtract(a: PyDecimal, b: PyDecimal): PyDecimal {
  if (a.kind === "nan" || b.kind === "nan") return nanOf(a, b);
  if (a.kind === "infinity" || b.kind === "infinity") {
    if (a.kind === "infinity" && b.kind === "infinity") {
      if (a.negative === b.negative) throw invalid("inf - inf");
      return a;
    }
    return a.kind === "infinity" ? a : { kind: "infinity", negative: !b.negative };
  }
  let x = a;
  let y = finite(!b.negative, b.coefficient, b.exponent);
  if (x.coefficient === 0n && y.coefficient === 0n) {
    // An exact zero is +0 under ROUND_HALF_EVEN unless both terms are negative.
    const exponent = smaller(x.exponent, y.exponent);
    return finalize(finite(x.negative && y.negative, 0n, exponent));
  }
  if (x.coefficient === 0n) return finalize(y);
  if (y.coefficient === 0n) return finalize(x);
  // A term entirely below the other's last digit and its 28th digit counts only as a sticky
  // unit of its sign (the rounding cannot tell them apart), so the sum stays small.
  const shrink = (big: Finite, small: Finite): Finite => {
    const top = adjusted(big) - BigInt(PREC);
    const floor = smaller(big.exponent, top) - 2n;
    return adjusted(small) < floor ? finite(small.negative, 1n, floor - 1n) : small;
  };
  x = shrink(y, x);
  y = shrink(x, y);
  const exponent = smaller(x.exponent, y.exponent);
  const signed = (v: Finite) =>
    (v.negative ? -1n : 1n) * v.coefficient * pow10(v.exponent - exponent);
  const sum = signed(x) + signed(y);
  return finalize(finite(sum < 0n, sum < 0n ? -sum : sum, exponent));
}

/** `a / b`, correctly rounded to 28 digits. */
export function divide(a: PyDecimal, b: PyDecimal): PyDecimal {
  if (a.kind === "nan" || b.kind === "nan") return nanOf(a, b);
  const negative = a.negative !== b.negative;
  if (a.kind === "infinity") {
    if (b.kind === "infinity") throw invalid("inf / inf");
    return { kind: "infinity", negative };
  }
  if (b.kind === "infinity") return finalize(finite(negative, 0n, ETINY));
  if (b.coefficient === 0n) {
    throw new DecimalSignal(a.coefficient === 0n ? "InvalidOperation: 0 / 0" : "DivisionByZero");
  }
  if (a.coefficient === 0n) return finalize(finite(negative, 0n, a.exponent - b.exponent));
  const shift = Math.max(0, PREC + digitCount(b.coefficient) - digitCount(a.coefficient) + 1);
  const numerator = a.coefficient * pow10(shift);
  const quotient = numerator / b.coefficient;
  const sticky = numerator % b.coefficient !== 0n;
  // At least 29 digits: finalize rounds them to 28, the remainder breaking ties.
  return finalize(finite(negative, quotient, a.exponent - b.exponent - BigInt(shift)), sticky);
}

/** `a == b` as Python compares two Decimals (NaN is unequal to everything; sNaN raises). */
export function decimalEquals(a: PyDecimal, b: PyDecimal): boolean {
  if (a.kind === "nan" || b.kind === "nan") {
    nanOf(a, b); // an sNaN raises
    return false;
  }
  if (a.kind === "infinity" || b.kind === "infinity") {
    return a.kind === b.kind && a.negative === b.negative;
  }
  return compareFinite(a, b) === 0;
}

function compareFinite(a: Finite, b: Finite): number {
  const sign = (x: Finite) => (x.coefficient === 0n ? 0 : x.negative ? -1 : 1);
  const [sa, sb] = [sign(a), sign(b)];
  if (sa !== sb || sa === 0) return Math.sign(sa - sb);
  if (adjusted(a) !== adjusted(b)) return (adjusted(a) > adjusted(b) ? 1 : -1) * sa;
  const exponent = smaller(a.exponent, b.exponent);
  const ca = a.coefficient * pow10(a.exponent - exponent);
  const cb = b.coefficient * pow10(b.exponent - exponent);
  return (ca === cb ? 0 : ca > cb ? 1 : -1) * sa;
}

/** The exact value of a finite double, as a Decimal (Python's `Decimal.from_float`). */
export function fromFloat(value: number): PyDecimal {
  if (Number.isNaN(value)) return { kind: "nan", signaling: false };
  if (!Number.isFinite(value)) return { kind: "infinity", negative: value < 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xfffffffffffffn;
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const power = (biased === 0 ? 1 : biased) - 1075; // value = mantissa * 2**power
  if (power >= 0) return finite(negative, mantissa << BigInt(power), 0n);
  // mantissa / 2**k = mantissa * 5**k / 10**k
  const k = BigInt(-power);
  return finite(negative, mantissa * 5n ** k, -k);
}

/** `a <= float` as Python compares a Decimal with a float: exactly; a NaN raises. */
export function lessOrEqualFloat(a: PyDecimal, value: number): boolean {
  const b = fromFloat(value);
  if (a.kind === "nan" || b.kind === "nan") throw invalid("ordering comparison with NaN");
  if (a.kind === "infinity") return a.negative || (b.kind === "infinity" && !b.negative);
  if (b.kind === "infinity") return !b.negative;
  return compareFinite(a, b) <= 0;
}

/**
 * A quantized Decimal as `str()` shows it, for comparing two quantized to the same exponent:
 * the sign (so "-0" differs from "0") and the coefficient.
 */
export function quantizedKey(x: PyDecimal): string {
  if (x.kind === "nan") return x.signaling ? "sNaN" : "NaN";
  if (x.kind === "infinity") return x.negative ? "-Infinity" : "Infinity";
  return `${x.negative ? "-" : ""}${x.coefficient}E${x.exponent}`;
}
