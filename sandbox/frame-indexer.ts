/** The sandbox side of tables/frame-index.ts: frame_index.py run on the DataFrame the interpreter loads. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_MAX_CELLS, TOP_VALUES } from "../tables/cell-index.js";
import { type FrameIndexer, FrameIndexSchema } from "../tables/frame-index.js";
import type { Sandbox } from "./types.js";

const SCRIPT = fileURLToPath(new URL("./frame_index.py", import.meta.url));
/** The index is a few hundred kilobytes of JSON for 10,000 cells; this leaves ample room. */
const OUTPUT_BYTES = 16 * 1024 * 1024;
/** Counting the values of a million rows takes seconds; the run is ours, not the model's. */
const TIMEOUT_MS = 300_000;

let script: string | undefined;

/** The index is kept under the default budget of cells, the one prompts use. */
function code(): string {
  script ??= readFileSync(SCRIPT, "utf8");
  return `MAX_CELLS = ${DEFAULT_MAX_CELLS}\nTOP_VALUES = ${TOP_VALUES}\n${script}`;
}

/**
 * A FrameIndexer running frame_index.py in `sandbox` (started on first use), without lineage,
 * within `memoryMb` of address space above what the interpreter had mapped.
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
