import { z } from "zod";
import {
  type Attempt,
  type Evidence,
  type Figure,
  type ProducedTable,
  SelectionSchema,
  type TableRef,
  type Verdict,
} from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { describeFigure } from "../grounding/figure-text.js";
import { asksForChart, chartAttempt, figureId } from "../grounding/figures.js";
import { numberLines } from "../nodes/prompts.js";
import {
  cellsAddress,
  headerAddress,
  positionText,
  rowPlacesText,
  rowPosition,
  tableNamed,
  tableSource,
} from "../tables/cell-address.js";
import { renderTable } from "../tables/profile.js";
import { readTable, type TableData } from "../tables/read.js";
import { renderPlacedRows, renderSourceRows, SHOWN_ROWS } from "../tables/source-rows.js";
import { JSON_FIELDS } from "./json-fields.js";

function indent(text: string, by = "    "): string {
  return text
    .split("\n")
    .map((line) => by + line)
    .join("\n");
}

function codeLines(attempt: Attempt | undefined, [from, to]: [number, number]): string {
  if (!attempt || from <= 0) return "";
  const numbered = numberLines(attempt.code).split("\n");
  return numbered.slice(from - 1, to).join("\n");
}

/** What evidence is shown with: the run's attempts and its source tables by name. */
interface EvidenceContext {
  attempts: Attempt[];
  tables: Map<string, TableRef>;
  /** The queries whose returned rows were shown already (once for all their rows' evidence). */
  shownQueries?: Set<string>;
}

/** A source table as anchors and lineage name it (the first table is also the code's `df`). */
function sourceTable(context: EvidenceContext, name: string): TableRef | undefined {
  return tableNamed([...context.tables.values()], name);
}

/** A source cell's evidence id: `<table>:r<row>:<column>`. */
const CELL_ID = /^([^:]+):r(\d+):(.+)$/s;

/** The source cell an evidence id names, when it names one of the run's tables. */
function sourceCell(
  id: string,
  context: EvidenceContext,
): { table: TableRef; row: number; column: string } | null {
  const match = CELL_ID.exec(id);
  const table = match?.[1] === undefined ? undefined : sourceTable(context, match[1]);
  if (!match || !table) return null;
  return { table, row: Number(match[2]), column: match[3] ?? "" };
}

/** The source cells that evidence ids name, per table and column, in the user's coordinates. */
function cellIdsAddress(ids: readonly string[], context: EvidenceContext): string[] {
  const groups = new Map<string, { table: TableRef; column: string; rows: number[] }>();
  for (const id of ids) {
    const cell = sourceCell(id, context);
    if (!cell) continue;
    const key = JSON.stringify([cell.table.name, cell.column]);
    const group = groups.get(key) ?? { table: cell.table, column: cell.column, rows: [] };
    group.rows.push(cell.row);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ table, rows, column }) => cellsAddress(table, rows, column));
}

/** Items joined by `; ` (addresses hold commas), at most SHOWN_ROWS, then how many more. */
function listed(items: readonly string[]): string {
  const shown = items.slice(0, SHOWN_ROWS);
  const more = items.length - shown.length;
  return more > 0 ? `${shown.join("; ")} and ${more} more` : shown.join("; ");
}

function describeCells(
  e: Evidence,
  anchor: Extract<Evidence["anchor"], { kind: "cells" }>,
  context: EvidenceContext,
): string {
  const table = sourceTable(context, anchor.table);
  const value = JSON.stringify(e.value);
  if (!table) {
    return `[${e.id}] cell of ${anchor.table}: row ${anchor.rows.join(", ")}, column ${anchor.columns.join(", ")} = ${value}`;
  }
  if (anchor.rows.length === 0) {
    const headers = anchor.columns.map((column) => headerAddress(table, column));
    return `[${e.id}] column header ${listed(headers)} = ${value}`;
  }
  const one = anchor.rows.length === 1 && anchor.columns.length === 1;
  const cells = anchor.columns.map((column) => cellsAddress(table, anchor.rows, column));
  return `[${e.id}] ${one ? "cell" : "cells"} ${cells.join("; ")} = ${value}`;
}

