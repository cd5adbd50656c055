import type {
  Attempt,
  CodeResult,
  Evidence,
  ExecResult,
  ProducedTable,
} from "../../blackboard/schemas.js";
import { evidenceFromExecution } from "../../grounding/evidence.js";

/**
 * A code result as the sandbox reports it: by default declared, derived from the table, one
 * value; `values` of length 1 is a scalar, more a list.
 */
export function codeResult(
  values: CodeResult["values"],
  more: Partial<CodeResult> = {},
): CodeResult {
  return {
    from: "declared",
    kind: values.length === 1 ? "scalar" : "list",
    values,
    labels: [],
    text: values.length === 1 ? String(values[0]) : JSON.stringify(values),
    line: null,
    derived: "yes",
    derivation: "the result changed when the table's values were perturbed",
    lineage: [],
    ...more,
  };
}

/**
 * An attempt that ran `code` and printed `stdout`, with its evidence built by the same
 * function the executor uses. Each printed line is mapped to the code line of the i-th
 * print() call, as the sandbox's output spans would map it.
 */
export function ranAttempt(
  id: string,
  code: string,
  stdout: string,
  tables: ProducedTable[] = [],
  computed: CodeResult | null = null,
): { attempt: Attempt; evidence: Evidence[] } {
  const printLines = code
    .split("\n")
    .flatMap((line, i) => (line.includes("print(") ? [i + 1] : []));
  let offset = 0;
  const spans = stdout
    .split("\n")
    .slice(0, -1)
    .map((line, i) => {
      const span = {
        line: printLines[i] ?? printLines.at(-1) ?? 1,
        start: offset,
        end: offset + line.length + 1,
      };
      offset += line.length + 1;
      return span;
    });
  const result: ExecResult = {
    ok: true,
    stdout,
    stderr: "",
    error: null,
    tables,
    spans,
    truncated: false,
    durationMs: 5,
    result: computed,
  };
  const attempt: Attempt = { id, code, raw: code, result, parseError: null };
  return {
    attempt,
    evidence: evidenceFromExecution(attempt, result, "executor", "2026-01-01T00:00:00Z"),
  };
}

/** A source cell packet, as the answerer adds them. */
export function cell(table: string, row: number, column: string, value: string): Evidence {
  return {
    id: `${table}:r${row}:${column}`,
    modality: "table",
    source: "answerer",
    anchor: { kind: "cells", table, rows: [row], columns: [column] },
    value,
    time: "2026-01-01T00:00:00Z",
    provenance: { attempt: "source", parents: [] },
    confidence: 1,
  };
}

/** An attempt that printed `stdout` and then raised, with the evidence the executor posts for it. */
export function failedAttempt(
  id: string,
  code: string,
  stdout: string,
): { attempt: Attempt; evidence: Evidence[] } {
  const ran = ranAttempt(id, code, stdout);
  const result: ExecResult = {
    ...(ran.attempt.result as ExecResult),
    ok: false,
    error: { type: "ValueError", message: "no luck", line: code.split("\n").length },
  };
  const attempt: Attempt = { ...ran.attempt, result };
  return {
    attempt,
    evidence: evidenceFromExecution(attempt, result, "executor", "2026-01-01T00:00:00Z"),
  };
}
