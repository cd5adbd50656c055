/**
 * The table context policy on three tables side by side (not a test):
 *
 * - a 1,000,000-row x 50-column table (written by DuckDB as a CSV artifact; goal: at most 4,000
 *   tokens of context), and a 1,000-row one with the same columns;
 * - a real 20-row TableBench table (shown whole);
 *
 * with the time to build each context the first time (what the first model call waits for:
 * profiling, indexing and retrieval), then for a second question over the same table (the
 * index is kept), and the tokenizer's own load time.
 *
 *   npx tsx bench/context.ts [budgetTokens=3000] [rows=1000000]
 */
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TableRef } from "../blackboard/schemas.js";
import { loadTableBench } from "../evals/datasets/tablebench.js";
import { artifactDir } from "../storage/artifacts.js";
import { tableContext } from "../tables/context.js";
import { loadTable } from "../tables/load.js";
import { loadTokenizer } from "../tables/tokens.js";
import { writeWideCsv } from "./support/wide-table.js";

const BUDGET = Number(process.argv[2] ?? 3000);
const BIG_ROWS = Number(process.argv[3] ?? 1_000_000);
const COLUMNS = 50;
const TABLEBENCH = path.resolve(
  import.meta.dirname,
  "../../shared/datasets/tablebench/tablebench_test.jsonl",
);
const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-context-"));
process.env.TABLEMINDS_HOME = home;

/** Writes a generated table with DuckDB straight into the artifact store. */
async function generate(name: string, rows: number): Promise<TableRef> {
  const dir = artifactDir();
  mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `${name}.tmp`);
  const dtypes = await writeWideCsv(tmp, rows, COLUMNS);
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(tmp)) hash.update(chunk as Buffer);
  const sha256 = hash.digest("hex");
  const uri = path.join(dir, `${sha256}.csv`);
  renameSync(tmp, uri);
  return { id: `table:${name}`, name, uri, sha256, rows, columns: dtypes };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
}

interface Row {
  table: string;
  shape: string;
  view: string;
  tokens: number;
  firstMs: number;
  againMs: number;
  rows: string;
}

async function measure(ref: TableRef, question: string, other: string): Promise<Row> {
  const first = await timed(() => tableContext(ref, question, { budgetTokens: BUDGET }));
  const again = await timed(() => tableContext(ref, other, { budgetTokens: BUDGET }));
  return {
    table: ref.name,
    shape: `${ref.rows} x ${ref.columns.length}`,
    view: first.value.view,
    tokens: first.value.tokens,
    firstMs: first.ms,
    againMs: again.ms,
    rows: first.value.rows.slice(0, 3).join(", "),
  };
}

async function main(): Promise<void> {
  const tokenizer = await timed(() => loadTokenizer());
  console.log(`tokenizer ${tokenizer.value.encoding} loaded in ${tokenizer.ms.toFixed(0)} ms`);

  const generated = await timed(() => generate("big", BIG_ROWS));
  const big = generated.value;
  const mb = statSync(big.uri).size / 1024 / 1024;
  console.log(
    `generated ${BIG_ROWS} x ${COLUMNS} (${mb.toFixed(0)} MB) in ${(generated.ms / 1000).toFixed(1)} s`,
  );
  const small = await generate("small", 1_000);

  const examples = await loadTableBench(TABLEBENCH);
  const rowsOf = (source: unknown) =>
    source && typeof source === "object" && "data" in source && Array.isArray(source.data)
      ? source.data.length
      : 0;
  const example = examples.find((e) => rowsOf(e.tables[0]) === 20);
  const source = example?.tables[0];
  if (!example || !source) throw new Error("no 20-row TableBench table");
  const { table: bench } = await loadTable({ name: "tablebench", ...source });

  const question = "What is amount_1 for Zanzibar Quill in city_2, and which color_6 is it?";
  const other = "How many rows have city_9 equal to city_77 and flag_5 True?";
  const results = [
    await measure(big, question, other),
    await measure(small, question, other),
    await measure(bench, example.question, "Which row has the highest value?"),
  ];
  const memoryMb = process.memoryUsage().rss / 1024 / 1024;

  console.log(`\nbudget ${BUDGET} tokens (goal for ${BIG_ROWS} x ${COLUMNS}: <= 4000)`);
  console.log(
    "table       shape            view       tokens  first build  2nd question  top rows",
  );
  for (const r of results) {
    console.log(
      `${r.table.padEnd(11)} ${r.shape.padEnd(16)} ${r.view.padEnd(10)} ${String(r.tokens).padStart(6)}` +
        `  ${`${r.firstMs.toFixed(0)} ms`.padStart(11)}  ${`${r.againMs.toFixed(0)} ms`.padStart(12)}  ${r.rows}`,
    );
  }
  const [bigRow, smallRow] = results;
  if (bigRow && smallRow) {
    console.log(
      `\nfirst build, ${BIG_ROWS} rows vs 1000 rows: ${(bigRow.firstMs / smallRow.firstMs).toFixed(0)}x` +
        ` (${(bigRow.firstMs / 1000).toFixed(1)} s vs ${smallRow.firstMs.toFixed(0)} ms); RSS now ${memoryMb.toFixed(0)} MB`,
    );
  }
  console.log(`TableBench question: ${example.question}`);
}

try {
  await main();
} finally {
  rmSync(home, { recursive: true, force: true });
}