/** The run's result (`<attempt>:result`): its value, the line that made it, the cells it rests on. */
function describeResult(e: Evidence, attempt: Attempt | undefined, context: EvidenceContext) {
  const result = attempt?.result?.result ?? null;
  const shown =
    result?.text ??
    (e.value !== null && typeof e.value === "object" ? `table ${e.value.name}` : String(e.value));
  if (e.anchor.kind === "sql") {
    const head = `[${e.id}] result of the query, ${JSON.stringify(shown)}:`;
    // Rows DuckDB traced are listed below the evidence; an aggregate's are not known one by one.
    const reads = (result?.lineage ?? [])
      .filter((l) => l.rows === null && l.columns?.length)
      .map((l) => {
        const source = sourceTable(context, l.table);
        return `${source ? tableSource(source) : l.table}, columns ${l.columns?.join(", ")}`;
      });
    const read = reads.length > 0 ? [indent(`reads ${reads.join("; ")}`)] : [];
    return [head, indent(e.anchor.query), ...read, ...queryReturned(attempt, context)].join("\n");
  }
  const how = result ? ` (${result.from})` : "";
  const head = shown.includes("\n")
    ? `[${e.id}] result${how}:\n${indent(shown)}`
    : `[${e.id}] result ${JSON.stringify(shown)}${how}`;
  const anchored = e.anchor.kind === "code" && e.anchor.lines[0] > 0 ? e.anchor.lines : null;
  const lines =
    anchored ?? (result?.line ? ([result.line, result.line] as [number, number]) : null);
  const parts = [lines && attempt ? `${head}, from:\n${indent(codeLines(attempt, lines))}` : head];
  const cells = cellIdsAddress(e.provenance.parents, context);
  const others = e.provenance.parents.filter((id) => !sourceCell(id, context));
  if (cells.length > 0) parts.push(indent(`cells: ${cells.join("; ")}`));
  if (others.length > 0) parts.push(indent(`rests on: ${listed(others)}`));
  return parts.join("\n");
}

/**
 * The column of a produced table that holds its rows' source row ids: pandas' index, which the
 * sandbox writes first, when its values are exactly the rows its lineage names; else null.
 */
function sourceIdColumn(data: TableData, rows: readonly number[]): number | null {
  if (data.columns.length < 2 || data.rows.length === 0) return null;
  const named = new Set(rows);
  const ids = new Set<number>();
  for (const row of data.rows) {
    const cell = row[0] ?? "";
    if (!/^\d+$/.test(cell) || !named.has(Number(cell))) return null;
    ids.add(Number(cell));
  }
  return ids.size === named.size ? 0 : null;
}

/**
 * A produced table's rows that matter, where its lineage names its source rows: those the
 * result comes from (else all), each with its source row's place; or, when its rows cannot be
 * told apart, where its source rows are. Null when lineage does not say.
 */
async function rowsThatMatter(
  data: TableData,
  produced: ProducedTable,
  attempt: Attempt | undefined,
  context: EvidenceContext,
): Promise<string | null> {
  const traced = produced.lineage.filter((l) => l.rows !== null);
  const [lineage] = traced;
  const source = lineage && sourceTable(context, lineage.table);
  if (traced.length !== 1 || !lineage?.rows?.length || !source) return null;
  const where = tableSource(source);
  const idColumn = sourceIdColumn(data, lineage.rows);
  if (idColumn === null) {
    const preview = renderTable(data.columns, data.rows, { maxRows: 5, rowNumbers: true });
    return `${preview}\nfrom ${where}: ${rowPlacesText(source, lineage.rows)}`;
  }
  const fromResult = (attempt?.result?.result?.lineage ?? []).find(
    (l) => l.rows !== null && sourceTable(context, l.table) === source,
  )?.rows;
  const wanted = new Set(fromResult ?? []);
  const all = data.rows.map((cells) => ({ id: Number(cells[idColumn]), cells }));
  const matter = all.filter((row) => wanted.has(row.id));
  const rows = matter.length > 0 ? matter : all;
  const heading =
    matter.length > 0
      ? `its ${rows.length} of ${all.length} rows the result comes from, at their place in ${where}:`
      : `its rows, at their place in ${where}:`;
  const columns = data.columns.filter((_, c) => c !== idColumn);
  const placed = rows.map(({ id, cells }) => ({
    place: positionText(rowPosition(source, id)),
    cells: cells.filter((_, c) => c !== idColumn),
  }));
  return `${heading}\n${renderPlacedRows(columns, placed)}`;
}

