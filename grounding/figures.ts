import type {
  Attempt,
  Evidence,
  Figure,
  Lineage,
  PlotPoint,
  TableRef,
} from "../blackboard/schemas.js";
import { figuresOf } from "../sandbox/figures.js";
import { cellEvidence, lineageParents } from "./evidence.js";
import { drawn, plotted, pointName } from "./figure-text.js";
import { containsWords, normalizeText } from "./matching.js";
import { loadTables, type PreparedCell, type PreparedTable } from "./table-search.js";
import type { ItemCheck } from "./verify.js";

/*
 * Charts as answers. A question that asks for a chart is answered by what the figure plots,
 * not by a sentence or a printed number: the sandbox read each figure's values as TableBench's
 * parser reads them and traced them to the tables (sandbox/figures.py). Each plotted
 * point becomes an item:
 *   - derived: the figure's values change when the tables' values are perturbed, and so does
 *     this point (or at least nothing shows it typed in);
 *   - typed in: re-runs changed the points beside it and never it, or the whole figure does not
 *     depend on the tables (numbers written into the code): never support;
 *   - conflicted: a bar that stands at a row's name plots another column of that row than the
 *     one the question names, or another row's value of that column.
 */

/**
 * A request for a chart: a kind of chart ("bar chart", "histogram", "a graph of"), or a drawing
 * verb with its object ("draw a", "plot the", "visualize"). A noun alone is not one ("the
 * song that topped the chart", "ended in a draw"), nor a quoted word (a column named 'draw').
 */
const CHART_REQUEST = new RegExp(
  [
    String.raw`\b(?:bar|line|pie|area|scatter|radar|waterfall|column|stacked|grouped|box)\s+(?:chart|graph|plot|diagram)s?\b`,
    String.raw`\bhistograms?\b`,
    String.raw`\b(?:chart|graph|figure|diagram)\s+(?:of|showing|that shows|to show)\b`,
    String.raw`\b(?:draw|plot|graph|sketch|chart)\s+(?:a|an|the|me|us|it|them|this|that|these|those|each|every|all|how|its|their)\b`,
    String.raw`\bvisuali[sz](?:e|es|ing)\b`,
  ].join("|"),
  "i",
);

