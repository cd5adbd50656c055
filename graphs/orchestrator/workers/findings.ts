import type { Attempt, Evidence, ExecResult } from "../../../blackboard/schemas.js";
import { evidenceFromExecution, lineageParents } from "../../../grounding/evidence.js";
import type { SqlResult } from "../../../sandbox/duckdb.js";
import { sqlEvidence } from "../../../sandbox/duckdb.js";
import { sqlAttempt } from "../../../sandbox/duckdb-result.js";

/*
 * What a worker's code or query found, ready to return: the attempt the checker reads, the
 * evidence it posts and the answer it states. `return { ...found, trajectory, score }` is a
 * whole worker result.
 */

export interface Finding<Result> {
  answer: string | null;
  attempts: Attempt[];
  evidence: Evidence[];
  /** What ran: the query's rows, or the code's output and result. */
  result: Result;
}

const ANSWER_ROWS = 20;

function cellText(value: SqlResult["rows"][number][number]): string {
  return value === null ? "" : String(value);
}

/** The answer a result states: its one row's values, or each row's last value. */
export function answerOfRows(result: SqlResult): string | null {
  if (result.rows.length === 0) return null;
  const rows = result.rows.slice(0, ANSWER_ROWS);
  if (rows.length === 1) return (rows[0] ?? []).map(cellText).join(", ");
  return rows.map((row) => cellText(row.at(-1) ?? null)).join(", ");
}

/**
 * The query's result as evidence, `<attempt>:result` as a pandas run's: its value (the cell,
 * else the rows' text), anchored to the query and the rows it comes from, the source cells
 * its lineage names as parents.
 */
export function sqlResultEvidence(
  attempt: Attempt,
  result: SqlResult,
  source: string,
  time: string,
): Evidence | null {
  const computed = attempt.result?.result;
  if (!computed) return null;
  const table = result.table ?? result.tables.join(", ");
  const rows = computed.lineage.find((l) => l.table === result.table)?.rows ?? [];
  return {
    id: `${attempt.id}:result`,
    modality: "sql",
    source,
    anchor: { kind: "sql", query: attempt.code, table, rowIds: rows },
    value: computed.values.length === 1 ? (computed.values[0] ?? null) : computed.text,
    time,
    provenance: { attempt: attempt.id, parents: lineageParents(computed.lineage) },
    confidence: 1,
  };
}

/** A query that ran, as attempt `id`: its rows as evidence, its result, its answer. */
export function sqlFinding(
  id: string,
  query: string,
  raw: string,
  result: SqlResult,
  source: string,
): Finding<SqlResult> {
  const attempt = sqlAttempt(id, query, raw, result);
  const time = new Date().toISOString();
  const computed = sqlResultEvidence(attempt, result, source, time);
  return {
    answer: answerOfRows(result),
    attempts: [attempt],
    evidence: [...sqlEvidence(result, query, id, time), ...(computed ? [computed] : [])],
    result,
  };
}

/** Code that ran, as attempt `id`: its printed lines, tables and result as evidence. */
export function codeFinding(
  id: string,
  code: string,
  raw: string,
  result: ExecResult,
  source: string,
): Finding<ExecResult> {
  const attempt: Attempt = { id, code, raw, result, parseError: null };
  const evidence = evidenceFromExecution(attempt, result, source, new Date().toISOString());
  const printed = result.stdout.trim().split("\n").at(-1)?.trim() || null;
  const answer = result.ok ? (result.result?.text ?? printed) : null;
  return { answer, attempts: [attempt], evidence, result };
}