/** A figure's packet (`a1:fig1`): what it plots, the lines that drew it, the cells it rests on. */
function describeFigureEvidence(e: Evidence, owner: Attempt | undefined, context: EvidenceContext) {
  const head = `[${e.id}] figure: ${String(e.value)}`;
  const lines = e.anchor.kind === "code" ? e.anchor.lines : ([0, 0] as [number, number]);
  const drawnBy = owner && lines[0] > 0 ? [`drawn by:\n${indent(codeLines(owner, lines))}`] : [];
  const cells = cellIdsAddress(e.provenance.parents, context);
  const parts = [head, ...drawnBy.map((p) => indent(p))];
  if (cells.length > 0) parts.push(indent(`cells: ${cells.join("; ")}`));
  return parts.join("\n");
}

async function describeEvidence(e: Evidence, context: EvidenceContext): Promise<string> {
  const anchor = e.anchor;
  const owner = context.attempts.find((a) => a.id === e.provenance.attempt);
  if (owner && e.id === `${owner.id}:result`) return describeResult(e, owner, context);
  if (e.modality === "figure") return describeFigureEvidence(e, owner, context);
  if (anchor.kind === "code") {
    const attempt = context.attempts.find((a) => a.id === anchor.attempt);
    const code = codeLines(attempt, anchor.lines);
    if (e.value !== null && typeof e.value === "object") {
      const value = e.value;
      const data = await readTable(value);
      const produced = attempt?.result?.tables.find((t) => t.variable === value.name);
      const shown =
        (produced && (await rowsThatMatter(data, produced, attempt, context))) ??
        renderTable(data.columns, data.rows, { maxRows: 5, rowNumbers: true });
      return `[${e.id}] table \`${value.name}\`, ${value.rows} rows, made by:\n${indent(code)}\n${indent(shown)}`;
    }
    const output = attempt?.result?.stdout.slice(anchor.stdout[0], anchor.stdout[1]) ?? "";
    return `[${e.id}] output ${JSON.stringify(output)} printed by:\n${indent(code)}`;
  }
  if (anchor.kind === "cells") return describeCells(e, anchor, context);
  if (anchor.kind === "sql") return describeSqlRow(e, anchor, owner, context);
  return `[${e.id}] ${anchor.source}: ${JSON.stringify(e.value)}`;
}

/** The rows a query returned (as its attempt printed them), once per query. */
function queryReturned(attempt: Attempt | undefined, context: EvidenceContext): string[] {
  const returned = attempt?.result?.ok ? attempt.result.stdout.trimEnd() : "";
  if (!attempt || !returned || context.shownQueries?.has(attempt.id)) return [];
  context.shownQueries?.add(attempt.id);
  return [indent(`it returned:\n${indent(returned, "  ")}`)];
}

/** A row a query returned (`<attempt>:sql<n>`): its value, the query, the source row it comes from. */
function describeSqlRow(
  e: Evidence,
  anchor: Extract<Evidence["anchor"], { kind: "sql" }>,
  attempt: Attempt | undefined,
  context: EvidenceContext,
): string {
  const n = /:sql(\d+)$/.exec(e.id)?.[1];
  const which = n ? `row ${n} the query returned` : "a row the query returned";
  const parts = [`[${e.id}] ${which}, ${JSON.stringify(e.value)}, SQL over ${anchor.table}:`];
  parts.push(indent(anchor.query));
  const source = sourceTable(context, anchor.table);
  if (anchor.rowIds.length > 0) {
    const from = source
      ? `${tableSource(source)} ${rowPlacesText(source, anchor.rowIds)}`
      : `${anchor.table} rows ${anchor.rowIds.join(", ")}`;
    parts.push(indent(`from ${from}`));
  }
  return [...parts, ...queryReturned(attempt, context)].join("\n");
}

/**
 * For each attempt the cited evidence comes from, the source rows its result comes from, as its
 * lineage names them: at most SHOWN_ROWS rows each, in the user's coordinates. A result that
 * rests on every row of a table longer than that says so instead of listing them.
 */
