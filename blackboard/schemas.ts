import { z } from "zod";

/** A column as the blackboard knows it: its name and a pandas-style dtype. */
export const ColumnSchema = z.object({
  name: z.string(),
  dtype: z.string(),
  /** The header cells the name was made of, top to bottom, when the header had several rows. */
  path: z.array(z.string().max(300)).max(8).optional(),
  /** The unit of the values: from the header (`(USD m)`, `%`) or from the cells (`$` -> USD). */
  unit: z.string().max(40).optional(),
  /** How the cells' text was read, for the context: `currency "$1,250,400" -> 1250400`. */
  reading: z.string().max(200).optional(),
  /** Some cells are formulas, read from the values the workbook stored with them. */
  formula: z.boolean().optional(),
  /**
   * The header cell a renamed column stands for (a repeated name, one differing only in case, a
   * missing one), for the context: `the header's second "value" (column 3)`.
   */
  source: z.string().max(300).optional(),
});
export type Column = z.infer<typeof ColumnSchema>;

/** The most runs a RowPlaces keeps, so that a table's origin stays small in a checkpoint. */
export const MAX_ROW_RUNS = 500;

/**
 * Where a table's rows lie in its source, as runs: data row r (0-based, the DataFrame's default
 * index) lies at `at + (r - row)` for the last run `[row, at]` with `row <= r`. Rows one after
 * another (every CSV row on one line, no blank line or title between them) make one run
 * `[0, first]`; a quoted line break or a skipped line starts a new run. At most MAX_ROW_RUNS
 * runs are kept: past them `known` is the first row whose place was not recorded.
 */
export const RowPlacesSchema = z.object({
  /** `[row, at]` pairs, rows ascending from 0; `at` is 1-based (a file line, a sheet row). */
  runs: z
    .array(z.tuple([z.number().int().nonnegative(), z.number().int().positive()]))
    .max(MAX_ROW_RUNS),
  /** Rows from this one on have no recorded place; absent when every row has one. */
  known: z.number().int().nonnegative().optional(),
});
export type RowPlaces = z.infer<typeof RowPlacesSchema>;

/**
 * How a loaded table's row ids and column names map to the coordinates its user knows, so a
 * citation can name `'P&L FY2024'!D9` or `medals.csv line 4` instead of row 3 of a DataFrame.
 * `file` is the file's name without its directory. Sizes are bounded: per-row facts are runs
 * (RowPlaces), and a workbook's column letters are one per column, as `columns` is.
 */
export const TableOriginSchema = z.discriminatedUnion("format", [
  /** A CSV or TSV file: the physical line each row starts on. */
  z.object({
    format: z.enum(["csv", "tsv"]),
    file: z.string(),
    /** 1-based line of the header. */
    header: z.number().int().positive(),
    /** The 1-based line each data row starts on; null when the loader could not tell. */
    lines: RowPlacesSchema.nullable(),
  }),
  /** A sheet of a workbook: A1 coordinates, title and blank rows skipped, the used range's offset kept. */
  z.object({
    format: z.enum(["xlsx", "xlsm", "xls"]),
    file: z.string(),
    sheet: z.string(),
    /** The sheet row (1-based) of the header. */
    header: z.number().int().positive(),
    /** The sheet row (1-based) of each data row. */
    rows: RowPlacesSchema,
    /** The column letter (`A`, `AB`) of each of the table's columns, in their order. */
    columns: z.array(z.string().regex(/^[A-Z]+$/)),
  }),
  /** A JSON file: row r is item r of the array at `pointer`. */
  z.object({
    format: z.literal("json"),
    file: z.string(),
    /** JSON Pointer of the array of rows: `""` for a top-level array of records, `/data` for `{columns, data}`. */
    pointer: z.string(),
    /** `records`: each row an object keyed by column; `rows`: a list of values in `columns` order. */
    shape: z.enum(["records", "rows"]),
  }),
  /** A Parquet file: row r is the file's row r (1-based r + 1). */
  z.object({ format: z.literal("parquet"), file: z.string() }),
  /**
   * Rows passed inline (`{columns, data}`): row r is `data[r]`, or, when rows were left out
   * (header rows, totals), `data[p - 1]` for its place p in `rows`.
   */
  z.object({ format: z.literal("inline"), rows: RowPlacesSchema.optional() }),
]);
export type TableOrigin = z.infer<typeof TableOriginSchema>;

