import path from "node:path";
import type { Command } from "commander";
import { z } from "zod";

const PullFlagsSchema = z.object({
  dir: z.string().min(1).optional(),
  mirror: z.string().min(1).optional(),
});

/** Progress on stderr: one rewritten line on a terminal, a line per tenth (or 16 MiB) otherwise. */
function progressPrinter(): {
  update: (bytes: number, total: number | null) => void;
  end: () => void;
} {
  const tty = process.stderr.isTTY === true;
  const mib = (n: number) => (n / 2 ** 20).toFixed(1);
  let lastStep = -1;
  let shown = false;
  return {
    update(bytes, total) {
      const text = total
        ? `data: ${mib(bytes)} of ${mib(total)} MiB (${Math.floor((100 * bytes) / total)}%)`
        : `data: ${mib(bytes)} MiB`;
      if (tty) {
        process.stderr.write(`\r${text}\x1b[K`);
        shown = true;
        return;
      }
      const step = total ? Math.floor((10 * bytes) / total) : Math.floor(bytes / 2 ** 24);
      if (step !== lastStep) {
        lastStep = step;
        process.stderr.write(`${text}\n`);
      }
    },
    end() {
      if (tty && shown) process.stderr.write("\n");
    },
  };
}

export function registerDataCommands(program: Command): void {
  const data = program
    .command("data")
    .description("benchmark datasets on this machine")
    .addHelpText(
      "after",
      "\nDatasets live in $TABLEMINDS_HOME/datasets/<name>/ (default ./.tableminds). " +
        "TABLEMINDS_DATA_MIRROR=<url> downloads <url>/<name>/<file> instead of the upstream hosts.",
    );

  data
    .command("pull")
    .description("download a dataset from its upstream location (needs internet access)")
    .argument("<name>", "tablebench, wikitq, tabfact or finqa")
    .option("--dir <dir>", "put it here instead of $TABLEMINDS_HOME/datasets/<name>")
    .option("--mirror <url>", "download from <url>/<name>/<file> (default: TABLEMINDS_DATA_MIRROR)")
    .action(async (name: string, rawFlags: unknown) => {
      const flags = PullFlagsSchema.parse(rawFlags);
      const { DATASETS, isDataset, datasetHome } = await import("../evals/datasets/index.js");
      if (!isDataset(name)) {
        throw new Error(`unknown dataset "${name}"; known: ${DATASETS.join(", ")}`);
      }
      const { pullDataset, sourceUrl } = await import("../evals/datasets/pull.js");
      process.stderr.write(`data: downloading ${name} from ${sourceUrl(name, flags.mirror)}\n`);
      const progress = progressPrinter();
      try {
        const pulled = await pullDataset(name, {
          dir: flags.dir,
          mirror: flags.mirror,
          onProgress: progress.update,
        });
        progress.end();
        process.stderr.write(`data: ${(pulled.bytes / 2 ** 20).toFixed(1)} MiB downloaded\n`);
        process.stdout.write(`${name}: ${pulled.path}\n`);
        if (flags.dir && path.resolve(flags.dir) !== path.resolve(datasetHome(name))) {
          process.stderr.write(
            `data: outside the dataset home; evaluate it with --data ${pulled.path}\n`,
          );
        }
      } catch (error) {
        progress.end();
        throw error;
      }
    });

  data
    .command("list")
    .description("show which datasets are present and where")
    .action(async () => {
      const { DATASETS, findDataset } = await import("../evals/datasets/index.js");
      for (const name of DATASETS) {
        const found = findDataset(name);
        const where = found
          ? `${found.path}${found.origin === "shared" ? " (the shared copy beside the repository)" : ""}`
          : `missing: tableminds data pull ${name}, or --data PATH`;
        process.stdout.write(`${name.padEnd(11)} ${found ? "present" : "-      "}  ${where}\n`);
      }
    });
}
