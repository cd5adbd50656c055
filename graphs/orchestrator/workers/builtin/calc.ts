import { z } from "zod";
import type { CodeResult, ExecResult } from "../../../../blackboard/schemas.js";
import { lineValue } from "../../../../grounding/evidence.js";
import { ReplyParseError } from "../../../../nodes/llm.js";
import { defineWorker, TaskInput, type WorkerInput } from "../contract.js";
import { codeFinding } from "../findings.js";

export const CALC_SYSTEM = `# tableminds calc
You turn one arithmetic or unit-conversion step into a Python expression that is computed
exactly (fractions, not floats). The answers of earlier steps are variables named by their ids
(s1, s2, ...), already exact numbers. convert(value, "km", "mi") converts units (length m km cm
mm in ft yd mi; mass kg g mg t lb oz; time s min h day week; volume l ml m3 gal; area m2 km2 ha
acre mi2; speed m/s km/h mph; temperature C F K). abs, round, min, max and sum work as usual.
Reply with the expression alone in a \`\`\`python block.`;

/** Exact numbers and unit factors (SI definitions), in the sandbox; then the expression. */
const PRELUDE = String.raw`from fractions import Fraction as _F
import re as _re
_UNITS = {
    "m": ("length", _F(1)), "km": ("length", _F(1000)), "cm": ("length", _F(1, 100)),
    "mm": ("length", _F(1, 1000)), "in": ("length", _F("0.0254")), "ft": ("length", _F("0.3048")),
    "yd": ("length", _F("0.9144")), "mi": ("length", _F("1609.344")),
    "kg": ("mass", _F(1)), "g": ("mass", _F(1, 1000)), "mg": ("mass", _F(1, 10**6)),
    "t": ("mass", _F(1000)), "lb": ("mass", _F("0.45359237")), "oz": ("mass", _F("0.45359237") / 16),
    "s": ("time", _F(1)), "min": ("time", _F(60)), "h": ("time", _F(3600)),
    "day": ("time", _F(86400)), "week": ("time", _F(604800)),
    "l": ("volume", _F(1, 1000)), "ml": ("volume", _F(1, 10**6)), "m3": ("volume", _F(1)),
    "gal": ("volume", _F("0.003785411784")),
    "m2": ("area", _F(1)), "km2": ("area", _F(10**6)), "ha": ("area", _F(10**4)),
    "acre": ("area", _F("4046.8564224")), "mi2": ("area", _F("1609.344") ** 2),
    "m/s": ("speed", _F(1)), "km/h": ("speed", _F(1000, 3600)), "mph": ("speed", _F("1609.344") / 3600),
}
_TEMPERATURE = {"c", "f", "k"}
def _kelvin(value, unit):
    return {"c": value + _F("273.15"), "f": (value - 32) * _F(5, 9) + _F("273.15"), "k": value}[unit]
def convert(value, source, target):
    a, b = str(source).strip().lower(), str(target).strip().lower()
    value = _F(value) if not isinstance(value, _F) else value
    if a in _TEMPERATURE and b in _TEMPERATURE:
        k = _kelvin(value, a)
        return {"c": k - _F("273.15"), "f": (k - _F("273.15")) * _F(9, 5) + 32, "k": k}[b]
    if a not in _UNITS or b not in _UNITS:
        raise ValueError(f"unknown unit: {a if a not in _UNITS else b}")
    if _UNITS[a][0] != _UNITS[b][0]:
        raise ValueError(f"cannot convert {_UNITS[a][0]} ({a}) to {_UNITS[b][0]} ({b})")
    return value * _UNITS[a][1] / _UNITS[b][1]
def _exact(text):
    cleaned = _re.sub(r"[,$€£¥\s]", "", text)
    percent = cleaned.endswith("%")
    try:
        value = _F(cleaned.rstrip("%"))
    except (ValueError, ZeroDivisionError):
        return text
    return value / 100 if percent else value
def _plain(value):
    if isinstance(value, _F):
        return int(value) if value.denominator == 1 else float(value)
    return value
def _show(value):
    if isinstance(value, bool) or not isinstance(value, (_F, int, float)):
        return str(value)
    value = _F(value)
    if value.denominator == 1:
        return str(value.numerator)
    text = f"{float(value):.10g}"
    return text if "e" in text else text.rstrip("0").rstrip(".")
`;

/** The expression of a reply: a fenced block, else an `Expression:` line, else a bare line. */
export function parseExpression(reply: string): string {
  const fenced = /```(?:python|py)?\s*\n([\s\S]*?)```/i.exec(reply)?.[1]?.trim();
  const labelled = /^\s*expression\s*:\s*(.+)$/im.exec(reply)?.[1]?.trim();
  const bare = reply.trim().includes("\n") ? undefined : reply.trim().replace(/^`|`$/g, "");
  const found = fenced ?? labelled ?? bare;
  if (!found) throw new ReplyParseError("calc", "expression (a ```python block)", reply);
  return found;
}

/**
 * The Python the sandbox runs: the inputs as exact numbers, the expression, its value printed;
 * then `result` as a plain number (a fraction is not one the checker can read).
 */
