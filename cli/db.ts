import type { Command } from "commander";
import { deploymentSettings } from "../settings/deployment.js";

async function migrate(): Promise<void> {
  const url = deploymentSettings().TABLEMINDS_DATABASE_URL;
  if (!url) throw new Error("db migrate needs TABLEMINDS_DATABASE_URL=postgres://...");
  const [{ migrateDatabase }, { LEDGER_MIGRATIONS }, { describeUrl }] = await Promise.all([
    import("../graphs/persistence-postgres.js"),
    import("../server/ledger.js"),
    import("../storage/postgres.js"),
  ]);
  const report = await migrateDatabase(url, [LEDGER_MIGRATIONS]);
  process.stdout.write(
    report.applied.length
      ? `db: migrated ${describeUrl(url)}: ${report.applied.join(", ")}\n`
      : `db: ${describeUrl(url)} is up to date\n`,
  );
}

export function registerDbCommands(program: Command): void {
  const db = program
    .command("db")
    .description("the PostgreSQL database of checkpoints, memory and the server's threads");
  db.command("migrate")
    .description("create or update the tables, once, under an advisory lock (safe to run again)")
    .addHelpText(
      "after",
      [
        "",
        "Reads TABLEMINDS_DATABASE_URL. Any number of processes may run it at once: they take",
        "turns. `tableminds serve` runs it at start; the CLI does before its first use.",
        "",
        "Example:",
        "  TABLEMINDS_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres tableminds db migrate",
      ].join("\n"),
    )
    .action(migrate);
}