/** A place in the user's file: a sheet row, a file line, an inline data row (1-based). */
const PlaceSchema = z.number().int().positive();
/** Places listed at most, per kind, so that a reading stays small in a checkpoint. */
export const MAX_LISTED_PLACES = 200;

/**
 * How a table was read from its file when the reader did more than take the first row as the
 * header: the title above it, the header rows flattened into paths, the rows left out of the
 * data (totals, notes, hidden ones) and where the literal text of the cells is kept. Absent for
 * a literal reading (`raw`) of a file that needed nothing of this.
 */
export const TableReadingSchema = z.object({
  /** Title or caption lines above the header. */
  title: z.array(z.string().max(500)).max(10).optional(),
  /** The places of the header rows (several when the header was flattened into paths). */
  headerRows: z.array(PlaceSchema).max(20).optional(),
  /** Total and subtotal rows, left out of the data; `table` holds them with the same columns. */
  totals: z
    .object({
      rows: z.array(PlaceSchema).max(MAX_LISTED_PLACES),
      labels: z.array(z.string().max(200)).max(MAX_LISTED_PLACES),
      table: z.string().optional(),
    })
    .optional(),
  /** Notes, footnotes and sources below or beside the data, left out of it. */
  notes: z
    .array(z.object({ row: PlaceSchema, text: z.string().max(500) }))
    .max(20)
    .optional(),
  /** Hidden rows and columns of the sheet, left out; hidden sheets of the workbook, not loaded. */
  hidden: z
    .object({
      rows: z.array(PlaceSchema).max(MAX_LISTED_PLACES).optional(),
      columns: z.array(z.string().max(40)).max(MAX_LISTED_PLACES).optional(),
      sheets: z.array(z.string().max(200)).max(50).optional(),
    })
    .optional(),
  /** Leading rows skipped because the reading was told to (`skipRows`). */
  skipped: z.array(PlaceSchema).max(MAX_LISTED_PLACES).optional(),
  /** Rows inside the data that repeat the header (a printout's page breaks), left out. */
  repeatedHeaders: z.array(PlaceSchema).max(MAX_LISTED_PLACES).optional(),
  /** A column added from hierarchical row labels (section rows or indented labels). */
  groupColumn: z.string().optional(),
  /** The cells' literal text, same rows and columns as the table, for citations. */
  text: z.object({ uri: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
  /** Sheets of the workbook holding words about the others, not data: not loaded. */
  asideSheets: z
    .array(
      z.object({
        sheet: z.string().max(200),
        kind: z.enum(["contents", "notes"]),
        /** Its first lines, clipped. */
        lines: z.array(z.string().max(300)).max(3),
      }),
    )
    .max(50)
    .optional(),
  /** Tables made from this one's lists of records (JSON), by column. */
  children: z
    .array(z.object({ column: z.string(), table: z.string() }))
    .max(50)
    .optional(),
});
export type TableReading = z.infer<typeof TableReadingSchema>;

/**
 * A table travels by reference: the bytes live in the content-addressed artifact
 * directory under `uri`, so a checkpoint never holds table contents.
 */
export const TableRefSchema = z.object({
  id: z.string(),
  name: z.string(),
  uri: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  rows: z.number().int().nonnegative(),
  columns: z.array(ColumnSchema),
  /** Where the rows and columns are in the user's file, for citations; absent for tables code produced. */
  origin: TableOriginSchema.optional(),
  /** How the file was read (titles, header paths, totals, notes, hidden parts). */
  reading: TableReadingSchema.optional(),
});
export type TableRef = z.infer<typeof TableRefSchema>;

export const AnchorSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("cells"),
    table: z.string(),
    rows: z.array(z.number().int().nonnegative()),
    columns: z.array(z.string()),
  }),
  z.object({
    kind: z.literal("code"),
    attempt: z.string(),
    /** 1-based, inclusive line range of the attempt's code. */
    lines: z.tuple([z.number().int(), z.number().int()]),
    /** Character offsets [start, end) into the attempt's stdout; [0, 0] when none. */
    stdout: z.tuple([z.number().int(), z.number().int()]),
  }),
  z.object({
    kind: z.literal("sql"),
    query: z.string(),
    table: z.string(),
    rowIds: z.array(z.number().int()),
  }),
  z.object({
    kind: z.literal("text"),
    source: z.string(),
    span: z.tuple([z.number().int(), z.number().int()]),
  }),
]);
export type Anchor = z.infer<typeof AnchorSchema>;