export function calcProgram(expression: string, inputs: WorkerInput[]): string {
  const bindings = inputs.map((i) => `${i.id} = _exact(${JSON.stringify(i.answer ?? "")})`);
  const body = expression.includes("\n") ? [expression] : [`result = (${expression})`];
  return [PRELUDE, ...bindings, ...body, "print(_show(result))", "result = _plain(result)"].join(
    "\n",
  );
}

/** The inputs an expression names (as Python names: `s1`, not `s10` or `x.s1`). */
export function inputsUsed(expression: string, inputs: WorkerInput[]): WorkerInput[] {
  const literal = (id: string) => id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return inputs.filter((i) => new RegExp(`(?<![\\w.])${literal(i.id)}(?!\\w)`).test(expression));
}

function names(inputs: WorkerInput[]): string {
  return inputs.map((i) => i.id).join(", ");
}

/** Whether arithmetic over `used` is derived from the tables: as derived as its least derived input. */
function fromInputs(used: WorkerInput[]): Pick<CodeResult, "derived" | "derivation"> {
  const over = `arithmetic over ${names(used)}`;
  const not = used.filter((i) => i.derived === "no");
  if (not.length > 0) {
    return {
      derived: "no",
      derivation: `${over}; ${names(not)} ${not.length === 1 ? "is" : "are"} not derived from the tables (a literal, or not its worker's computed result)`,
    };
  }
  const unsure = used.filter((i) => i.derived !== "yes");
  if (unsure.length > 0) {
    return {
      derived: "unknown",
      derivation: `${over}; whether ${names(unsure)} ${unsure.length === 1 ? "is" : "are"} derived from the tables is not known`,
    };
  }
  return {
    derived: "yes",
    derivation: `${over}, ${used.length === 1 ? "an answer" : "answers"} derived from the tables by earlier steps' code: it changes when they do`,
  };
}

/**
 * The calc run's result with its derivation from the inputs it uses. The sandbox re-ran the
 * program on perturbed tables; the program reads no table but through its inputs, so the
 * sandbox finds it "no" (a literal): in that case only, the inputs decide (`derivation` says
 * so). A result the sandbox found derived (the expression reads a table itself), unknown, or
 * not deterministic stays as it is; a run that returned no result gets one from its output.
 */
export function calcResult(
  computed: CodeResult | null,
  printed: string,
  used: WorkerInput[],
): CodeResult | null {
  if (computed === null) {
    if (!printed) return null;
    const judged = used.length > 0 ? fromInputs(used) : null;
    return {
      from: "printed",
      kind: "scalar",
      values: [lineValue(printed)],
      labels: [],
      text: printed,
      line: null,
      derived: judged?.derived ?? "unknown",
      derivation: `${judged?.derivation ?? "the expression uses none of the earlier answers"} (the sandbox returned no result of its own)`,
      lineage: [],
    };
  }
  if (computed.derived !== "no" || /not deterministic/i.test(computed.derivation)) return computed;
  if (used.length === 0) {
    return {
      ...computed,
      derivation: `${computed.derivation}; the expression uses none of the earlier answers`,
    };
  }
  const judged = fromInputs(used);
  return {
    ...computed,
    ...judged,
    derivation: `${judged.derivation} (the sandbox found that the program itself reads no table: ${computed.derivation})`,
  };
}

/** Exact arithmetic and unit conversion, computed in the sandbox. */
export default defineWorker({
  name: "calc",
  description:
    "Computes one arithmetic or unit-conversion step exactly (fractions, not floats) from the " +
    "answers of earlier subtasks, in the sandbox. Give it `expression` (Python, earlier answers " +
    "named s1, s2, ...; convert(x, 'km', 'mi') for units) or let it write one from the task.",
  input: TaskInput.extend({
    expression: z
      .string()
      .optional()
      .describe("a Python expression over s1, s2, ... and convert(); optional"),
  }),
  async run({ task, expression }, kit) {
    const names = kit.inputs.map((i) => `${i.id} = ${i.answer ?? "(none)"}  # ${i.task}`);
    const written =
      expression ??
      parseExpression(
        await kit.ask(
          "coder",
          CALC_SYSTEM,
          `Step: ${task}\n\nVariables:\n${names.join("\n") || "(none)"}`,
        ),
      );
    const code = calcProgram(written, kit.inputs);
    const ran = await kit.run(code);
    const printed = ran.stdout.trim().split("\n").at(-1)?.trim() ?? "";
    const used = inputsUsed(written, kit.inputs);
    const result: ExecResult = ran.ok
      ? { ...ran, result: calcResult(ran.result, printed, used) }
      : ran;
    const { attempts, evidence } = codeFinding(`${kit.id}.a1`, code, written, result, "calc");
    return {
      answer: result.ok && printed ? printed : null,
      evidence,
      attempts,
      trajectory: [
        `expression: ${written}`,
        result.ok ? `= ${printed}` : `failed: ${result.error?.type}: ${result.error?.message}`,
        ...(result.result
          ? [`derived from the tables: ${result.result.derived} (${result.result.derivation})`]
          : []),
      ],
      score: result.ok && printed ? 1 : 0,
    };
  },
});
