import type { DatasetSummary, EvalExample, QuestionScore, Scorer } from "../types.js";
import { pythonFloat } from "./python-numbers.js";
import { singleGroupSummary } from "./summary.js";
import { parsePrediction } from "./tablebench.js";

/**
 * FinQA's execution accuracy, by the rules of its official evaluator (code/evaluate/evaluate.py):
 * the answer's value, rounded to 5 decimals as Python's round() does, must equal the gold
 * `exe_ans` exactly. An answer may be a FinQA program (`subtract(5829, 5735), divide(#0, 5735)`),
 * which is executed as the evaluator executes programs, or a plain value: a number read as
 * the evaluator reads program arguments (commas dropped, `12%` is 0.12), or yes/no.
 *
 * `close` is ours, not FinQA's: a number within 1% of the gold value, or of the gold value
 * read on the other percent scale (6.76 or 6.76% for 0.06757). Free-text answers rarely carry
 * five decimals, so it is reported beside the official figure, never instead of it.
 */

const ARITHMETIC = ["add", "subtract", "multiply", "divide", "exp", "greater"] as const;
const TABLE_OPS = ["table_max", "table_min", "table_sum", "table_average"] as const;
const OPERATIONS: readonly string[] = [...ARITHMETIC, ...TABLE_OPS];
const PROGRAM_START = new RegExp(`^\\s*(${OPERATIONS.join("|")})\\(`);
const CLOSE_TOLERANCE = 0.01;

type Value = number | "yes" | "no";

/** Python's round(x, digits) for finite x: to nearest, exact ties to even. */
export function pythonRound(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const expansion = Math.abs(x).toFixed(60);
  const point = expansion.indexOf(".");
  const rest = expansion.slice(point + 1 + digits);
  const tie = /^50*$/.test(rest);
  const up = Number(Math.abs(x).toFixed(digits));
  if (!tie) return Math.sign(x) * up;
  const down = Number(expansion.slice(0, point + 1 + digits));
  const lastDigit = Number(expansion.charAt(point + digits));
  return Math.sign(x) * (lastDigit % 2 === 0 ? down : up);
}

/** The evaluator's str_to_num: commas dropped, `N%` is N/100, `const_N` is N (`const_m1` is -1). */
export function finqaNumber(text: string): number | null {
  const plain = text.replaceAll(",", "");
  const direct = pythonFloat(plain);
  if (direct !== null) return direct;
  if (plain.includes("%")) {
    const percent = pythonFloat(plain.replaceAll("%", ""));
    return percent === null ? null : percent / 100;
  }
  if (plain.includes("const")) {
    const constant = plain.replace("const_", "");
    return pythonFloat(constant === "m1" ? "-1" : constant);
  }
  return null;
}

/** The evaluator's program_tokenization: `op(`, arguments and `)` as tokens, then EOF. */
export function tokenizeProgram(program: string): string[] {
  const tokens: string[] = [];
  for (const part of program.split(", ")) {
    let current = "";
    for (const c of part) {
      if (c === ")" && current !== "") {
        tokens.push(current);
        current = "";
      }
      current += c;
      if (c === "(" || c === ")") {
        tokens.push(current);
        current = "";
      }
    }
    if (current !== "") tokens.push(current);
  }
  tokens.push("EOF");
  return tokens;
}

/** A table row's cells as the evaluator reads them (`$` and a parenthesized tail dropped). */
function rowNumbers(cells: string[]): number[] | null {
  const numbers: number[] = [];
  for (const cell of cells) {
    const n = finqaNumber((cell.replaceAll("$", "").trim().split("(")[0] ?? "").trim());
    if (n === null) return null;
    numbers.push(n);
  }
  return numbers;
}

/**
 * Executes a tokenized program as the official eval_program does, over FinQA's table (rows
 * keyed by their first cell). Returns null where the evaluator flags the program invalid.
 */
