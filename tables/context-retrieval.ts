import { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { localArtifact } from "../storage/artifacts.js";
import { WorkCache } from "../storage/bounded-cache.js";
import {
  buildIndexInNode,
  DEFAULT_MAX_CELLS,
  keepIndex,
  keptIndex,
  type TableIndex,
} from "./cell-index.js";
import type { RowCondition, RowSearch } from "./cell-index-duckdb.js";
import {
  type Keyword,
  type MatchKind,
  matchCell,
  matchScore,
  normalizeText,
  questionTerms,
} from "./context-keywords.js";
import { isNumericDtype, numericValue } from "./dtypes.js";
import { isLargeTable } from "./profile.js";
import { readTable } from "./read.js";

/** A cell that matches a keyword of the question. */
export interface CellHit {
  /** 0-based row position, as pandas counts. */
  row: number;
  column: string;
  value: string;
  keyword: string;
  match: MatchKind;
  score: number;
}

export interface RetrievedRow {
  row: number;
  cells: string[];
  score: number;
}

/** A (column, value) pair of the cell index that matches a keyword. */
export interface IndexHit {
  column: string;
  value: string;
  /** Rows holding the value; null when the pair is not in the (capped) index. */
  count: number | null;
  keyword: string;
  match: MatchKind;
}

export interface Retrieval {
  keywords: Keyword[];
  columnQueries: string[];
  /** Best rows first, at most the limit asked for. */
  rows: RetrievedRow[];
  /** The matching cells of those rows, best first. */
  hits: CellHit[];
  /** Matching pairs of the cell index (and of the rows found), top-k per keyword. */
  indexHits: IndexHit[];
}

/** A table's index and the way to search its rows; one per table content, shared by nodes. */
export interface IndexedTable {
  index: TableIndex;
  rows: RowSearch | { all: readonly string[][] };
  large: boolean;
}

const indexes = new WorkCache<IndexedTable>(8);

/**
 * The index of a table, built once per content (sha256), column types and cell budget: kept
 * on disk already (a large CSV's, made by the sandbox at ingest), or built through DuckDB for a
 * table past the large-table threshold, never parsed whole in Node, or else in Node.
 */
export function indexedTable(
  ref: TableRef,
  opts: { maxCells?: number; large?: boolean } = {},
): Promise<IndexedTable> {
  const maxCells = opts.maxCells ?? DEFAULT_MAX_CELLS;
  const key = JSON.stringify([ref.sha256, ref.columns, maxCells, opts.large ?? null]);
  return indexes.obtain(key, () => buildIndexed(ref, maxCells, opts.large));
}

async function buildIndexed(
  ref: TableRef,
  maxCells: number,
  large: boolean | undefined,
): Promise<IndexedTable> {
  // An index kept on disk (by ingest from the sandbox's DataFrame, or by an earlier build in
  // DuckDB, in any process) spares the build, and Node never reads the table whole.
  const kept = large === false ? null : await keptIndex(ref, maxCells);
  // DuckDB's native module takes ~200 ms to load: only large tables pay for it.
  const duckDb = () => import("./cell-index-duckdb.js");
  if (kept) {
    const { DuckDbTable } = await duckDb();
    const rows = DuckDbTable.scanning({ ...ref, uri: await localArtifact(ref) });
    return { index: kept, rows, large: true };
  }
  if (large ?? (await isLargeTable(ref))) {
    const { DuckDbTable } = await duckDb();
    const { table, index } = await DuckDbTable.open(ref, maxCells);
    await keepIndex(ref, maxCells, index);
    return { index, rows: table, large: true };
  }
  const data = await readTable(ref);
  const dtypes = data.columns.map((_, i) => ref.columns[i]?.dtype ?? "object");
  return {
    index: buildIndexInNode(data, dtypes, maxCells),
    rows: { all: data.rows },
    large: false,
  };
}

/** Weighs a match by how rare its value is: a value in every row says little. */
function rarity(count: number | undefined): number {
  return 1 / (1 + Math.log10(Math.max(count ?? 1, 1)));
}

/** Scores cells against keywords, remembering each distinct (column, value). */
class CellScorer {
  private readonly counts = new Map<string, number>();
  private readonly memo = new Map<string, { keyword: number; kind: MatchKind; score: number }[]>();

  constructor(
    index: TableIndex,
    private readonly keywords: readonly Keyword[],
  ) {
    for (const cell of index.cells)
      this.counts.set(`${cell.column}\u0000${cell.value}`, cell.count);
  }

  count(column: number, value: string): number | undefined {
    return this.counts.get(`${column}\u0000${value}`);
  }

  /** Every keyword the cell matches, with its points. */
  matches(column: number, value: string): { keyword: number; kind: MatchKind; score: number }[] {
    const key = `${column}\u0000${value}`;
    const known = this.memo.get(key);
    if (known) return known;
    const text = normalizeText(value);
    const weight = rarity(this.count(column, value));
    const found = this.keywords.flatMap((keyword, k) => {
      const kind = matchCell(keyword, text);
      return kind ? [{ keyword: k, kind, score: matchScore(keyword, kind) * weight }] : [];
    });
    if (this.memo.size > 200_000) this.memo.clear();
    this.memo.set(key, found);
    return found;
  }

  /** A row's score: for each keyword its best cell, summed. */
  rowScore(cells: readonly string[]): number {
    const best = new Map<number, number>();
    for (const [c, value] of cells.entries()) {
      if (!value) continue;
      for (const match of this.matches(c, value)) {
        best.set(match.keyword, Math.max(best.get(match.keyword) ?? 0, match.score));
      }
    }
    let total = 0;
    for (const score of best.values()) total += score;
    return total;
  }
}

const MAX_VALUES_PER_KEYWORD = 32;

/** Conditions that find candidate rows in DuckDB: index values, else a substring scan. */
function conditionsFor(index: TableIndex, keywords: readonly Keyword[]): RowCondition[] {
  const conditions: RowCondition[] = [];
  keywords.forEach((keyword, k) => {
    const equals: RowCondition[] = [];
    for (const cell of index.cells) {
      const kind = matchCell(keyword, normalizeText(cell.value));
      if (!kind) continue;
      const weight = matchScore(keyword, kind) * rarity(cell.count);
      const { column } = cell;
      // A number is looked for by value: the index may spell it as pandas does, not as the file.
      const number = isNumericDtype(index.columns[column]?.dtype ?? "")
        ? numericValue(cell.value)
        : null;
      equals.push(
        number !== null && Number.isFinite(number)
          ? { column, keyword: k, weight, kind: "number", value: number }
          : { column, keyword: k, weight, kind: "equals", value: cell.value },
      );
    }
    // A word inside many indexed values would make a huge query: keep its best values.
    conditions.push(...equals.sort((a, b) => b.weight - a.weight).slice(0, MAX_VALUES_PER_KEYWORD));
    for (const [c, column] of index.columns.entries()) {
      if (index.complete[c]) continue;
      const numeric = isNumericDtype(column.dtype);
      const weight = matchScore(keyword, "partial");
      if (numeric && keyword.number !== undefined) {
        conditions.push({ column: c, keyword: k, weight, kind: "number", value: keyword.number });
      } else if (!numeric && keyword.text.length >= 2) {
        conditions.push({ column: c, keyword: k, weight, kind: "contains", text: keyword.text });
      }
    }
  });
  return conditions;
}

/** Keeps the `limit` best of `rows` by score, then row order. */
function best(rows: RetrievedRow[], limit: number): RetrievedRow[] {
  return rows
    .filter((row) => row.score > 0)
    .sort((a, b) => b.score - a.score || a.row - b.row)
    .slice(0, limit);
}

/** The cell index's pairs matching each keyword: exact before partial, then most frequent. */
function matchIndex(
  index: TableIndex,
  keywords: readonly Keyword[],
  topK: number,
  rows: readonly RetrievedRow[],
  scorer: CellScorer,
): IndexHit[] {
  const hits: IndexHit[] = [];
  const seen = new Set<string>();
  for (const [k, keyword] of keywords.entries()) {
    const found: (IndexHit & { order: number })[] = [];
    for (const cell of index.cells) {
      const match = matchCell(keyword, normalizeText(cell.value));
      if (!match) continue;
      const column = index.columns[cell.column]?.name ?? "";
      found.push({
        column,
        value: cell.value,
        count: cell.count,
        keyword: keyword.text,
        match,
        order: 0,
      });
    }
    // Pairs of incomplete columns that only the row search found.
    for (const row of rows) {
      for (const [c, value] of row.cells.entries()) {
        if (index.complete[c] || !value) continue;
        const match = scorer.matches(c, value).find((m) => m.keyword === k);
        if (!match) continue;
        const column = index.columns[c]?.name ?? "";
        found.push({
          column,
          value,
          count: scorer.count(c, value) ?? null,
          keyword: keyword.text,
          match: match.kind,
          order: 1,
        });
      }
    }
    found.sort(
      (a, b) =>
        (a.match === "exact" ? 0 : 1) - (b.match === "exact" ? 0 : 1) ||
        a.order - b.order ||
        (b.count ?? 0) - (a.count ?? 0),
    );
    let taken = 0;
    for (const { order: _, ...hit } of found) {
      const key = `${hit.column}\u0000${hit.value}`;
      if (taken >= topK || seen.has(key)) continue;
      seen.add(key);
      hits.push(hit);
      taken++;
    }
  }
  return hits;
}

export const RetrieveOptionsSchema = z.object({
  /** Rows returned, best first. */
  maxRows: z.number().int().min(0).default(20),
  /** Index pairs kept per keyword. */
  topK: z.number().int().min(1).default(3),
  /** Keywords read from the question. */
  maxKeywords: z.number().int().min(1).default(16),
  /** The cell index's budget of distinct (column, value) pairs. */
  maxCells: z.number().int().min(0).default(DEFAULT_MAX_CELLS),
  /** Force the DuckDB path (true) or the Node path (false); else by isLargeTable. */
  large: z.boolean().optional(),
});
export type RetrieveOptions = z.input<typeof RetrieveOptionsSchema>;

/**
 * The rows and cells of a table that match a question's keywords, from its cached index:
 * rows scored by their best match per keyword (exact over partial, rare values over common
 * ones), at most `maxRows`, and the index pairs that match, `topK` per keyword.
 */
export async function retrieve(
  ref: TableRef,
  question: string,
  options: RetrieveOptions = {},
): Promise<Retrieval & { indexed: IndexedTable }> {
  const opts = RetrieveOptionsSchema.parse(options);
  const indexed = await indexedTable(ref, { maxCells: opts.maxCells, large: opts.large });
  const { index } = indexed;
  const terms = questionTerms(question, opts.maxKeywords);
  // A keyword spelled as a column's name asks for the column, not for a cell.
  const names = new Set(index.columns.map((column) => normalizeText(column.name)));
  const keywords = terms.cellKeywords.filter((keyword) => !names.has(keyword.text));
  const scorer = new CellScorer(index, keywords);
  let rows: RetrievedRow[] = [];
  if (keywords.length > 0 && opts.maxRows > 0) {
    if ("all" in indexed.rows) {
      const scored: RetrievedRow[] = [];
      for (const [row, cells] of indexed.rows.all.entries()) {
        const score = scorer.rowScore(cells);
        if (score > 0) scored.push({ row, cells, score });
      }
      rows = best(scored, opts.maxRows);
    } else {
      // DuckDB ranks candidates roughly; the exact scores here pick the best of them.
      const found = await indexed.rows.search(
        conditionsFor(index, keywords),
        Math.max(opts.maxRows * 4, 50),
      );
      rows = best(
        found.map(({ row, cells }) => ({ row, cells, score: scorer.rowScore(cells) })),
        opts.maxRows,
      );
    }
  }
  const hits: CellHit[] = [];
  for (const { row, cells } of rows) {
    for (const [c, value] of cells.entries()) {
      if (!value) continue;
      const top = [...scorer.matches(c, value)].sort((a, b) => b.score - a.score)[0];
      if (!top) continue;
      hits.push({
        row,
        column: index.columns[c]?.name ?? "",
        value,
        keyword: keywords[top.keyword]?.text ?? "",
        match: top.kind,
        score: top.score,
      });
    }
  }
  hits.sort((a, b) => b.score - a.score || a.row - b.row);
  return {
    keywords,
    columnQueries: terms.columnQueries,
    rows,
    hits,
    indexHits: matchIndex(index, keywords, opts.topK, rows, scorer),
    indexed,
  };
}

/**
 * The cells of a table that best match a query (a sub-question or a few words): for a
 * `lookup` worker. At most `k` hits, best first, each with its 0-based row.
 */
export async function retrieveCells(
  ref: TableRef,
  query: string,
  opts: { k?: number; maxCells?: number; large?: boolean } = {},
): Promise<CellHit[]> {
  const k = z
    .number()
    .int()
    .min(1)
    .parse(opts.k ?? 10);
  const found = await retrieve(ref, query, {
    maxRows: k,
    maxCells: opts.maxCells,
    large: opts.large,
  });
  return found.hits.slice(0, k);
}
