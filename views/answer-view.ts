import type { Attempt, Evidence, TableRef } from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { answerFigures, chartAttempt } from "../grounding/figures.js";
import { cellsAddress, rowIds, rowPlacesText, tableNamed } from "../tables/cell-address.js";
import type { AnswerView, CellRef, TableView } from "./schemas.js";
import { tableView, WINDOW_ROWS } from "./table-view.js";

/*
 * An answer as the answer component draws it: the value, the verdict in three words (passed,
 * not sure, unchecked) with its reasons, and the evidence: the code with the lines that made the
 * result, what it printed, the SQL it ran, the charts it drew, and the source tables around the
 * cells the result is derived from (its lineage), those cells lit.
 */

/** What of a run the answer view reads. */
export type AnsweredRun = Pick<
  TableQAStateValue,
  "question" | "answer" | "verdict" | "plan" | "attempts" | "evidence" | "tables"
>;

/** Characters of printed output shown at most. */
const OUTPUT_CHARS = 4_000;

function statusOf(run: AnsweredRun): AnswerView["status"] {
  const verdict = run.verdict;
  if (!verdict || verdict.unchecked) return "unchecked";
  return verdict.pass && verdict.sure ? "passed" : "not sure";
}

/** The attempts the cited evidence comes from; the last that ran, when nothing is cited. */
function ownersOf(run: AnsweredRun, cited: readonly Evidence[]): Attempt[] {
  const owners = new Set(cited.map((e) => e.provenance.attempt));
  const citing = run.attempts.filter((a) => owners.has(a.id));
  if (citing.length > 0) return citing;
  const last = run.attempts.findLast((a) => a.result?.ok);
  return last ? [last] : [];
}

/** The lines that made the result: its evidence's code anchor, else the line that assigned it. */
function resultLines(attempt: Attempt, evidence: readonly Evidence[]): [number, number] | null {
  const anchor = evidence.find((e) => e.id === `${attempt.id}:result`)?.anchor;
  if (anchor?.kind === "code" && anchor.lines[0] > 0) return anchor.lines;
  const line = attempt.result?.result?.line;
  return line ? [line, line] : null;
}

interface Lit {
  table: TableRef;
  focus?: number[];
  highlight: CellRef[];
  columns: string[];
}

/** The cells each source table's lineage names, merged per table, within the grid's window. */
function litCells(run: AnsweredRun, owners: readonly Attempt[], cited: readonly Evidence[]) {
  const byTable = new Map<string, Lit>();
  const entry = (table: TableRef) => {
    const known = byTable.get(table.name) ?? { table, highlight: [], columns: [] };
    byTable.set(table.name, known);
    return known;
  };
  const lineages = owners.flatMap((a) => a.result?.result?.lineage ?? []);
  for (const { table: name, rows, columns } of lineages) {
    const table = tableNamed(run.tables, name);
    if (!table) continue;
    const lit = entry(table);
    if (rows === null) {
      lit.columns.push(...(columns ?? []));
      continue;
    }
    const ids = rowIds(table, rows);
    lit.focus = rowIds(table, [...(lit.focus ?? []), ...ids]);
    const shown = new Set(lit.focus.slice(0, WINDOW_ROWS));
    for (const column of columns ?? table.columns.map((c) => c.name)) {
      for (const row of ids) if (shown.has(row)) lit.highlight.push({ row, column });
    }
  }
  // An answer without a traced computation: the cells it cites, looked up.
  if (lineages.length === 0) {
    for (const e of cited) {
      if (e.anchor.kind !== "cells") continue;
      const table = tableNamed(run.tables, e.anchor.table);
      if (!table) continue;
      const lit = entry(table);
      const ids = rowIds(table, e.anchor.rows);
      lit.focus = rowIds(table, [...(lit.focus ?? []), ...ids]);
      for (const column of e.anchor.columns)
        for (const row of ids) lit.highlight.push({ row, column });
    }
  }
  return [...byTable.values()];
}

/** The distinct cells, in the user's coordinates, column by column. */
function addresses(lit: Lit): string[] {
  const byColumn = new Map<string, number[]>();
  for (const { row, column } of lit.highlight) {
    byColumn.set(column, [...(byColumn.get(column) ?? []), row]);
  }
  return [...byColumn].map(([column, rows]) => cellsAddress(lit.table, rows, column));
}

function uniqueCells(cells: readonly CellRef[]): CellRef[] {
  const seen = new Map(cells.map((c) => [JSON.stringify([c.row, c.column]), c]));
  return [...seen.values()];
}

/** The queries the cited evidence ran, once each, with every row they returned. */
function queriesOf(run: AnsweredRun, cited: readonly Evidence[]): AnswerView["sql"] {
  const byQuery = new Map<string, { table: string; rows: number[] }>();
  for (const e of cited) {
    if (e.anchor.kind !== "sql") continue;
    const known = byQuery.get(e.anchor.query) ?? { table: e.anchor.table, rows: [] };
    known.rows.push(...e.anchor.rowIds);
    byQuery.set(e.anchor.query, known);
  }
  return [...byQuery].map(([query, { table, rows }]) => {
    const source = tableNamed(run.tables, table);
    return { query, table, places: source ? rowPlacesText(source, rows) : "" };
  });
}

/** The answer view of a run that has an answer; null before it has one. */
export async function answerView(run: AnsweredRun): Promise<AnswerView | null> {
  const answer = run.answer;
  if (!answer) return null;
  const cited = run.evidence.filter((e) => answer.evidence.includes(e.id));
  const owners = ownersOf(run, cited);
  const main = owners.at(-1);
  // A table the result read nothing of (an empty lineage) is not shown.
  const lit = litCells(run, owners, cited)
    .map((l) => ({ ...l, highlight: uniqueCells(l.highlight) }))
    .filter((l) => l.highlight.length > 0 || l.columns.length > 0);
  const sources: TableView[] = [];
  for (const l of lit) {
    sources.push(
      await tableView(l.table, {
        ...(l.focus ? { focus: l.focus } : {}),
        highlight: l.highlight,
        highlightColumns: [...new Set(l.columns)],
        tables: run.tables,
      }),
    );
  }
  const drew = chartAttempt(run.attempts, answer.evidence);
  const charts = (drew ? answerFigures(drew, answer.evidence) : []).flatMap((figure) => {
    const file = figure.files.find((f) => f.format === "png") ?? figure.files[0];
    return file ? [{ title: figure.title, src: `/artifacts/${file.sha256}.${file.format}` }] : [];
  });
  const stdout = main?.result?.stdout ?? "";
  const verdict = run.verdict;
  const status = statusOf(run);
  return {
    question: run.question,
    answer: answer.final,
    status,
    reasons: verdict?.issues ?? [],
    alignment: verdict?.alignment?.summary ?? null,
    confidence: verdict && !verdict.unchecked ? verdict.confidence : null,
    plan: run.plan,
    code: main
      ? { attempt: main.id, text: main.code, lines: resultLines(main, run.evidence) }
      : null,
    output: stdout ? stdout.slice(0, OUTPUT_CHARS) : null,
    sql: queriesOf(run, cited),
    charts,
    cells: lit.flatMap(addresses),
    sources,
  };
}