export function executeProgram(tokens: string[], table: string[][]): Value | null {
  const program = tokens.slice(0, -1);
  for (const [i, token] of program.entries()) {
    if (i % 4 === 0 && !OPERATIONS.includes(token.replace(/^\(+|\(+$/g, ""))) return null;
    if ((i + 1) % 4 === 0 && token !== ")") return null;
  }
  const steps = program.join("|").split(")").slice(0, -1);
  const results: Value[] = [];
  let result: Value | null = null;
  const operand = (arg: string): Value | null =>
    arg.includes("#")
      ? (results[Number.parseInt(arg.replace("#", ""), 10)] ?? null)
      : finqaNumber(arg);
  for (const raw of steps) {
    const parts = raw.trim().split("(");
    if (parts.length > 2) return null;
    const op = trimBars(parts[0] ?? "");
    const args = trimBars(parts[1] ?? "").split("|");
    const [arg1 = "", arg2] = args.map((a) => a.trim());
    if (arg2 === undefined) return null;
    if ((ARITHMETIC as readonly string[]).includes(op)) {
      const a = operand(arg1);
      const b = operand(arg2);
      if (typeof a !== "number" || typeof b !== "number") return null;
      result = arithmetic(op, a, b);
      if (result === null) return null;
    } else if (op.includes("table")) {
      const row = table.find((r) => r[0] === arg1);
      if (arg1.includes("#") || !row) return null;
      const numbers = rowNumbers(row.slice(1));
      if (numbers === null || numbers.length === 0) return null;
      result = tableOp(op, numbers);
      if (result === null) return null;
    } else {
      return null;
    }
    results.push(result);
  }
  if (result === null) return null;
  return typeof result === "number" ? pythonRound(result, 5) : result;
}

const trimBars = (text: string) => text.replace(/^\|+|\|+$/g, "").trim();

function arithmetic(op: string, a: number, b: number): Value | null {
  if (op === "add") return a + b;
  if (op === "subtract") return a - b;
  if (op === "multiply") return a * b;
  if (op === "divide") return b === 0 ? null : a / b;
  if (op === "exp") return a ** b;
  return a > b ? "yes" : "no";
}

function tableOp(op: string, numbers: number[]): number | null {
  if (op === "table_max") return Math.max(...numbers);
  if (op === "table_min") return Math.min(...numbers);
  const sum = numbers.reduce((s, n) => s + n, 0);
  if (op === "table_sum") return sum;
  if (op === "table_average") return sum / numbers.length;
  return null;
}

/** The example's table as FinQA stores it: the header row first, then the data rows. */
function finqaTable(example: EvalExample): string[][] {
  const table = example.tables[0];
  if (!table || !("data" in table)) return [];
  return [table.columns, ...table.data.map((row) => row.map((cell) => String(cell ?? "")))];
}

/** The value an answer stands for, or null when it is none the evaluator could compare. */
export function answerValue(answer: string, table: string[][]): Value | null {
  const text = answer.trim().replace(/\.$/, "");
  if (PROGRAM_START.test(text)) return executeProgram(tokenizeProgram(text), table);
  const word = text.toLowerCase();
  if (word === "yes" || word === "no") return word;
  const n = finqaNumber(text.replace(/^\$/, "").replace(/\s*%$/, "%"));
  return n === null ? null : pythonRound(n, 5);
}

function goldValue(gold: string): Value | null {
  const word = gold.trim().toLowerCase();
  if (word === "yes" || word === "no") return word;
  return pythonFloat(gold.trim());
}

function isClose(value: Value, gold: Value): boolean {
  if (typeof value !== "number" || typeof gold !== "number") return value === gold;
  const near = (a: number, b: number) =>
    Math.abs(a - b) <= CLOSE_TOLERANCE * Math.abs(b) || Math.abs(a - b) < 1e-9;
  return near(value, gold) || near(value, gold * 100) || near(value * 100, gold);
}

export const finqaScorer: Scorer = {
  dataset: "finqa",
  async score(example: EvalExample, output: string): Promise<QuestionScore> {
    const prediction = parsePrediction(output);
    const value = prediction === null ? null : answerValue(prediction, finqaTable(example));
    const gold = goldValue(example.gold);
    const exact = value !== null && gold !== null && value === gold ? 1 : 0;
    const close = value !== null && gold !== null && isClose(value, gold) ? 1 : 0;
    return {
      id: example.id,
      prediction: prediction ?? "",
      parsed: value !== null,
      metrics: { exact, close },
      metric: "exact",
      score: exact,
    };
  },
  summarize(examples, scores): DatasetSummary {
    return singleGroupSummary("finqa", ["exact", "close"], examples, scores);
  },
};
