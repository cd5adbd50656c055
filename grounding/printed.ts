import type { Attempt, Evidence } from "../blackboard/schemas.js";
import { normalizeText } from "./matching.js";
import { type ParsedNumber, parseNumber } from "./numbers.js";

/*
 * Reading what code printed: the value part of a labelled line, the line that ends an
 * attempt's output, and the truth values a line states.
 */

/** The last line a successful attempt printed, when it really is the end of its output. */
export interface FinalLine {
  packet: Evidence;
  /** Its value when it is one number or one short name; null otherwise. */
  value: { kind: "number"; number: ParsedNumber } | { kind: "text"; norm: string } | null;
  printed: string;
}

const BOOLEAN_WORD = /^(?:true|false|yes|no)$/i;

/** The value part of a printed line: "total: 203" gives "203"; pandas footers give nothing. */
export function printedValue(text: string): string | null {
  if (/\bdtype\b|^\[\d+ rows x \d+ columns\]$/.test(text)) return null;
  const labelled = /^[^:=]*[A-Za-z][^:=]{0,60}[:=]\s*(.+)$/.exec(text);
  const value = (labelled?.[1] ?? text).trim().replace(/^['"]|['"]$/g, "");
  return value || null;
}

export function finalLine(attempt: Attempt, evidence: Evidence[]): FinalLine | undefined {
  const result = attempt.result;
  if (!result?.ok || result.truncated) return undefined;
  const printed = evidence.filter(
    (e) =>
      e.provenance.attempt === attempt.id &&
      e.anchor.kind === "code" &&
      e.anchor.stdout[1] > e.anchor.stdout[0] &&
      typeof e.value !== "object",
  );
  const last = printed.at(-1);
  if (last?.anchor.kind !== "code") return undefined;
  // Evidence keeps the first lines only: the last packet must end the output to be final.
  if (result.stdout.slice(last.anchor.stdout[1]).trim() !== "") return undefined;
  const text = String(last.value).trim();
  const valueText = printedValue(text);
  const number = typeof last.value === "number" ? parseNumber(text) : parseNumber(valueText ?? "");
  let value: FinalLine["value"] = null;
  if (number) value = { kind: "number", number };
  else if (
    valueText &&
    !BOOLEAN_WORD.test(valueText) &&
    !/[[\](){}]|,\s|\d|:$/.test(valueText) &&
    valueText.split(/\s+/).length <= 5
  ) {
    value = { kind: "text", norm: normalizeText(valueText) };
  }
  return { packet: last, value, printed: text };
}

function compare(a: number, op: string, b: number): boolean {
  switch (op) {
    case ">":
      return a > b;
    case "<":
      return a < b;
    case ">=":
      return a >= b;
    case "<=":
      return a <= b;
    case "==":
      return a === b;
    default:
      return a !== b;
  }
}

/** Truth values a printed line states: "True", "more gold: False", "np.True_", "203 > 200". */
export function printedBooleans(value: string | number | boolean): boolean[] {
  if (typeof value === "boolean") return [value];
  if (typeof value === "number") return [];
  const text = value.trim();
  const part = (printedValue(text) ?? "").replace(/^np\.(True|False)_$/, "$1");
  if (BOOLEAN_WORD.test(part)) return [/^(?:true|yes)$/i.test(part)];
  const pythonic = [...text.matchAll(/\b(?:np\.)?(True|False)_?\b/g)].map((m) => m[1] === "True");
  if (pythonic.length > 0) return pythonic;
  const comparison = /^(-?[\d.,]+)\s*(>=|<=|==|!=|>|<)\s*(-?[\d.,]+)$/.exec(part || text);
  if (comparison) {
    const a = Number(comparison[1]?.replace(/,/g, ""));
    const b = Number(comparison[3]?.replace(/,/g, ""));
    if (Number.isFinite(a) && Number.isFinite(b)) return [compare(a, comparison[2] ?? "", b)];
  }
  return [];
}
