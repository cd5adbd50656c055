import type { Attempt, CodeResult, ExecResult, Lineage } from "../blackboard/schemas.js";
import type { SqlResult } from "./duckdb.js";
import type { SqlCell } from "./duckdb-values.js";

/*
 * A SQL query as an attempt, the way a pandas run is one: its code is the query, its output
 * the rows, its result (`CodeResult`, from "declared") the rows as a typed value with whether
 * it is derived from the tables, so that the checker judges an answer from SQL as it judges
 * one from pandas (grounding/derivation.ts, `resultOf`).
 */

/** At most this many values of a result are kept (as the sandbox keeps them). */
const MAX_VALUES = 1000;
const MAX_TEXT_CHARS = 500;
/** Rows written to the attempt's output. */
const OUTPUT_ROWS = 200;

function cellText(cell: SqlCell): string {
  return cell === null ? "null" : String(cell);
}

function short(text: string): string {
  return text.length <= MAX_TEXT_CHARS ? text : `${text.slice(0, MAX_TEXT_CHARS - 3)}...`;
}

/** The rows as lines of text, a header first: `city | km`, `Lyon | 250`; `cut` when rows were left out. */
export function renderRows(
  result: Pick<SqlResult, "columns" | "rows" | "truncated">,
  maxRows = OUTPUT_ROWS,
): { text: string; cut: boolean } {
  const lines = [result.columns.map((c) => c.name).join(" | ")];
  for (const row of result.rows.slice(0, maxRows)) lines.push(row.map(cellText).join(" | "));
  const left = result.rows.length - Math.min(result.rows.length, maxRows);
  if (left > 0) lines.push(`... ${left} more rows`);
  else if (result.truncated) lines.push("... more rows past the row limit");
  return { text: `${lines.join("\n")}\n`, cut: left > 0 };
}

/** Lineage without re-runs: the result rows' source rows where DuckDB kept them, columns unknown. */
function untracedLineage(result: SqlResult): Lineage[] {
  return result.tables.map((table) => ({
    table,
    rows:
      table === result.table && result.rowIds && !result.truncated
        ? [...new Set(result.rowIds)].sort((a, b) => a - b)
        : null,
    columns: null,
  }));
}

/**
 * The rows as the code's result: one cell a scalar, one column a list, else a frame (its
 * cells row by row); derivation and lineage as the query found them (`derive`), else unknown.
 */
export function sqlCodeResult(result: SqlResult): CodeResult {
  const width = result.columns.length;
  const kind = result.rows.length === 1 && width === 1 ? "scalar" : width === 1 ? "list" : "frame";
  const values = (kind === "frame" ? result.rows.flat() : result.rows.map((row) => row[0] ?? null))
    .slice(0, MAX_VALUES)
    .map((cell) => cell ?? null);
  const text =
    kind === "scalar"
      ? cellText(values[0] ?? null)
      : result.rows.length === 0
        ? "(no rows)"
        : renderRows(result, 20).text.trimEnd();
  const derivation = result.derivation ?? {
    derived: "unknown" as const,
    derivation: "not known: the query was not re-run on perturbed copies of the tables",
    lineage: untracedLineage(result),
  };
  return {
    from: "declared",
    kind,
    values,
    labels: [],
    text: short(text),
    line: null,
    derived: derivation.derived,
    derivation: derivation.derivation,
    lineage: derivation.lineage,
  };
}

/** A query that ran, as an attempt: `raw` is the reply it was read from. */
export function sqlAttempt(id: string, query: string, raw: string, result: SqlResult): Attempt {
  const output = renderRows(result);
  const exec: ExecResult = {
    ok: true,
    stdout: output.text,
    stderr: "",
    error: null,
    tables: [],
    spans: [],
    truncated: output.cut,
    durationMs: result.durationMs,
    result: sqlCodeResult(result),
  };
  return { id, code: query, raw, result: exec, parseError: null };
}

/** A query that was refused or failed, as an attempt. */
export function failedSqlAttempt(
  id: string,
  query: string,
  raw: string,
  error: { kind: string; message: string },
  durationMs: number,
): Attempt {
  const exec: ExecResult = {
    ok: false,
    stdout: "",
    stderr: error.message,
    error: { type: `SqlError (${error.kind})`, message: error.message, line: null },
    tables: [],
    spans: [],
    truncated: false,
    durationMs,
    result: null,
  };
  return { id, code: query, raw, result: exec, parseError: null };
}
