/**
 * The cell index of a large table, computed by the sandbox from the DataFrame it loads for the
 * table's code: one pandas parse serves the sandbox and the index, and the worker keeps the
 * frame for the run that follows (its pool sends that run where the table is loaded). Node
 * then never holds the table: no DuckDB copy of it, no second parse.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import type { TableRef } from "../../blackboard/schemas.js";
import type { Sandbox } from "../sandbox/types.js";
import { DEFAULT_MAX_CELLS, TableIndexSchema, TOP_VALUES } from "./cell-index.js";

const SCRIPT = fileURLToPath(new URL("./frame_index.py", import.meta.url));
/** The index is a few hundred kilobytes of JSON for 10,000 cells; this leaves ample room. */
const OUTPUT_BYTES = 16 * 1024 * 1024;
/** Counting the values of a million rows takes seconds; the run is ours, not the model's. */
const TIMEOUT_MS = 300_000;

export const FrameIndexSchema = TableIndexSchema.omit({ firstRows: true });
/** A table's index as the sandbox computes it: everything but the first rows. */
export type FrameIndex = z.infer<typeof FrameIndexSchema>;

/** Indexes a stored table from the DataFrame the sandbox loads, or says why it could not. */
export interface FrameIndexer {
  index(table: TableRef): Promise<{ index: FrameIndex } | { problem: string }>;
}

let script: string | undefined;

/** The index is kept under the default budget of cells, the one prompts use. */
function code(): string {
  script ??= readFileSync(SCRIPT, "utf8");
  return `MAX_CELLS = ${DEFAULT_MAX_CELLS}\nTOP_VALUES = ${TOP_VALUES}\n${script}`;
}

/**
 * A FrameIndexer running frame_index.py in `sandbox` (started on first use), without lineage,
 * within `memoryMb` of address space above what the worker had mapped.
 */
export function sandboxIndexer(
  sandbox: () => Promise<Sandbox>,
  opts: { memoryMb: number },
): FrameIndexer {
  return {
    async index(table) {
      let result: Awaited<ReturnType<Sandbox["execute"]>>;
      try {
        result = await (await sandbox()).execute({
          code: code(),
          tables: [table],
          timeoutMs: TIMEOUT_MS,
          memoryMb: opts.memoryMb,
          outputBytes: OUTPUT_BYTES,
          lineage: false,
        });
      } catch (error) {
        return { problem: error instanceof Error ? error.message : String(error) };
      }
      if (!result.ok || result.truncated) {
        const why = result.error ? `${result.error.type}: ${result.error.message}` : "cut short";
        return { problem: why };
      }
      let json: unknown;
      try {
        json = JSON.parse(result.stdout);
      } catch {
        return { problem: "its output is not JSON" };
      }
      const parsed = FrameIndexSchema.safeParse(json);
      return parsed.success ? { index: parsed.data } : { problem: parsed.error.message };
    },
  };
}