export const EvidenceValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  TableRefSchema,
]);
export type EvidenceValue = z.infer<typeof EvidenceValueSchema>;

export const EvidenceSchema = z.object({
  id: z.string(),
  modality: z.enum(["table", "code", "sql", "text", "memory", "figure"]),
  source: z.string(),
  anchor: AnchorSchema,
  value: EvidenceValueSchema,
  unit: z.string().optional(),
  time: z.string(),
  provenance: z.object({
    attempt: z.string(),
    parents: z.array(z.string()),
  }),
  confidence: z.number().min(0).max(1),
});
export type Evidence = z.infer<typeof EvidenceSchema>;

export const ClaimSchema = z.object({
  id: z.string(),
  text: z.string(),
  evidence: z.array(z.string()),
  status: z.enum(["supported", "conflicted", "unsupported"]),
});
export type Claim = z.infer<typeof ClaimSchema>;

export const EdgeSchema = z.object({
  from: z.string(),
  to: z.string(),
  kind: z.enum(["supports", "conflicts", "aligns", "depends"]),
});
export type Edge = z.infer<typeof EdgeSchema>;

export const ExecErrorSchema = z.object({
  type: z.string(),
  message: z.string(),
  /** 1-based line of the generated code where it was raised, when known. */
  line: z.number().int().nullable(),
});
export type ExecError = z.infer<typeof ExecErrorSchema>;

/** One contiguous piece of stdout and the line of generated code that wrote it. */
export const OutputSpanSchema = z.object({
  line: z.number().int(),
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
});
export type OutputSpan = z.infer<typeof OutputSpanSchema>;

export type ProducedTable = z.infer<typeof ProducedTableSchema>;

/** A source table's rows and columns that a result comes from; null where lineage is unknown. */
export const LineageSchema = z.object({
  /** The source table's name (as the code sees it). */
  table: z.string(),
  /** Source row ids (0-based positions in the table as ingested); null: not traced. */
  rows: z.array(z.number().int().nonnegative()).nullable(),
  /** Source columns read; null: not traced. */
  columns: z.array(z.string()).nullable(),
});
export type Lineage = z.infer<typeof LineageSchema>;

/** A DataFrame that the code left behind, with the line that last assigned it. */
export const ProducedTableSchema = z.object({
  variable: z.string(),
  line: z.number().int().nullable(),
  table: TableRefSchema,
  /** Which source rows and columns it comes from, where pandas kept the link. */
  lineage: z.array(LineageSchema).default([]),
});

/** A scalar as a result holds it. */
export const ResultScalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type ResultScalar = z.infer<typeof ResultScalarSchema>;

/**
 * What the code computed, as a typed value: the value it assigned to \`result\`, else the last
 * value it printed. \`derived\` says whether it depends on the tables: "yes" when a re-run on
 * perturbed copies of the tables changed it, "no" when it did not (a literal, or code that
 * reads only metadata) or the code is not deterministic, "unknown" when that could not be
 * tried (no table, out of time, the run failed).
 */
export const CodeResultSchema = z.object({
  from: z.enum(["declared", "printed"]),
  kind: z.enum(["scalar", "list", "series", "frame"]),
  /** Scalar: one element. List/series: the values in order. Frame: its cells row by row. */
  values: z.array(ResultScalarSchema),
  /** A series' index labels (or a frame's), when they are not positions; else empty. */
  labels: z.array(ResultScalarSchema),
  /** A short text form, for prompts and reports. */
  text: z.string(),
  /** Line of the code that assigned (or printed) it; null when unknown. */
  line: z.number().int().nullable(),
  derived: z.enum(["yes", "no", "unknown"]),
  /** Why derived is what it is, in words. */
  derivation: z.string(),
  /** Per source table: which rows and columns the result depends on. */
  lineage: z.array(LineageSchema),
});
export type CodeResult = z.infer<typeof CodeResultSchema>;

