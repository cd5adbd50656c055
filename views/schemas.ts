import { z } from "zod/mini";

/*
 * What the generative UI components draw (ui/components.tsx), as the graphs push it: LangGraph's
 * typed UI messages (`ui` in the state) whose props are these views. A view is small and
 * self-contained: a window of the table's cells in the user's coordinates, never the table, so
 * that Studio, Agent Chat UI and the page render it without another request. Written with
 * zod/mini, which a browser bundle can shake down to what is used.
 */

/** What a row of the grid is: data, or a row the reading left out of the data. */
export const RowKindSchema = z.enum([
  "header",
  "data",
  "total",
  "note",
  "hidden",
  "title",
  "skipped",
]);
export type RowKind = z.infer<typeof RowKindSchema>;

export const GridRowSchema = z.object({
  /** Where it is in the user's file: the sheet row, the line, the record, the row (1-based). */
  place: z.nullable(z.int().check(z.positive())),
  kind: RowKindSchema,
  /** The data row's id (0-based, as the code sees it); null for a row outside the data. */
  row: z.nullable(z.int().check(z.nonnegative())),
  /** The cells as the file writes them (data and total rows); empty for other kinds. */
  cells: z.array(z.string()),
  /** The words of a note, title or total label; the reason a row is hidden or skipped. */
  text: z.nullable(z.string()),
});
export type GridRow = z.infer<typeof GridRowSchema>;

export const GridColumnSchema = z.object({
  name: z.string(),
  /** Its column letter in a workbook; null elsewhere. */
  letter: z.nullable(z.string()),
  /** The header path, when the header was several rows. */
  path: z.array(z.string()),
  unit: z.nullable(z.string()),
  dtype: z.string(),
});
export type GridColumn = z.infer<typeof GridColumnSchema>;

/** A source cell, by data row id and column name. */
export const CellRefSchema = z.object({ row: z.int().check(z.nonnegative()), column: z.string() });
export type CellRef = z.infer<typeof CellRefSchema>;

export const TableViewSchema = z.object({
  /** The table's name, as the code sees it. */
  table: z.string(),
  /** Where it is: `Sheet "P&L FY2024" of report.xlsx`, `file sales.csv`. */
  source: z.string(),
  /** What the first column counts: `sheet row`, `line`, `record`, `row`. */
  unit: z.string(),
  rows: z.int().check(z.nonnegative()),
  columns: z.array(GridColumnSchema),
  grid: z.array(GridRowSchema),
  /** Source rows not in the window, when the table is longer than it. */
  more: z.int().check(z.nonnegative()),
  /** Why no cell is shown, when none is (a table too large to read here). */
  withheld: z.nullable(z.string()),
  /** Cells lit up: those a result is derived from (its lineage). */
  highlight: z.array(CellRefSchema),
  /** Whole columns lit up, when the lineage names columns but not rows. */
  highlightColumns: z.array(z.string()),
  /** How the table was read, in `inspect`'s words. */
  words: z.array(z.string()),
});
export type TableView = z.infer<typeof TableViewSchema>;

export const VerdictStatusSchema = z.enum(["passed", "not sure", "unchecked"]);

export const AnswerViewSchema = z.object({
  question: z.string(),
  answer: z.string(),
  status: VerdictStatusSchema,
  /** The checker's reasons (its issues), in words. */
  reasons: z.array(z.string()),
  /** Whether the computation answers the question, in one line; null when it was not judged. */
  alignment: z.nullable(z.string()),
  /** 0-1; null when unchecked. */
  confidence: z.nullable(z.number().check(z.gte(0), z.lte(1))),
  plan: z.array(z.string()),
  /** The code the result comes from, with the lines that produced it (1-based, inclusive). */
  code: z.nullable(
    z.object({
      attempt: z.string(),
      text: z.string(),
      lines: z.nullable(z.tuple([z.int(), z.int()])),
    }),
  ),
  /** What the code printed, clipped. */
  output: z.nullable(z.string()),
  /** The SQL queries the evidence cites, with the rows they returned. */
  sql: z.array(z.object({ query: z.string(), table: z.string(), places: z.string() })),
  /** Charts the run drew, as the API serves them (`/artifacts/<sha256>.png`). */
  charts: z.array(z.object({ title: z.string(), src: z.string() })),
  /** The cited cells, in the user's coordinates (`'P&L'!D9:D12`). */
  cells: z.array(z.string()),
  /** The source tables around the cells the result is derived from, those cells lit up. */
  sources: z.array(TableViewSchema),
});
export type AnswerView = z.infer<typeof AnswerViewSchema>;

/** The components, by the names the UI messages carry. */
export const VIEW_NAMES = { table: "table", answer: "answer" } as const;