async function supportingRows(cited: Evidence[], context: EvidenceContext): Promise<string[]> {
  const parts: string[] = [];
  const owners = [...new Set(cited.map((e) => e.provenance.attempt))];
  for (const attempt of context.attempts.filter((a) => owners.includes(a.id))) {
    for (const { table, rows, columns } of attempt.result?.result?.lineage ?? []) {
      const source = sourceTable(context, table);
      if (!source || !rows?.length) continue;
      const read = columns?.length ? `columns ${columns.join(", ")}` : "";
      const where = tableSource(source);
      const ids = new Set(rows.filter((r) => r < source.rows));
      if (ids.size === source.rows && source.rows > SHOWN_ROWS) {
        const also = read ? ` (${read})` : "";
        parts.push(
          `The result of ${attempt.id} comes from all ${source.rows} rows of ${where}${also}.`,
        );
        continue;
      }
      const places = [rowPlacesText(source, rows), read].filter(Boolean).join("; ");
      const count = ids.size === 1 ? "1 row" : `${ids.size} rows`;
      const head = `The result of ${attempt.id} comes from ${count} of ${where} (${places}):`;
      parts.push(`${head}\n${indent(await renderSourceRows(source, rows, { columns }))}`);
    }
  }
  return parts;
}

/** A figure the answer rests on, as `--json` lists it: its id, what it plots, its files. */
export interface FigureListing {
  id: string;
  title: string;
  kind: string | null;
  description: string;
  derived: Figure["derived"];
  derivation: string;
  /** How many of its plotted values re-runs found typed in (the rest changing with the table). */
  typedIn: number;
  png: string | null;
  svg: string | null;
}

/** The figures of the run the answer rests on (see grounding/figures.ts `chartAttempt`). */
export function figureListing(
  state: Pick<TableQAStateValue, "attempts" | "answer">,
): FigureListing[] {
  const attempt = chartAttempt(state.attempts, state.answer?.evidence);
  if (!attempt) return [];
  return (attempt.result?.figures ?? []).map((figure) => ({
    id: figureId(attempt, figure),
    title: figure.title,
    kind: figure.axes.find((a) => a.kind !== null)?.kind ?? null,
    description: describeFigure(figure),
    derived: figure.derived,
    derivation: figure.derivation,
    typedIn: figure.axes.flatMap((a) => a.points).filter((p) => p.derived === "no").length,
    png: figure.files.find((f) => f.format === "png")?.uri ?? null,
    svg: figure.files.find((f) => f.format === "svg")?.uri ?? null,
  }));
}

const FIGURE_SUPPORT: Record<Figure["derived"], string> = {
  yes: "its values are computed from the table",
  no: "its values do not change with the table (typed in?)",
  unknown: "its values could not be traced to the table",
};

/** The figures section: each figure with its files, where the user can open them. */
function describeFigures(figures: FigureListing[]): string | null {
  if (figures.length === 0) return null;
  const parts = figures.map((f) => {
    const files = [f.png && `PNG ${f.png}`, f.svg && `SVG ${f.svg}`].filter(Boolean);
    const saved = files.length > 0 ? files : ["(not saved: see the attempt's stderr)"];
    const typed = f.derived === "yes" && f.typedIn > 0 ? `, but ${f.typedIn} typed in` : "";
    return [`  [${f.id}] ${f.description}`, ...saved, `${FIGURE_SUPPORT[f.derived]}${typed}`]
      .map((line, i) => (i === 0 ? line : `      ${line}`))
      .join("\n");
  });
  return ["Figures:", ...parts].join("\n");
}

/** The human-readable result: the answer, then each piece of evidence it cites. */
export async function renderResult(state: TableQAStateValue): Promise<string> {
  const answer = state.answer;
  if (!answer) return "No answer was produced.";
  const byId = new Map(state.evidence.map((e) => [e.id, e]));
  const cited = answer.evidence.flatMap((id) => byId.get(id) ?? []);
  const parts = [answerLine(answer.final, state.verdict), ""];
  const chart = asksForChart(state.question) && figureListing(state).length > 0;
  if (state.verdict) parts.push(describeVerdict(state.verdict, chart), "");
  const disputes = conflictsOf(state);
  if (disputes) parts.push(disputes, "");
  const figures = describeFigures(figureListing(state));
  if (figures) parts.push(figures, "");
  if (cited.length === 0) {
    parts.push("Evidence: none found for this answer.");
  } else {
    parts.push("Evidence:");
    const context: EvidenceContext = {
      attempts: state.attempts,
      tables: new Map(state.tables.map((t) => [t.name, t])),
      shownQueries: new Set(),
    };
    for (const e of cited) parts.push(indent(await describeEvidence(e, context), "  "));
    for (const rows of await supportingRows(cited, context)) parts.push(indent(rows, "  "));
  }
  return parts.join("\n");
}

const Orchestrated = z.object({ selection: SelectionSchema.nullable() });

