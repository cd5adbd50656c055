import type { Command } from "commander";
import { z } from "zod";
import { artifactDir, pruneArtifacts } from "../storage/artifacts.js";
import { nonNegativeInt } from "./args.js";

const PruneFlagsSchema = z.object({
  olderThan: z.number().int().nonnegative(),
  dryRun: z.boolean(),
});

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/**
 * `tableminds prune`: removes stored tables (and what was derived from them) not used lately,
 * and memory entries archived by an older tableminds.
 */
export function registerPruneCommand(program: Command): void {
  program
    .command("prune")
    .description(
      "remove stored tables not used for a while from $TABLEMINDS_HOME/artifacts (they are made again on the next load; with TABLEMINDS_ARTIFACT_STORE, this folder is only the local cache: the shared store is never pruned, and a table removed here is fetched from it again), and what nothing uses any more (files half-written by a process that is gone, pickles and index entries of tables that are gone), memory entries archived by an older tableminds (no table schema or verification) from $TABLEMINDS_HOME/memory.sqlite, and the scratch folders sandbox interpreters killed with SIGKILL left in the temp directory",
    )
    .option("--older-than <days>", "not used for this many days", nonNegativeInt, 30)
    .option("--dry-run", "only list what would be removed", false)
    .action(async (flags: unknown) => {
      const opts = PruneFlagsSchema.parse(flags);
      const { unusedIndexEntry } = await import("../tables/load-index.js");
      const result = await pruneArtifacts({
        olderThanDays: opts.olderThan,
        dryRun: opts.dryRun,
        unusedIndexEntry,
      });
      for (const file of result.removed) {
        const day = file.lastUsed.toISOString().slice(0, 10);
        console.log(
          `${opts.dryRun ? "would remove" : "removed"} ${file.path} (${size(file.bytes)}, last used ${day}: ${file.why})`,
        );
      }
      const verb = opts.dryRun ? "would free" : "freed";
      console.log(
        `${verb} ${size(result.bytes)} in ${result.removed.length} file${result.removed.length === 1 ? "" : "s"} of ${artifactDir()}; kept ${result.kept} used within ${opts.olderThan} day${opts.olderThan === 1 ? "" : "s"}`,
      );
      // Loaded only here: `tableminds --help` must not load the store's dependencies.
      const { pruneMemory } = await import("../storage/memory/index.js");
      const memory = pruneMemory(opts.dryRun);
      if (memory) console.log(memory);
      if (!opts.dryRun) {
        const { reclaimDeadScratch } = await import("../sandbox/scratch-reclaim.js");
        const scratch = reclaimDeadScratch();
        const plural = scratch.length === 1 ? "" : "s";
        console.log(
          `removed ${scratch.length} scratch folder${plural} of sandbox interpreters that are gone`,
        );
      }
    });
}
