/**
 * Right code for TableBench questions (bench/support/right-code/*.jsonl, one `{id, code}` per
 * line): the unmutated half of the checker's mutation set (bench/checker.ts). This tool shows
 * a question as the sandbox will see its table, and tries code on it: the code runs in the
 * local sandbox on the table as a run ingests it, its result is written the way the gold answer
 * is written (`answerLike`) and scored with TableBench's own exact match.
 *
 *   tsx bench/support/right-code.ts show <id> [<id> ...]
 *   tsx bench/support/right-code.ts try <file.jsonl>   (prints one JSON line per entry)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CodeResult, TableRef } from "../../blackboard/schemas.js";
import { exactMatch } from "../../evals/metrics/tablebench.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { loadTables } from "../../tables/load.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const TABLEBENCH = path.resolve(ROOT, "../shared/datasets/tablebench/tablebench_test.jsonl");

export interface TableBenchRow {
  id: string;
  qtype: string;
  qsubtype: string;
  question: string;
  answer: string;
  table: { columns: unknown[]; data: unknown[][] };
}

export function tableBenchRows(file = TABLEBENCH): Map<string, TableBenchRow> {
  const rows = new Map<string, TableBenchRow>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as TableBenchRow;
    if (!rows.has(row.id)) rows.set(row.id, row);
  }
  return rows;
}

export async function ingest(row: TableBenchRow): Promise<TableRef> {
  const [loaded] = await loadTables({
    name: "table",
    columns: row.table.columns.map(String),
    data: row.table.data,
  } as never);
  if (!loaded) throw new Error(`${row.id}: ingest gave no table`);
  return loaded.table;
}

const GOLD_NUMBER = /^([-+]?[$€£]?)(\d[\d,]*)(?:\.(\d+))?(%?)$/;

function numeric(value: unknown): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const n = Number(value.replace(/[,$%\s]/g, ""));
    return value.trim() !== "" && Number.isFinite(n) ? n : null;
  }
  return null;
}

/** One value written as one gold item is written: numbers to the gold's decimals, yes/no in its case. */
function itemLike(gold: string, value: unknown): string {
  const g = gold.trim();
  const number = GOLD_NUMBER.exec(g);
  const n = numeric(value);
  if (number && n !== null) {
    const places = number[3]?.length ?? 0;
    const grouped = (number[2] ?? "").includes(",");
    const text = n.toLocaleString("en-US", {
      minimumFractionDigits: places,
      maximumFractionDigits: places,
      useGrouping: grouped,
    });
    return `${text}${number[4] ?? ""}`;
  }
  if (/^(?:yes|no|true|false)$/i.test(g)) {
    const truth = typeof value === "boolean" ? value : /^(?:yes|true)$/i.test(String(value).trim());
    const word = truth ? "yes" : "no";
    return g[0] === g[0]?.toUpperCase() ? word[0]?.toUpperCase() + word.slice(1) : word;
  }
  return String(value ?? "").trim();
}

/** A result written the way `gold` is written: one item, or as many items as the result holds. */
export function answerLike(gold: string, result: CodeResult): string {
  const values = result.values;
  const golds = gold.split(/,\s+/);
  if (values.length <= 1) return itemLike(gold, values[0] ?? result.text);
  return values.map((v, i) => itemLike(golds[Math.min(i, golds.length - 1)] ?? "", v)).join(", ");
}

async function show(ids: string[]): Promise<void> {
  const rows = tableBenchRows();
  for (const id of ids) {
    const row = rows.get(id);
    if (!row) throw new Error(`no question ${id}`);
    const ref = await ingest(row);
    console.log(`# ${id} (${row.qtype} / ${row.qsubtype})`);
    console.log(`question: ${row.question}`);
    console.log(`gold: ${row.answer}`);
    console.log(
      `df columns: ${ref.columns.map((c) => `${JSON.stringify(c.name)}:${c.dtype}`).join(", ")}`,
    );
    const sandbox = await getSandbox("local");
    const out = await sandbox.execute({
      code: "import pandas as pd\npd.set_option('display.width', 250)\nprint(df.to_string(max_rows=40))",
      tables: [ref],
    });
    console.log(out.stdout.trim());
    console.log();
  }
}

async function tryCode(file: string): Promise<void> {
  const rows = tableBenchRows();
  const sandbox = await getSandbox("local");
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const { id, code } = JSON.parse(line) as { id: string; code: string };
    const row = rows.get(id);
    if (!row) {
      console.log(JSON.stringify({ id, error: "no such question" }));
      continue;
    }
    const ref = await ingest(row);
    const run = await sandbox.execute({ code, tables: [ref] });
    const result = run.result ?? null;
    const answer = result ? answerLike(row.answer, result) : null;
    console.log(
      JSON.stringify({
        id,
        ok: run.ok,
        error: run.error?.message ?? null,
        result: result?.text ?? null,
        derived: result?.derived ?? null,
        answer,
        gold: row.answer,
        em: answer === null ? 0 : exactMatch(row.answer, answer),
      }),
    );
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const [command, ...args] = process.argv.slice(2);
  const work = command === "show" ? show(args) : command === "try" ? tryCode(args[0] ?? "") : null;
  if (!work) {
    console.error("usage: right-code.ts show <id>... | try <file.jsonl>");
    process.exit(2);
  }
  work
    .catch((error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    })
    .finally(() => closeSandboxes());
}
