import { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { WorkCache } from "../storage/bounded-cache.js";
import type { ColumnStats } from "./cell-index.js";
import { DEFAULT_MAX_CELLS } from "./cell-index.js";
import { packSections, type Section } from "./context-budget.js";
import { columnScore } from "./context-keywords.js";
import { type CellHit, type IndexHit, type Retrieval, retrieve } from "./context-retrieval.js";
import { formatProfile, isLargeTable, summarizeInNode } from "./profile.js";
import { columnFacts, NOTES_HEAD, readingPieces } from "./reading-notes.js";
import { renderTable } from "./render.js";
import { loadTokenizer, type Tokenizer } from "./tokens.js";

/** Cells of a table shown whole are cut only past this many characters. */
const WHOLE_CELL_WIDTH = 200;
/** Tokens set aside for the blank line between two tables' contexts. */
const SEPARATOR_TOKENS = 2;

export const ContextOptionsSchema = z.object({
  /** Tokens the table context may take in the prompt. */
  budgetTokens: z.number().int().min(0),
  /** Rows from the top of a table shown in the retrieved view. */
  sampleRows: z.number().int().min(0).max(50).default(5),
  /** Matching rows shown at most in the retrieved view. */
  maxRows: z.number().int().min(0).max(200).default(20),
  /** Matching cell-index pairs shown per keyword. */
  topK: z.number().int().min(1).max(20).default(3),
  /** The cell index's budget of distinct (column, value) pairs. */
  maxCells: z.number().int().min(0).default(DEFAULT_MAX_CELLS),
  /** Columns shown in the rows of the retrieved view (the most relevant ones). */
  maxRowColumns: z.number().int().min(1).default(12),
  /** Characters a cell or value is cut to in the retrieved view. */
  maxWidth: z.number().int().min(4).default(40),
  /** Force the DuckDB path (true) or the Node path (false); else by isLargeTable. */
  large: z.boolean().optional(),
});
export type ContextOptions = z.input<typeof ContextOptionsSchema>;
type Options = z.output<typeof ContextOptionsSchema>;

/** One table's context for a prompt and what it chose. */
export interface TableContext {
  table: string;
  /** `whole`: every row; `retrieved`: statistics and the rows relevant to the question. */
  view: "whole" | "retrieved";
  text: string;
  /**
   * Tokens `text` takes at most (o200k_base), never more than `budgetTokens`: the exact count
   * when the text had to be measured, else its UTF-8 length, which already fits.
   */
  tokens: number;
  budgetTokens: number;
  /** The question's cell keywords (retrieved view). */
  keywords: string[];
  /** 0-based positions of the matching rows shown (retrieved view). */
  rows: number[];
  /** Matching cells of the rows shown (retrieved view). */
  cells: CellHit[];
  /** Matching cell-index pairs shown (retrieved view). */
  indexCells: IndexHit[];
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function shorten(value: string, maxWidth: number): string {
  const chars = Array.from(value.replace(/\r\n|\r|\n/g, "\\n"));
  return chars.length > maxWidth ? `${chars.slice(0, maxWidth - 1).join("")}…` : chars.join("");
}

function tableHeader(ref: TableRef, rowCount: number, columnCount: number): string {
  return (
    `Table \`${ref.name}\` (pandas DataFrame \`${ref.name}\`): ` +
    `${plural(rowCount, "row")}, ${plural(columnCount, "column")}`
  );
}

/** A whole table's rendering, its UTF-8 length, and its token count once measured. */
interface WholeView {
  text: string;
  bytes: number;
  counted?: number;
}

const wholeViews = new WorkCache<WholeView | null>(32);

/**
 * Tokens of a whole view, as far as `budget` needs to know: no token decodes to less than one
 * byte, so a text of at most `budget` bytes fits without loading the tokenizer (half a second).
 */
async function wholeTokens(view: WholeView, budget: number): Promise<number> {
  return view.bytes <= budget ? view.bytes : countedTokens(view);
}

async function countedTokens(view: WholeView): Promise<number> {
  view.counted ??= (await loadTokenizer()).count(view.text);
  return view.counted;
}

/** The whole table as the prompt shows it, or null when it cannot fit `budget` tokens. */
function wholeView(
  ref: TableRef,
  budget: number,
  large: boolean | undefined,
): Promise<WholeView | null> {
  // Every row is a line of at least one token: a longer table cannot fit.
  if (ref.rows > budget || large) return Promise.resolve(null);
  return wholeViews.obtain(JSON.stringify(ref), async () => {
    if (large === undefined && (await isLargeTable(ref))) return null;
    const summary = await summarizeInNode(ref, ref.rows);
    const lines = [formatProfile(ref, summary, { sampleRows: 0 })];
    if (summary.rowCount > 0) {
      lines.push(`All ${plural(summary.rowCount, "row")} (# is the 0-based row position):`);
      const names = summary.columns.map((column) => column.name);
      lines.push(
        renderTable(names, summary.firstRows, {
          maxRows: summary.rowCount,
          maxWidth: WHOLE_CELL_WIDTH,
          rowNumbers: true,
        }),
      );
    }
    const text = lines.join("\n");
    return { text, bytes: Buffer.byteLength(text) };
  });
}

/** What a column holds: range, true/false counts, or its most frequent values. */
function describeStats(column: ColumnStats, maxWidth: number): string {
  const notes: string[] = [];
  if (column.range) {
    notes.push(`${column.range.low} to ${column.range.high}`);
  } else if (column.booleans) {
    notes.push(`${column.booleans.trueCount} true, ${column.booleans.falseCount} false`);
  } else if (column.distinct === 0) {
    notes.push("no values");
  } else {
    // Values each in one row are examples: their counts would say nothing.
    const repeated = (column.top[0]?.count ?? 0) > 1;
    const top = column.top.map(({ value, count }) => {
      const quoted = JSON.stringify(shorten(value, maxWidth));
      return repeated ? `${quoted} (${count})` : quoted;
    });
    notes.push(
      `${column.distinct} distinct, ${repeated ? "most frequent" : "e.g."} ${top.join(", ")}`,
    );
  }
  if (column.missing > 0) notes.push(`${column.missing} missing`);
  return notes.join("; ");
}

/** The columns the rows show: those with matches, then those the question names, then the first. */
function rowColumns(
  stats: readonly ColumnStats[],
  retrieval: Retrieval,
  maxColumns: number,
): number[] {
  if (stats.length <= maxColumns) return stats.map((_, i) => i);
  const matched = new Set([...retrieval.hits, ...retrieval.indexHits].map((hit) => hit.column));
  const score = (column: ColumnStats, i: number) =>
    (matched.has(column.name) ? 2 : 0) +
    columnScore(column.name, retrieval.columnQueries) +
    (i === 0 ? 0.5 : 0);
  return stats
    .map((column, i) => ({ i, score: score(column, i) }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, maxColumns)
    .map(({ i }) => i)
    .sort((a, b) => a - b);
}

/** A row table split into its two header lines and one line per row. */
function rowLines(
  names: string[],
  rows: { row: number; cells: readonly string[] }[],
  columns: number[],
  maxWidth: number,
): { head: string[]; lines: string[] } {
  const table = renderTable(
    ["#", ...columns.map((c) => names[c] ?? "")],
    rows.map(({ row, cells }) => [String(row), ...columns.map((c) => cells[c] ?? "")]),
    { maxRows: rows.length, maxWidth },
  ).split("\n");
  return { head: table.slice(0, 2), lines: table.slice(2) };
}

/** Priorities of the retrieved view's pieces: lower is kept first. */
const PRIORITY = {
  relevantName: 1,
  otherName: 2,
  relevantStats: 3,
  titles: 3,
  topRows: 3,
  firstCellPerKeyword: 4,
  moreRows: 4,
  noMatch: 4,
  sampleRows: 5,
  notes: 5.5,
  otherStats: 6,
  rest: 7,
} as const;

/** Rows of the retrieved view shown at the higher priority. */
const TOP_ROWS = 3;

async function retrievedView(
  ref: TableRef,
  question: string,
  budget: number,
  opts: Options,
  tokenizer: Tokenizer,
): Promise<TableContext> {
  const retrieval = await retrieve(ref, question, {
    maxRows: opts.maxRows,
    topK: opts.topK,
    maxCells: opts.maxCells,
    large: opts.large,
  });
  const { index } = retrieval.indexed;
  const names = index.columns.map((column) => column.name);
  const matched = new Set([...retrieval.hits, ...retrieval.indexHits].map((hit) => hit.column));
  const relevance = (column: ColumnStats) =>
    Math.max(matched.has(column.name) ? 1 : 0, columnScore(column.name, retrieval.columnQueries));
  const shownColumns = rowColumns(index.columns, retrieval, opts.maxRowColumns);
  const columnNote =
    shownColumns.length < names.length
      ? ` (${shownColumns.length} of ${names.length} columns)`
      : "";

  const facts = new Map(ref.columns.map((column) => [column.name, columnFacts(column)]));
  const reading = readingPieces(ref);
  const sections: Section[] = [];
  sections.push({
    fixed: true,
    head: [
      tableHeader(ref, index.rowCount, names.length),
      ...reading.filter((line) => line.kind === "fact").map((line) => line.text),
      "Too large to show whole: its columns with statistics, then the rows and cells that " +
        "match the question's words. # is the 0-based row position, as pandas counts.",
    ],
    pieces: [],
  });
  sections.push({
    head: ["Columns:"],
    pieces: index.columns.map((column) => {
      const extra = facts.get(column.name);
      const base = `- \`${column.name}\` (${column.dtype})${extra ? ` [${extra}]` : ""}`;
      const stats = describeStats(column, opts.maxWidth);
      const score = relevance(column);
      return {
        text: base,
        priority: score > 0 ? PRIORITY.relevantName : PRIORITY.otherName,
        upgrade: stats
          ? {
              text: `${base}: ${stats}`,
              // The columns the question names best get their statistics first.
              priority: score > 0 ? PRIORITY.relevantStats - score / 10 : PRIORITY.otherStats,
            }
          : undefined,
      };
    }),
  });

  // The file's own words around the data come after the column names, and go first when the
  // budget is tight: a long title or note never crowds out a column's name.
  sections.push({
    head: [],
    pieces: reading
      .filter((line) => line.kind === "title")
      .map((line) => ({ text: line.text, priority: PRIORITY.titles })),
  });
  const notes = reading.filter((line) => line.kind === "note" && line.text !== NOTES_HEAD);
  sections.push({
    head: reading.some((line) => line.text === NOTES_HEAD) ? [NOTES_HEAD] : [],
    pieces: notes.map((line) => ({ text: line.text, priority: PRIORITY.notes })),
  });

  const sample = index.firstRows
    .slice(0, Math.min(opts.sampleRows, index.rowCount))
    .map((cells, row) => ({ row, cells }));
  if (sample.length > 0) {
    const { head, lines } = rowLines(names, sample, shownColumns, opts.maxWidth);
    sections.push({
      head: [`First rows${columnNote}:`, ...head],
      pieces: lines.map((text) => ({ text, priority: PRIORITY.sampleRows })),
    });
  }

  const seenKeyword = new Set<string>();
  const cellSection = sections.length;
  sections.push({
    head: ["Cells that match the question (column = value, rows holding it):"],
    pieces: retrieval.indexHits.map((hit) => {
      const first = !seenKeyword.has(hit.keyword);
      seenKeyword.add(hit.keyword);
      const count = hit.count === null ? "" : ` (${plural(hit.count, "row")})`;
      return {
        text: `- \`${hit.column}\` = ${JSON.stringify(shorten(hit.value, opts.maxWidth))}${count}`,
        priority: first ? PRIORITY.firstCellPerKeyword : PRIORITY.rest,
      };
    }),
  });

  const rowSection = sections.length;
  if (retrieval.rows.length > 0) {
    const { head, lines } = rowLines(names, retrieval.rows, shownColumns, opts.maxWidth);
    sections.push({
      head: [`Rows that match the question, best first${columnNote}:`, ...head],
      pieces: lines.map((text, i) => ({
        text,
        priority: i < TOP_ROWS ? PRIORITY.topRows : i < 10 ? PRIORITY.moreRows : PRIORITY.rest,
      })),
    });
  } else if (retrieval.keywords.length > 0) {
    const words = retrieval.keywords.map((k) => JSON.stringify(k.text)).join(", ");
    sections.push({
      head: [],
      pieces: [
        { text: `No cell matches the question's words (${words}).`, priority: PRIORITY.noMatch },
      ],
    });
  }

  const packed = packSections(sections, budget, tokenizer);
  const keptOf = (section: number) => packed.kept[section] ?? [];
  const rowsShown = retrieval.rows.filter((_, i) => keptOf(rowSection)[i]);
  const shownRows = new Set(rowsShown.map((row) => row.row));
  return {
    table: ref.name,
    view: "retrieved",
    text: packed.text,
    tokens: packed.tokens,
    budgetTokens: budget,
    keywords: retrieval.keywords.map((k) => k.text),
    rows: rowsShown.map((row) => row.row),
    cells: retrieval.hits.filter((hit) => shownRows.has(hit.row)),
    indexCells: retrieval.indexHits.filter((_, i) => keptOf(cellSection)[i]),
  };
}

async function computeContext(
  ref: TableRef,
  question: string,
  opts: Options,
): Promise<TableContext> {
  const budget = opts.budgetTokens;
  const whole = await wholeView(ref, budget, opts.large);
  const tokens = whole ? await wholeTokens(whole, budget) : Number.POSITIVE_INFINITY;
  if (whole && tokens <= budget) {
    return {
      table: ref.name,
      view: "whole",
      text: whole.text,
      tokens,
      budgetTokens: budget,
      keywords: [],
      rows: [],
      cells: [],
      indexCells: [],
    };
  }
  return retrievedView(ref, question, budget, opts, await loadTokenizer());
}

const contexts = new WorkCache<TableContext>(64);

/**
 * One table's context for a prompt within `budgetTokens` tokens: the whole table when its
 * rendering fits, else its columns with statistics and the rows and cells that match the
 * question (TableRAG's schema and cell retrieval, with keywords read from the question).
 * The planner, coder and answerer of a run ask alike, so recent contexts are kept.
 */
export function tableContext(
  ref: TableRef,
  question: string,
  options: ContextOptions,
): Promise<TableContext> {
  const opts = ContextOptionsSchema.parse(options);
  return contexts.obtain(JSON.stringify([ref, question, opts]), () =>
    computeContext(ref, question, opts),
  );
}

/**
 * The contexts of several tables sharing one budget: tables that fit whole in an equal share
 * take only what they need, and what they leave is shared equally among the others (a blank
 * line between two contexts is reserved for too). In the order of `refs`.
 */
export async function tableContexts(
  refs: readonly TableRef[],
  question: string,
  options: ContextOptions,
): Promise<TableContext[]> {
  const opts = ContextOptionsSchema.parse(options);
  if (refs.length <= 1) {
    return Promise.all(refs.map((ref) => tableContext(ref, question, opts)));
  }
  const available = Math.max(opts.budgetTokens - SEPARATOR_TOKENS * (refs.length - 1), 0);
  const views = await Promise.all(refs.map((ref) => wholeView(ref, available, opts.large)));
  // When all of them fit by their bytes, every table is shown whole and nothing is counted.
  const allFit = views.reduce((sum, view) => sum + (view?.bytes ?? Infinity), 0) <= available;
  const needs = await Promise.all(
    views.map((view) =>
      !view ? Number.POSITIVE_INFINITY : allFit ? view.bytes : countedTokens(view),
    ),
  );
  const shares = refs.map(() => 0);
  let left = available;
  const order = needs.map((need, i) => ({ need, i })).sort((a, b) => a.need - b.need || a.i - b.i);
  for (const [k, { need, i }] of order.entries()) {
    const share = Math.floor(left / (order.length - k));
    shares[i] = Math.min(need, share);
    left -= shares[i] ?? 0;
  }
  return Promise.all(
    refs.map((ref, i) => tableContext(ref, question, { ...opts, budgetTokens: shares[i] ?? 0 })),
  );
}