/** Where an orchestrator's workers disagreed: each answer, and which one the answer kept. */
function conflictsOf(state: object): string | null {
  const parsed = Orchestrated.safeParse(state);
  const conflicts = parsed.success ? (parsed.data.selection?.conflicts ?? []) : [];
  if (conflicts.length === 0) return null;
  const lines = conflicts.map((c) => {
    const said = c.packets.map((p, i) => `${p} said ${JSON.stringify(c.answers[i])}`).join(", ");
    return `  - ${c.subtask}: ${said}; kept ${c.kept ?? "neither"}`;
  });
  return ["Workers disagreed:", ...lines].join("\n");
}

/** The answer, or, when the run is not sure of it, its best candidate said as such. */
function answerLine(final: string, verdict: Verdict | null): string {
  if (!verdict || verdict.sure) return `Answer: ${final}`;
  if (verdict.unchecked) return `Answer (unchecked): ${final}`;
  return `Not sure. Best candidate: ${final} (confidence ${verdict.confidence.toFixed(2)})`;
}

const SUPPORT_WORDS: Record<Verdict["support"], string> = {
  derived: "derived from the code's result",
  "looked-up": "looked up in the cells the question names",
  coincidental: "the value only occurs in the table or output (no support)",
  none: "nothing supports it",
};

/** The same, for a chart answer: what holds it up is what the figure plots. */
const CHART_SUPPORT_WORDS: Record<Verdict["support"], string> = {
  derived: "derived from the table: what the figure plots changes with it",
  "looked-up": "looked up in the cells the question names",
  coincidental: "the figure plots values typed in, not computed from the table (no support)",
  none: "nothing supports what the figure plots",
};

function describeVerdict(verdict: Verdict, chart = false): string {
  const { type, format, grounding } = verdict.scores;
  const scores = `type ${type}/2, format ${format}/2, grounding ${grounding}/2`;
  if (verdict.unchecked) {
    const why = "the answer states no value or claim that the evidence could confirm";
    return [
      `Check: unchecked (${why}; by ${verdict.by})`,
      ...verdict.issues.map((i) => `  - ${i}`),
    ].join("\n");
  }
  const head = `Check: ${verdict.pass ? "passed" : "FAILED"} (${scores}; by ${verdict.by})`;
  const words = (chart ? CHART_SUPPORT_WORDS : SUPPORT_WORDS)[verdict.support];
  const support = `Support: ${words}; confidence ${verdict.confidence.toFixed(2)}`;
  const alignment = verdict.alignment ? [`Alignment: ${verdict.alignment.summary}`] : [];
  return [head, ...verdict.issues.map((issue) => `  - ${issue}`), support, ...alignment].join("\n");
}

/** The `--json` shape: the state's fields, and the figures the answer rests on. */
export function jsonResult(state: TableQAStateValue): Record<string, unknown> {
  const listing = (field: (typeof JSON_FIELDS)[number]) =>
    field === "figures"
      ? figureListing(state)
      : field === "citations"
        ? citationListing(state)
        : state[field];
  return Object.fromEntries(JSON_FIELDS.map((field) => [field, listing(field)]));
}

/** One piece of the answer's evidence and the source cells it names, in the file's own places. */
export interface CitationListing {
  evidence: string;
  cells: string[];
}

/**
 * The source cells each piece of evidence the answer cites names (a cell packet's cells, the
 * cells a result rests on), as `Results!B5` or `sales.csv line 4, column Sales`.
 */
export function citationListing(
  state: Pick<TableQAStateValue, "answer" | "evidence" | "attempts" | "tables">,
): CitationListing[] {
  const context: EvidenceContext = {
    attempts: state.attempts,
    tables: new Map(state.tables.map((t) => [t.name, t])),
  };
  const byId = new Map(state.evidence.map((e) => [e.id, e]));
  const out: CitationListing[] = [];
  for (const id of state.answer?.evidence ?? []) {
    const e = byId.get(id);
    if (!e) continue;
    const cells = cellIdsAddress(e.provenance.parents, context);
    if (e.anchor.kind === "cells") {
      const table = sourceTable(context, e.anchor.table);
      const { rows, columns } = e.anchor;
      if (table && rows.length > 0) cells.push(...columns.map((c) => cellsAddress(table, rows, c)));
    }
    if (cells.length > 0) out.push({ evidence: e.id, cells });
  }
  return out;
}