/** The chart types TableBench's Visualization parser reads a figure as. */
export const ChartKindSchema = z.enum([
  "line",
  "bar",
  "hbar",
  "pie",
  "area",
  "radar",
  "scatter",
  "waterfall",
]);
export type ChartKind = z.infer<typeof ChartKindSchema>;

/** Values a figure's reading holds at most, and points an axes describes, and figures a run keeps. */
export const MAX_READING_VALUES = 5_000;
export const MAX_PLOT_POINTS = 500;
export const MAX_FIGURES = 10;

/** A drawn number: NaN is null, infinities are "inf" and "-inf" (JSON has neither). */
export const PlotValueSchema = z.union([z.number(), z.null(), z.enum(["inf", "-inf"])]);
export type PlotValue = z.infer<typeof PlotValueSchema>;

/**
 * What the parser's reading of one chart type gives, as its helpers return it (bar heights,
 * or one list per line), each value rounded to 2 places as its comparison rounds it (numpy's
 * rounding for a numpy number, Python's for Python's); null when that reading raises or meets
 * a value that is no number.
 */
export const ChartReadingSchema = z
  .array(z.union([PlotValueSchema, z.array(PlotValueSchema).max(MAX_READING_VALUES)]))
  .max(MAX_READING_VALUES)
  .nullable();
export type ChartReading = z.infer<typeof ChartReadingSchema>;

/** One value a figure plots, at its category (or x), and what it rests on. */
export const PlotPointSchema = z.object({
  /** Which bar container, line or collection of the axes drew it (0-based). */
  series: z.number().int().nonnegative(),
  /** The category (or x value, or pie label) it stands at. */
  label: ResultScalarSchema,
  value: PlotValueSchema,
  /**
   * "yes" when re-runs on perturbed tables changed it; "no" when they changed the points
   * beside it and never it (typed in), or nothing of the figure; "unknown" when not traced.
   */
  derived: z.enum(["yes", "no", "unknown"]).default("unknown"),
  /** The source rows and columns it rests on (rows: removing one changed or removed it). */
  lineage: z.array(LineageSchema).default([]),
});
export type PlotPoint = z.infer<typeof PlotPointSchema>;

/** One axes of a figure. */
export const FigureAxesSchema = z.object({
  title: z.string(),
  xlabel: z.string(),
  ylabel: z.string(),
  /** The chart type that fits what it draws; null when it draws nothing readable. */
  kind: ChartKindSchema.nullable(),
  /** pyplot's current axes (`plt.gca()`) when the run ended: what the parser reads. */
  current: z.boolean(),
  /** Every reading the parser can take of it, by chart type (waterfall reads as bar), rounded. */
  readings: z.partialRecord(ChartKindSchema, ChartReadingSchema),
  /** The values of its own kind's reading, each at its category. */
  points: z.array(PlotPointSchema).max(MAX_PLOT_POINTS),
});
export type FigureAxes = z.infer<typeof FigureAxesSchema>;

/** A file of a figure in the artifact store: `<sha256>.png` or `<sha256>.svg`. */
export const FigureFileSchema = z.object({
  format: z.enum(["png", "svg"]),
  uri: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
});
export type FigureFile = z.infer<typeof FigureFileSchema>;

/** A matplotlib figure the code left open, read and saved by the sandbox (figures.py). */
export const FigureSchema = z.object({
  /** `fig1`, `fig2`: in the order the code made them; the evidence id is `<attempt>:<id>`. */
  id: z.string(),
  /** matplotlib's figure number. */
  number: z.number().int(),
  title: z.string(),
  /** pyplot's current figure when the run ended. */
  current: z.boolean(),
  axes: z.array(FigureAxesSchema),
  files: z.array(FigureFileSchema),
  /** Whether what it plots depends on the tables (as CodeResult.derived, by re-runs). */
  derived: z.enum(["yes", "no", "unknown"]),
  derivation: z.string(),
  /** Per source table: the rows and columns its plotted values (and labels) rest on. */
  lineage: z.array(LineageSchema),
});
export type Figure = z.infer<typeof FigureSchema>;

