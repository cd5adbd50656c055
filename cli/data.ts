import { existsSync } from "node:fs";
import type { Command } from "commander";

export function registerDataCommands(program: Command): void {
  const data = program.command("data").description("benchmark datasets on this machine");

  data
    .command("pull")
    .description("download a dataset into $TABLEMINDS_HOME/datasets/<name> (needs internet access)")
    .argument("<name>", "tablebench, wikitq, tabfact or finqa")
    .action(async (name: string) => {
      const { isDataset } = await import("../evals/datasets/index.js");
      if (!isDataset(name))
        throw new Error(`unknown dataset "${name}"; known: tablebench, wikitq, tabfact, finqa`);
      const { pullDataset, sourceUrl } = await import("../evals/datasets/pull.js");
      process.stderr.write(`data: downloading ${name} from ${sourceUrl(name)}\n`);
      let shown = 0;
      const where = await pullDataset(name, (bytes, total) => {
        if (bytes - shown < 1 << 20) return;
        shown = bytes;
        const of = total ? ` of ${(total / 2 ** 20).toFixed(1)}` : "";
        process.stderr.write(`data: ${(bytes / 2 ** 20).toFixed(1)}${of} MiB\n`);
      });
      process.stdout.write(`${name}: ${where}\n`);
    });

  data
    .command("list")
    .description("show which datasets are present and where")
    .action(async () => {
      const { DATASETS, resolveDatasetFile } = await import("../evals/datasets/index.js");
      for (const name of DATASETS) {
        let where = "not here (tableminds data pull, or --data PATH)";
        try {
          const file = resolveDatasetFile(name);
          if (existsSync(file)) where = file;
        } catch {
          // Reported as not here.
        }
        process.stdout.write(`${name.padEnd(12)} ${where}\n`);
      }
    });
}
