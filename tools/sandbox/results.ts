import path from "node:path";
import { z } from "zod";
import {
  ColumnSchema,
  type ExecError,
  ExecErrorSchema,
  type ExecResult,
  ExecResultSchema,
  OutputSpanSchema,
  type ProducedTable,
} from "../../blackboard/schemas.js";
import { putArtifact } from "../artifacts.js";

/**
 * What runner.py (and worker.py) report for one run: output, the error if any, and
 * the DataFrames the code left behind, each saved as a CSV file in the scratch directory.
 * Shared by the backends that turn such a report into an ExecResult.
 */
export const RunnerTableSchema = z.object({
  variable: z.string(),
  line: z.number().int().nullable(),
  /** A plain file name inside the scratch directory. */
  file: z.string(),
  rows: z.number().int().nonnegative(),
  columns: z.array(ColumnSchema),
});
export type RunnerTable = z.infer<typeof RunnerTableSchema>;

export const RunnerResultSchema = z.object({
  ok: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  error: ExecErrorSchema.nullable(),
  tables: z.array(RunnerTableSchema),
  spans: z.array(OutputSpanSchema),
  truncated: z.boolean(),
});
export type RunnerResult = z.infer<typeof RunnerResultSchema>;

/** Reads one exported table file, named as the runner named it, from the scratch directory. */
export type TableFileReader = (fileName: string) => Promise<Uint8Array>;

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
  };
}

/** Appends notes (one per line) to stderr, starting on a line of their own. */
export function appendNotes(stderr: string, notes: string[]): string {
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
export async function storeProducedTables(
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
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      notes.push(`note: table ${produced.variable} could not be stored: ${reason}`);
    }
  }
  return { tables: stored, notes };
}

/** Turns a runner's report into an ExecResult, storing its tables as artifacts. */
export async function execResultFromRunner(
  result: RunnerResult,
  readTableFile: TableFileReader,
  durationMs: number,
): Promise<ExecResult> {
  const { tables, notes } = await storeProducedTables(result.tables, readTableFile);
  return ExecResultSchema.parse({
    ok: result.ok,
    stdout: result.stdout,
    stderr: appendNotes(result.stderr, notes),
    error: result.error,
    tables,
    spans: result.spans,
    truncated: result.truncated,
    durationMs,
  });
}
