import path from "node:path";
import { z } from "zod";
import {
  type ExecError,
  type ExecResult,
  ExecResultSchema,
  MAX_FIGURES,
  type ProducedTable,
  ProducedTableSchema,
  TableRefSchema,
} from "../blackboard/schemas.js";
import { putArtifact } from "../storage/artifacts.js";
import { RunnerFigureSchema, type ScratchFileReader, storeFigures } from "./figures.js";

/**
 * A DataFrame the code left behind, as runner.py reports it: saved as a CSV file in the
 * run's scratch directory, not yet in the artifact store.
 */
export const RunnerTableSchema = ProducedTableSchema.pick({
  variable: true,
  line: true,
  lineage: true,
}).extend({
  /** A plain file name inside the scratch directory. */
  file: z.string(),
  ...TableRefSchema.pick({ rows: true, columns: true }).shape,
});
export type RunnerTable = z.infer<typeof RunnerTableSchema>;

/**
 * The one wire form of a run's result: what runner.py writes (E2B) and what interpreter.py
 * sends in its result message (local pool, which adds its own envelope). It is an
 * ExecResult before its tables and figures are stored and its duration measured.
 */
export const RunnerResultSchema = ExecResultSchema.omit({
  tables: true,
  durationMs: true,
  figures: true,
}).extend({
  tables: z.array(RunnerTableSchema),
  /** Only when the code drew (figures.py). */
  figures: z.array(RunnerFigureSchema).max(MAX_FIGURES).optional(),
  /** Only for a traced result: its key (lineage.py's result_key) and whether tracing finished. */
  trace: z.object({ key: z.string().regex(/^[0-9a-f]{64}$/), complete: z.boolean() }).optional(),
});
export type RunnerResult = z.infer<typeof RunnerResultSchema>;

/** Reads one file the runner wrote (a table or a figure), by its name, from the scratch directory. */
export type TableFileReader = ScratchFileReader;

/** An ExecResult for a run that produced nothing but an error. */
export function failedResult(error: ExecError, durationMs: number): ExecResult {
  return {
    ok: false,
    stdout: "",
    stderr: "",
    error,
    tables: [],
    spans: [],
    truncated: false,
    durationMs,
    result: null,
  };
}

/** Appends notes (one per line) to stderr, starting on a line of their own. */
function appendNotes(stderr: string, notes: string[]): string {
  if (notes.length === 0) return stderr;
  const separator = stderr === "" || stderr.endsWith("\n") ? "" : "\n";
  return `${stderr}${separator}${notes.join("\n")}\n`;
}

/** A runner names its table files itself; anything but a plain file name is refused. */
function plainFileName(file: string): string | undefined {
  const name = path.posix.basename(file);
  return name === file && name !== "." && name !== ".." && !name.includes("\\") ? name : undefined;
}

/**
 * Moves the tables a run exported into the artifact store. A table that cannot be
 * read or stored becomes a note instead of failing the whole run.
 */
async function storeProducedTables(
  tables: RunnerTable[],
  readTableFile: TableFileReader,
): Promise<{ tables: ProducedTable[]; notes: string[] }> {
  const stored: ProducedTable[] = [];
  const notes: string[] = [];
  for (const produced of tables) {
    const fileName = plainFileName(produced.file);
    if (!fileName) {
      notes.push(`note: table ${produced.variable} was refused: bad file name ${produced.file}`);
      continue;
    }
    try {
      const bytes = Buffer.from(await readTableFile(fileName));
      const { sha256, uri } = await putArtifact(bytes, "csv");
      stored.push({
        variable: produced.variable,
        line: produced.line,
        table: {
          id: `table:${produced.variable}`,
          name: produced.variable,
          uri,
          sha256,
          rows: produced.rows,
          columns: produced.columns,
        },
        lineage: produced.lineage,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      notes.push(`note: table ${produced.variable} could not be stored: ${reason}`);
    }
  }
  return { tables: stored, notes };
}

/**
 * Turns a runner's report into an ExecResult, storing its tables and figures as artifacts;
 * `elapsed` is asked once they are stored, so the duration covers the whole run.
 */
export async function execResultFromRunner(
  result: RunnerResult,
  readTableFile: TableFileReader,
  elapsed: () => number,
): Promise<ExecResult> {
  const { tables, notes } = await storeProducedTables(result.tables, readTableFile);
  const drawn = result.figures?.length
    ? await storeFigures(result.figures, readTableFile)
    : { figures: [], notes: [] };
  return ExecResultSchema.parse({
    ok: result.ok,
    stdout: result.stdout,
    stderr: appendNotes(result.stderr, [...notes, ...drawn.notes]),
    error: result.error,
    tables,
    spans: result.spans,
    truncated: result.truncated,
    durationMs: elapsed(),
    result: result.result,
    ...(drawn.figures.length > 0 ? { figures: drawn.figures } : {}),
  });
}

/** Whether a runner's report names files in its scratch directory (tables or figures). */
export function leftFiles(result: Pick<RunnerResult, "tables" | "figures">): boolean {
  return (
    result.tables.length > 0 ||
    (result.figures ?? []).some((figure) => Object.keys(figure.files).length > 0)
  );
}
