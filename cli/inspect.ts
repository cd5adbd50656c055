import path from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { nonNegativeInt } from "./args.js";
import { configurationFromFlags, withConfigurationFlags } from "./configuration-flags.js";

const READING_FLAGS = ["rawTables", "headerRows", "skipRows", "sheet", "locale"] as const;

const InspectFlagsSchema = z.object({
  rows: z.number().int().nonnegative(),
  json: z.boolean(),
  encoding: z.string().min(1).optional(),
});

/** Where the table's header and columns are in the file, in the user's coordinates. */
export function whereLines(table: TableRef): string[] {
  const origin = table.origin;
  if (!origin) return [];
  if ("sheet" in origin) {
    const columns = table.columns
      .map((column, i) => `${origin.columns[i] ?? "?"}=${JSON.stringify(column.name)}`)
      .join(", ");
    return [
      `Sheet ${JSON.stringify(origin.sheet)}, header at sheet row ${origin.header}; columns ${columns}`,
    ];
  }
  if (origin.format === "csv" || origin.format === "tsv") {
    return [`Header at line ${origin.header} of ${origin.file}`];
  }
  return [];
}

/**
 * `tableminds inspect <file>`: how a file is read into tables, as the model is told: titles,
 * header paths, units, the rows taken as totals or notes, hidden parts, then the first rows.
 */
export function registerInspectCommand(program: Command): void {
  const command = program
    .command("inspect")
    .description(
      "show how a table file is read: its tables, header paths, units and value readings, the rows taken as titles, totals or notes, hidden sheets, rows and columns (what the model is told)",
    )
    .argument("<file...>", "CSV, TSV, JSON, Excel or Parquet files")
    .option("--rows <n>", "first rows shown per table", nonNegativeInt, 5)
    .option("--encoding <name>", "text encoding of the files (default: detected)")
    .option("--json", "print the table references (columns, origin, reading) as JSON", false)
    .addHelpText(
      "after",
      "\nExamples:\n  tableminds inspect report.xlsx\n  tableminds inspect prices.csv --locale de\n  tableminds inspect report.xlsx --sheet Archive --header-rows 2\n  tableminds inspect report.xlsx --raw",
    );
  withConfigurationFlags(command, READING_FLAGS);
  command.action(async (files: string[], flags: unknown, self: Command) => {
    const opts = InspectFlagsSchema.parse(flags);
    const given = configurationFromFlags(self);
    const { readingOptionsOf } = await import("../nodes/ingest.js");
    const { loadTables } = await import("../tables/load.js");
    const { profileTable } = await import("../tables/profile.js");
    const reading = readingOptionsOf({ rawTables: given.rawTables ?? false, ...given });
    const all: TableRef[] = [];
    for (const file of files) {
      const source = opts.encoding
        ? { path: path.resolve(file), encoding: opts.encoding }
        : { path: path.resolve(file) };
      const loaded = await loadTables(source, { reading });
      for (const { table, warnings } of loaded) {
        all.push(table);
        if (opts.json) continue;
        for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
        const text = await profileTable(table, { sampleRows: opts.rows });
        process.stdout.write(`${[`${file}:`, ...whereLines(table), text].join("\n")}\n\n`);
      }
    }
    if (opts.json) process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  });
}