export const ExecResultSchema = z.object({
  ok: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  error: ExecErrorSchema.nullable(),
  /** Intermediate tables, by reference. */
  tables: z.array(ProducedTableSchema),
  /** Which code line wrote which part of stdout. */
  spans: z.array(OutputSpanSchema),
  truncated: z.boolean(),
  durationMs: z.number().nonnegative(),
  /** What the code computed, with its lineage; null when the run failed or produced nothing. */
  result: CodeResultSchema.nullable().default(null),
  /** The figures the code drew, with their files and plotted values; absent when it drew none. */
  figures: z.array(FigureSchema).max(MAX_FIGURES).optional(),
});
export type ExecResult = z.infer<typeof ExecResultSchema>;

export const AttemptSchema = z.object({
  id: z.string(),
  code: z.string(),
  /** The model's full reply, kept for traces and training exports. */
  raw: z.string(),
  result: ExecResultSchema.nullable(),
  /** Why the attempt produced no runnable code, when it did not. */
  parseError: z.string().nullable(),
  /** The query the code was compiled from, when the coder wrote one (coderDialect). */
  query: z.string().max(2000).optional(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

export const AnswerSchema = z.object({
  raw: z.string(),
  final: z.string(),
  evidence: z.array(z.string()),
});
export type Answer = z.infer<typeof AnswerSchema>;

/** What kind of answer the question asks for; the checker infers it from the question. */
export const AnswerTypeSchema = z.enum(["number", "list", "yesno", "date", "entity", "text"]);
export type AnswerType = z.infer<typeof AnswerTypeSchema>;

/** How an answer's item rests on the evidence (see Verdict.support). */
export const SupportKindSchema = z.enum(["derived", "looked-up", "coincidental", "none"]);
export type SupportKind = z.infer<typeof SupportKindSchema>;

/** A 0-2 score, as MAPLE's checker gives them: 0 wrong, 1 doubtful, 2 right. */
const Score = z.number().int().min(0).max(2);

/** The checker's judgement of one answer. */
/** One thing the question asks held against the computation (grounding/alignment.ts). */
export const AlignmentFindingSchema = z.object({
  aspect: z.enum(["columns", "rows", "operation", "extreme", "cardinality", "scale", "totals"]),
  conflict: z.boolean(),
  text: z.string(),
});
export type AlignmentFinding = z.infer<typeof AlignmentFindingSchema>;

/**
 * Whether the computation answers the question: "aligned" when what could be held against it
 * agrees, "conflicted" when something does not, "unknown" when nothing could be held against it.
 */
export const AlignmentSchema = z.object({
  status: z.enum(["aligned", "conflicted", "unknown"]),
  /** In words: what the result is and how it stands against the question. */
  summary: z.string(),
  findings: z.array(AlignmentFindingSchema),
});
export type Alignment = z.infer<typeof AlignmentSchema>;

export const VerdictSchema = z.object({
  /** The answer judged (its final text). */
  answer: z.string(),
  expectedType: AnswerTypeSchema,
  scores: z.object({ type: Score, format: Score, grounding: Score }),
  /** Each problem in words the reflector and the user can act on. */
  issues: z.array(z.string()),
  pass: z.boolean(),
  /** Who judged: the deterministic checks alone, or also a model. */
  by: z.enum(["rules", "rules+llm"]),
  /** Claims made from the answer (ids into `claims`). */
  claims: z.array(z.string()),
  /**
   * The weakest support of the answer's items: derived from the code's result, looked up in
   * a source cell the question identifies, or coincidental (the value merely occurs somewhere,
   * never support); none when an item has nothing at all or is contradicted.
   */
  support: SupportKindSchema.default("none"),
  /** How likely the answer is right, 0-1, from what is known (support, retries, votes). */
  confidence: z.number().min(0).max(1).default(0),
  /** False when the confidence is below the run's threshold: the run says it is not sure. */
  sure: z.boolean().default(false),
  /** Whether the computation answers the question; absent when no code result was judged. */
  alignment: AlignmentSchema.optional(),
  /**
   * The answer holds no claim that can be checked (open prose): it is given as answered but
   * unchecked, neither passed nor refused, and not reflected on.
   */
  unchecked: z.boolean().default(false),
});
export type Verdict = z.infer<typeof VerdictSchema>;

/** The reflector's diagnosis of a failed verdict and where the run goes next. */
export const ReflectionSchema = z.object({
  id: z.string(),
  diagnosis: z.string(),
  improvement: z.array(z.string()),
  /** `planner`: the plan was wrong; `coder`: the plan was fine, the code or its reading was not. */
  route: z.enum(["planner", "coder"]),
  verdict: VerdictSchema,
  /** How many code attempts existed when it was made: the code retry bound counts from here. */
  afterAttempts: z.number().int().nonnegative(),
  /** False when the model's reply was unusable and the diagnosis was built from the verdict. */
  byModel: z.boolean(),
});
export type Reflection = z.infer<typeof ReflectionSchema>;

/** An answer that was checked, kept so the best one can be returned when reflections run out. */
export const CheckedAnswerSchema = z.object({
  id: z.string(),
  answer: AnswerSchema,
  verdict: VerdictSchema,
});
export type CheckedAnswer = z.infer<typeof CheckedAnswerSchema>;

/** A lesson from a past episode, as recalled from long-term memory. */
export const MemorySchema = z.object({
  key: z.string(),
  namespace: z.array(z.string()),
  question: z.string(),
  pattern: z.string(),
  plan: z.array(z.string()),
  lessons: z.array(z.string()),
  pitfalls: z.array(z.string()),
  /** How many episodes were merged into this entry. */
  episodes: z.number().int().positive(),
  similarity: z.number(),
});
export type Memory = z.infer<typeof MemorySchema>;

export const BudgetSchema = z.object({
  llmCalls: z.number().int().nonnegative(),
  /** Of those, calls answered from the replay cache without a request. */
  cachedCalls: z.number().int().nonnegative().default(0),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  llmMs: z.number().nonnegative(),
  /** All sandbox time: start-up, handing over tables and storing results, not only the code's run. */
  execMs: z.number().nonnegative(),
});
export type Budget = z.infer<typeof BudgetSchema>;

/**
 * A table to ingest: a file path, an upload into the artifact store (`POST /tables` on the API
 * server answers with this source), or inline rows (TableBench's {columns, data}).
 */
export const TableSourceSchema = z.union([
  z.object({
    /** `<sha256>.<extension>` of a file uploaded into the artifact store. */
    upload: z.string().regex(/^[0-9a-f]{64}\.[a-z]+$/),
    name: z.string().optional(),
    encoding: z.string().min(1).optional(),
  }),
  z.object({
    path: z.string().min(1),
    name: z.string().optional(),
    /** The text encoding of a CSV/TSV/JSON file (e.g. `windows-1252`); default: detected. */
    encoding: z.string().min(1).optional(),
  }),
  z.object({
    name: z.string().optional(),
    columns: z.array(z.string()),
    data: z.array(z.array(z.unknown())),
  }),
]);
export type TableSource = z.infer<typeof TableSourceSchema>;

/** Where a branch is in plan -> code -> answer: the last stage it finished. */
export const StageSchema = z.enum(["plan", "code", "answer"]);
export type Stage = z.infer<typeof StageSchema>;

/**
 * A partial trajectory: one branch of a search over plans, codes and answers. Its id is its path
 * (`p2.c1.a3`: the second plan, its first code, that code's third answer); its evidence ids are
 * its own (every branch numbers its attempts from a1).
 */
export const BranchSchema = z.object({
  id: z.string(),
  parent: z.string().nullable(),
  stage: StageSchema,
  plan: z.array(z.string()),
  attempts: z.array(AttemptSchema),
  evidence: z.array(EvidenceSchema),
  claims: z.array(ClaimSchema),
  edges: z.array(EdgeSchema),
  answer: AnswerSchema.nullable(),
  /** The checker's rules on the answer, when checking is on. */
  verdict: VerdictSchema.nullable(),
  /** What this branch's own stage cost. */
  budget: BudgetSchema,
});
export type Branch = z.infer<typeof BranchSchema>;

/** How the branches' answers were settled. */
export const BallotSchema = z.object({
  /** The answer chosen, as its first branch gave it; null when no branch answered. */
  answer: z.string().nullable(),
  /** The branch whose trajectory is returned: the first to give the answer chosen. */
  winner: z.string().nullable(),
  method: z.enum(["majority", "judge"]),
  /** Each distinct (normalized) answer, its weight, and the branches that gave it, first seen first. */
  tally: z.array(
    z.object({ normalized: z.string(), weight: z.number(), branches: z.array(z.string()) }),
  ),
  /** The judge's pairwise matches, in order, when there was a knockout. */
  matches: z.array(z.object({ a: z.string(), b: z.string(), winner: z.string() })).default([]),
});
export type Ballot = z.infer<typeof BallotSchema>;

/** A node of a search tree: a branch (or the root) and what the search learned of it. */
export const TreeNodeSchema = z.object({
  id: z.string(),
  parent: z.string().nullable(),
  stage: z.enum(["root", "plan", "code", "answer"]),
  visits: z.number().int().nonnegative(),
  /** The rewards backed up through it, added. */
  value: z.number(),
  /** The share of its parent's attention it had before any visit: 1 / the parent's width. */
  prior: z.number(),
  children: z.array(z.string()),
  /** An answer's own reward; null for the other stages. */
  reward: z.number().nullable(),
});
export type TreeNode = z.infer<typeof TreeNodeSchema>;

/** A piece of the question that one or more workers solve; two workers cross-check it. */
export const SubtaskSchema = z.object({
  id: z.string(),
  /** The sub-question, as the worker reads it. */
  task: z.string(),
  workers: z.array(z.string()).min(1),
  /** Subtasks whose answers this one needs; it is dispatched after them. */
  dependsOn: z.array(z.string()),
  /** What a worker's own input schema adds beyond the task (e.g. calc's expression). */
  args: z.record(z.string(), z.unknown()),
});
export type Subtask = z.infer<typeof SubtaskSchema>;

/** What one worker returns for one subtask. */
export const PacketSchema = z.object({
  /** `<subtask>.<worker>`. */
  id: z.string(),
  subtask: z.string(),
  worker: z.string(),
  answer: z.string().nullable(),
  /** Ids of the evidence on the blackboard that supports the answer. */
  evidence: z.array(z.string()),
  /** What the worker did, a line a step. */
  trajectory: z.array(z.string()),
  /** The worker's confidence in its answer, 0-1 (a verifier's score or one minus a risk). */
  score: z.number().min(0).max(1),
  /**
   * Whether the answer is derived from the tables: it is the result of the worker's own last
   * successful run (code or SQL) and that result changed on perturbed tables ("yes"); "no"
   * when the result does not depend on the tables or is not the answer; "unknown" when there
   * is no such result (a lookup, a worker that runs no code) or it could not be tested.
   */
  derived: z.enum(["yes", "no", "unknown"]).optional(),
  cost: z.object({ llmCalls: z.number().int().nonnegative(), ms: z.number().nonnegative() }),
  /** Why there is no answer, when there is none. */
  error: z.string().nullable(),
});
export type Packet = z.infer<typeof PacketSchema>;

/** Workers that answered one subtask differently, and the answer kept. */
export const ConflictSchema = z.object({
  subtask: z.string(),
  packets: z.array(z.string()),
  answers: z.array(z.string()),
  kept: z.string().nullable(),
});
export type Conflict = z.infer<typeof ConflictSchema>;

/** The packets chosen for the answer: coverage minus conflict minus cost, and its parts. */
export const SelectionSchema = z.object({
  packets: z.array(z.string()),
  coverage: z.number(),
  conflict: z.number(),
  cost: z.number(),
  objective: z.number(),
  /** Subtasks no selected packet answers. */
  uncovered: z.array(z.string()),
  conflicts: z.array(ConflictSchema),
});
export type Selection = z.infer<typeof SelectionSchema>;