export function asksForChart(question: string): boolean {
  return CHART_REQUEST.test(question.replace(/(?<!\w)(?:'[^']*'|"[^"]*"|`[^`]*`)(?!\w)/g, " "));
}

/** A figure's evidence id: `<attempt>:<figure id>` (`a1:fig1`). */
export function figureId(attempt: Attempt, figure: Figure): string {
  return `${attempt.id}:${figure.id}`;
}

/** Points judged one by one; the rest of a long series is judged as one item. */
const MAX_POINT_ITEMS = 30;
/** Cells cited per point. */
const MAX_POINT_CELLS = 4;

/**
 * The run whose figures a chart answer rests on: the last successful attempt whose figure the
 * answer cites, else the last successful attempt (which may have drawn none).
 */
export function chartAttempt(attempts: Attempt[], cited: readonly string[] = []): Attempt | null {
  const citing = attempts.findLast(
    (a) => a.result?.ok && figuresOf(a.result).some((f) => cited.includes(figureId(a, f))),
  );
  return citing ?? attempts.findLast((a) => a.result?.ok) ?? null;
}

/** The figures of `attempt` an answer rests on: those it cites, else all with values. */
export function answerFigures(attempt: Attempt, cited: readonly string[] = []): Figure[] {
  const figures = figuresOf(attempt.result).filter((f) => drawn(f).length > 0);
  const named = figures.filter((f) => cited.includes(figureId(attempt, f)));
  return named.length > 0 ? named : figures;
}

export interface ChartInput {
  question: string;
  attempts: Attempt[];
  tables?: TableRef[];
  cited?: readonly string[];
  now?: string;
  source?: string;
}

export interface ChartGrounding {
  checks: ItemCheck[];
  /** Source cells the check found, ready to post. */
  cells: Evidence[];
  /** The figures judged (evidence ids); empty when the code drew none. */
  figures: string[];
}

/** A source table's numeric columns the question names (`gold` in "gold medals per nation"). */
function namedNumericColumns(table: PreparedTable, question: string): Set<string> {
  const hay = normalizeText(question);
  const named = new Set<string>();
  for (const column of table.columns) {
    if (!column.norm || !containsWords(hay, column.norm)) continue;
    const cells = table.cells.filter((c) => c.column === column.name);
    const numbers = cells.filter((c) => c.number !== null).length;
    if (cells.length > 0 && numbers * 2 > cells.length) named.add(column.name);
  }
  return named;
}

function sameNumber(cell: PreparedCell, value: number): boolean {
  const n = cell.number;
  return n !== null && Math.abs(n.value * n.scale - value) <= 1e-9 * Math.max(1, Math.abs(value));
}

/** One source table's cells by row, and the rows each name (a cell's whole text) stands in. */
interface RowIndex {
  ref: TableRef;
  byRow: Map<number, PreparedCell[]>;
  rowsByName: Map<string, Set<number>>;
  named: Set<string>;
}

function rowIndex(ref: TableRef, table: PreparedTable, question: string): RowIndex {
  const byRow = new Map<number, PreparedCell[]>();
  const rowsByName = new Map<string, Set<number>>();
  for (const cell of table.cells) {
    byRow.set(cell.row, [...(byRow.get(cell.row) ?? []), cell]);
    if (cell.number === null && cell.norm) {
      rowsByName.set(cell.norm, (rowsByName.get(cell.norm) ?? new Set()).add(cell.row));
    }
  }
  return { ref, byRow, rowsByName, named: namedNumericColumns(table, question) };
}

type CellFinding =
  | { kind: "match"; cell: PreparedCell }
  | { kind: "conflict"; note: string; cell: PreparedCell }
  | null;

/**
 * Checks a point that stands at a row's name against that row: the cell of a column the
 * question names that holds its value; or what it plots instead (another column of the row,
 * another row of the column). Null when the point names no one row or plots a computed value.
 */
function checkCell(point: PlotPoint, index: RowIndex, figure: string): CellFinding {
  const value = point.value;
  const name = normalizeText(pointName(point));
  const rows = name ? index.rowsByName.get(name) : undefined;
  if (typeof value !== "number" || !rows || rows.size !== 1 || index.named.size === 0) return null;
  const [row] = [...rows];
  const cells = index.byRow.get(row ?? -1) ?? [];
  const asked = cells.filter((c) => index.named.has(c.column));
  const hit = asked.find((c) => sameNumber(c, value));
  if (hit) return { kind: "match", cell: hit };
  const [wanted] = asked;
  if (!wanted) return null;
  const where = `${figure} plots ${value} at ${JSON.stringify(pointName(point))}`;
  const other = cells.find((c) => !index.named.has(c.column) && sameNumber(c, value));
  if (other) {
    return {
      kind: "conflict",
      cell: wanted,
      note: `${where}, which is its ${other.column} (${other.raw}), not its ${wanted.column} (${wanted.raw})`,
    };
  }
  for (const [otherRow, rowCells] of index.byRow) {
    if (otherRow === row) continue;
    const moved = rowCells.find((c) => c.column === wanted.column && sameNumber(c, value));
    if (moved) {
      return {
        kind: "conflict",
        cell: wanted,
        note: `${where}, but its ${wanted.column} is ${wanted.raw}; ${value} is the ${wanted.column} of another row`,
      };
    }
  }
  return null;
}

/** Cell ids a point rests on, from its lineage: each traced row by each traced column. */
function pointCells(lineage: Lineage[]): string[] {
  return lineageParents(lineage).slice(0, MAX_POINT_CELLS);
}

/**
 * Judges a chart answer by what its figures plot (see the comment at the top of this file):
 * one item per plotted point (the first MAX_POINT_ITEMS of each figure; the rest as one).
 */
export async function verifyChart(input: ChartInput): Promise<ChartGrounding> {
  const now = input.now ?? new Date().toISOString();
  const attempt = chartAttempt(input.attempts, input.cited);
  const figures = attempt ? answerFigures(attempt, input.cited) : [];
  if (!attempt || figures.length === 0) {
    const why = attempt
      ? "the question asks for a chart and the code drew none"
      : "the question asks for a chart and no code ran successfully";
    const note = `${why}: draw it with matplotlib on a figure of its own (fig, ax = plt.subplots())`;
    return {
      checks: [
        {
          item: "chart",
          kind: "text",
          status: "unsupported",
          support: "none",
          supports: [],
          conflicts: [],
          note,
        },
      ],
      cells: [],
      figures: [],
    };
  }
  const sources = await loadTables((input.tables ?? []).map((ref) => ({ evidenceId: null, ref })));
  const indexes = sources.map((s) => rowIndex(s.ref, s.table, input.question));
  const posted = new Map<string, Evidence>();
  const post = (index: RowIndex, cell: PreparedCell): string => {
    const packet = cellEvidence(
      index.ref.name,
      { row: cell.row, value: cell.raw },
      cell.column,
      input.source ?? "checker",
      now,
    );
    posted.set(packet.id, packet);
    return packet.id;
  };
  const checks: ItemCheck[] = [];
  for (const figure of figures) {
    const id = figureId(attempt, figure);
    const axes = drawn(figure);
    const points = axes.flatMap((a) => (a.kind === "pie" ? [] : a.points));
    if (figure.derived !== "yes") {
      const all = axes.flatMap((a) => a.points);
      const typedIn = figure.derived === "no";
      checks.push({
        item: `${id} (${all.length} values)`,
        kind: "number",
        status: "unsupported",
        support: typedIn ? "coincidental" : "none",
        supports: [],
        conflicts: [],
        note: typedIn
          ? `${id} plots values typed into the code, not computed from the table (${figure.derivation}); compute them from the table`
          : `${id}'s values could not be traced to the table: ${figure.derivation}`,
      });
      continue;
    }
    const judged = [...points, ...axes.filter((a) => a.kind === "pie").flatMap((a) => a.points)];
    const items = judged.map((point): ItemCheck => {
      const item = `${pointName(point) || id}: ${plotted(point.value)}`;
      const base = { item, kind: "number" as const, supports: [], conflicts: [] };
      if (point.derived === "no") {
        return {
          ...base,
          status: "unsupported",
          support: "coincidental",
          note: `${id} plots ${plotted(point.value)} at ${JSON.stringify(pointName(point))} whatever the table holds: typed into the code, not computed`,
        };
      }
      let found: CellFinding = null;
      let table: RowIndex | undefined;
      if (points.includes(point)) {
        for (const index of indexes) {
          found = checkCell(point, index, id);
          table = index;
          if (found) break;
        }
      }
      if (found?.kind === "conflict" && table) {
        return {
          ...base,
          status: "conflicted",
          support: "none",
          conflicts: [id, post(table, found.cell)],
          note: found.note,
        };
      }
      const cells = found?.kind === "match" && table ? [post(table, found.cell)] : [];
      return {
        ...base,
        status: "supported",
        support: "derived",
        supports: [id, ...new Set([...cells, ...pointCells(point.lineage)])],
      };
    });
    checks.push(...items.slice(0, MAX_POINT_ITEMS));
    const rest = items.slice(MAX_POINT_ITEMS);
    if (rest.length > 0) checks.push(summarized(id, rest));
  }
  const used = new Set(checks.flatMap((c) => [...c.supports, ...c.conflicts]));
  return {
    checks,
    cells: [...posted.values()].filter((cell) => used.has(cell.id)),
    figures: figures.map((f) => figureId(attempt, f)),
  };
}

/** Notes of one kind given in full per figure; the rest are counted. */
const MAX_NOTES = 4;

/**
 * What the checks found, in words for the verdict: each note, but of notes about points of
 * one figure only the first MAX_NOTES, then how many more.
 */
export function chartIssues(checks: ItemCheck[]): string[] {
  const issues: string[] = [];
  const perFigure = new Map<string, number>();
  for (const check of checks) {
    if (check.status === "supported") continue;
    const note = check.note ?? `${JSON.stringify(check.item)} has no support in the figure`;
    const figure = /^(\S+:fig\d+) plots /.exec(note)?.[1];
    const seen = figure ? (perFigure.get(figure) ?? 0) + 1 : 0;
    if (figure) perFigure.set(figure, seen);
    if (!figure || seen <= MAX_NOTES) issues.push(note);
  }
  for (const [figure, seen] of perFigure) {
    if (seen > MAX_NOTES)
      issues.push(`and ${seen - MAX_NOTES} more values of ${figure} like these`);
  }
  return issues;
}

/** The points past the first MAX_POINT_ITEMS of a figure, as one item: the worst of them. */
function summarized(id: string, rest: ItemCheck[]): ItemCheck {
  const worst =
    rest.find((c) => c.status === "conflicted") ??
    rest.find((c) => c.status === "unsupported") ??
    rest[0];
  return {
    item: `${rest.length} more values of ${id}`,
    kind: "number",
    status: worst?.status ?? "supported",
    support: worst?.support ?? "derived",
    supports: worst?.status === "supported" ? [id] : [],
    conflicts: worst?.status === "conflicted" ? [id] : [],
    ...(worst?.note ? { note: worst.note } : {}),
  };
}
