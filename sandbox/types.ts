import { z } from "zod";
import { type ExecResult, type TableRef, TableRefSchema } from "../blackboard/schemas.js";
import { ConfigurationSchema } from "../settings/configuration.js";
import { localArtifact } from "../storage/artifacts.js";
import { DATETIME_DTYPE } from "../tables/dtypes.js";
import { assertStoredTable } from "../tables/sources.js";

/** The run configuration's limits, so that a request without them runs as a graph run would. */
const CONFIGURED = ConfigurationSchema.pick({
  execTimeoutMs: true,
  execMemoryMb: true,
  outputBytes: true,
}).parse({});

/** What a request gets for each limit it leaves out. */
export const EXEC_DEFAULTS = {
  timeoutMs: CONFIGURED.execTimeoutMs,
  memoryMb: CONFIGURED.execMemoryMb,
  outputBytes: CONFIGURED.outputBytes,
} as const;

export const ExecRequestSchema = z.object({
  code: z.string(),
  /** Tables given to the code: `df` when there is one, and each by its name. */
  tables: z.array(z.custom<TableRef>()),
  timeoutMs: z.number().int().positive().default(EXEC_DEFAULTS.timeoutMs),
  memoryMb: z.number().int().positive().default(EXEC_DEFAULTS.memoryMb),
  outputBytes: z.number().int().positive().default(EXEC_DEFAULTS.outputBytes),
  /**
   * Trace the result's derivation and lineage by re-running the code on perturbed copies of
   * the tables (at most min(3 s, half the time the run left)); false leaves them unknown.
   */
  lineage: z.boolean().default(true),
});
export type ExecRequest = z.input<typeof ExecRequestSchema>;

/** A request with its defaults filled in and its tables checked. */
export type ValidExecRequest = z.output<typeof ExecRequestSchema> & { tables: TableRef[] };

/**
 * Checks a request at a backend's door; throws (a ZodError) on a malformed one, and a
 * TableLoadError on a table that is no file of the artifact store (a caller may have written
 * any `uri` into a thread's state).
 */
/** A table's columns the reader read as dates, for the sandbox to hand the code as datetimes. */
export function datesOf(table: TableRef): { dates?: string[] } {
  const dates = table.columns.filter((c) => c.dtype === DATETIME_DTYPE).map((c) => c.name);
  return dates.length > 0 ? { dates } : {};
}

export function parseExecRequest(request: ExecRequest): ValidExecRequest {
  const parsed = ExecRequestSchema.parse(request);
  const tables = z.array(TableRefSchema).parse(parsed.tables);
  for (const table of tables) assertStoredTable(table);
  return { ...parsed, tables };
}

/**
 * parseExecRequest, with each table's `uri` the file of this machine's artifact folder that the
 * backend reads (fetched from the shared store when missing; localArtifact).
 */
export async function localExecRequest(request: ExecRequest): Promise<ValidExecRequest> {
  const valid = parseExecRequest(request);
  const tables = await Promise.all(
    valid.tables.map(async (table) => ({ ...table, uri: await localArtifact(table) })),
  );
  return { ...valid, tables };
}

/** What a backend can tell about its own protections, for `tableminds doctor`. */
export interface SandboxInfo {
  backend: string;
  runtime: string;
  protections: Record<string, boolean>;
}

/** Every code-running backend (local pool, E2B, ...) implements this. */
export interface Sandbox {
  execute(request: ExecRequest): Promise<ExecResult>;
  info(): Promise<SandboxInfo>;
  close(): Promise<void>;
}

/** A new sandbox once `warm` has readied it; when warming fails, it is closed and the error thrown. */
export async function warmedUp<S extends { close(): Promise<void> }>(
  sandbox: S,
  warm: () => Promise<void>,
): Promise<S> {
  try {
    await warm();
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  return sandbox;
}
