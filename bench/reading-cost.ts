/**
 * What reading a file as an analyst does (structure and values, docs/tables.md) costs over the
 * literal reading, side by side in one run, each load into a fresh artifact store: a CSV just
 * under the DuckDB path's 8 MB (with a column of "$" amounts to interpret, and without one),
 * TableBench's 586 inline tables, and the finance workbook of the tests. Prints the times and their ratio (interpreted / literal), best of `rounds`.
 *
 *   npm run bench:reading [rows=60000] [rounds=3]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { TableSource } from "../blackboard/schemas.js";
import { loadTables } from "../tables/load.js";
import type { ReadingOptions } from "../tables/reading.js";
import { financeWorkbookBytes } from "../tests/support/messy-workbook.js";

const rows = Number(process.argv[2] ?? 60_000);
const rounds = Number(process.argv[3] ?? 3);
const TABLEBENCH = path.resolve(
  import.meta.dirname,
  "../../shared/datasets/tablebench/tablebench_test.jsonl",
);

const scratch = mkdtempSync(path.join(os.tmpdir(), "tableminds-reading-bench-"));

/** Sales rows; `currency` writes revenue as "$123", which the interpreted reading reads as numbers. */
function csvFile(currency: boolean): string {
  const file = path.join(scratch, currency ? "sales.csv" : "plain.csv");
  const lines = ["region,city,product,units,price,revenue,date,rep,channel,note"];
  for (let i = 0; i < rows; i++) {
    const revenue = currency ? `"$${(i * 37) % 100_000}"` : `${(i * 37) % 100_000}`;
    lines.push(
      `R${i % 7},City ${i % 113},P${i % 41},${i % 97},${(i % 500) / 4},${revenue},2024-0${(i % 9) + 1}-1${i % 10},Rep ${i % 31},${i % 2 ? "web" : "store"},n${i}`,
    );
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

function tablebenchSources(): TableSource[] {
  const seen = new Set<string>();
  const sources: TableSource[] = [];
  for (const line of readFileSync(TABLEBENCH, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const { table } = JSON.parse(line) as { table: { columns: string[]; data: unknown[][] } };
    const key = JSON.stringify(table);
    if (seen.has(key)) continue;
    seen.add(key);
    sources.push({ name: "t", columns: table.columns, data: table.data });
  }
  return sources;
}

/** Best wall time of `rounds` loads of every source, each round into a fresh store. */
async function timed(sources: readonly TableSource[], reading: ReadingOptions): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const home = mkdtempSync(path.join(scratch, "home-"));
    process.env.TABLEMINDS_HOME = home;
    const start = performance.now();
    for (const source of sources) await loadTables(source, { reading });
    best = Math.min(best, performance.now() - start);
    rmSync(home, { recursive: true, force: true });
  }
  return best;
}

const workbook = path.join(scratch, "finance.xlsx");
writeFileSync(workbook, financeWorkbookBytes());
const cases: [string, TableSource[]][] = [
  [`CSV ${rows} rows x 10`, [{ path: csvFile(true) }]],
  // Read as it is written (nothing to interpret): what the structure reading costs alone.
  [`plain CSV ${rows} rows x 10`, [{ path: csvFile(false) }]],
  ["TableBench 586 tables", tablebenchSources()],
  ["finance workbook", [{ path: workbook }]],
];
console.log("| input | literal ms | interpreted ms | ratio |");
console.log("| --- | --- | --- | --- |");
for (const [name, sources] of cases) {
  // Alternated, so that a noisy moment hits both.
  const literal = await timed(sources, { raw: true });
  const interpreted = await timed(sources, {});
  console.log(
    `| ${name} | ${literal.toFixed(0)} | ${interpreted.toFixed(0)} | ${(interpreted / literal).toFixed(2)} |`,
  );
}
rmSync(scratch, { recursive: true, force: true });
