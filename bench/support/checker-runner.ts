/**
 * Judges the checker's labelled cases (see checker-cases.ts) with one engine: each table is
 * ingested as a run ingests it (`loadTables`), each distinct piece of code runs once per table
 * in the local sandbox, each case's attempt and evidence are built as the executor node builds
 * them (`evidenceFromExecution`) and the rules judge the answer (`ruleVerdict`).
 *
 * This file is copied into a worktree of the baseline commit and run there, so it imports only
 * what both versions have (loadTables, getSandbox, closeSandboxes, evidenceFromExecution,
 * ruleVerdict) and nothing else of this directory: the case types live here.
 *
 *   tsx bench/support/checker-runner.ts --in cases.json --out verdicts.json
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Attempt, ExecResult, TableRef, TableSource } from "../../blackboard/schemas.js";
import { evidenceFromExecution } from "../../grounding/evidence.js";
import { ruleVerdict } from "../../grounding/verdict.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { loadTables } from "../../tables/load.js";

/** A table of the cases, as a run receives it: a file path or inline `{columns, data}`. */
export interface CaseTable {
  id: string;
  source: TableSource;
}

export type Template =
  | "sum"
  | "mean"
  | "max"
  | "min"
  | "argmax"
  | "argmin"
  | "lookup"
  | "count"
  | "compare"
  | "difference";

export type Variant =
  | "right-result"
  | "right-print"
  | "cell-same-column"
  | "cell-same-row"
  | "cell-other-column"
  | "metadata"
  | "literal-result"
  | "literal-print"
  | "contradicts-result";

/** One labelled case: a question, the code that ran for it and the answer given. */
export interface CheckerCase {
  id: string;
  /** CaseTable.id */
  table: string;
  /** The template set's Template; the mutation set's question subtype. */
  template: Template | (string & {});
  /** The template set's Variant; the mutation set's right variant or mutation kind. */
  variant: Variant | (string & {});
  question: string;
  code: string;
  answer: string;
  /** The right answer, computed from the table in TypeScript. */
  gold: string;
  /** The label: the answer is the right one and the code derives it from the table. */
  right: boolean;
  /**
   * What the answer can rest on: "derived", the code's result computed from the table (the
   * right cases); "looked-up", the right answer to a question that only looks a cell up, on
   * code that does not compute it (metadata, a literal): the source cell in the column the
   * question names and the row it identifies holds it, so it is wrong under the label above
   * and right under a reading that counts lookups; null: nothing (a wrong answer, or a right
   * one to a computed question on code that does not compute it).
   */
  support: "derived" | "looked-up" | null;
}

export interface CaseFile {
  seed: number;
  tables: CaseTable[];
  cases: CheckerCase[];
}

/** One execution: a piece of code on one table. */
export interface RunRecord {
  table: string;
  code: string;
  ok: boolean;
  error: string | null;
  stdout: string;
  /** The code's result as the sandbox captured it, where the engine captures one. */
  result: { from: string; text: string; derived: string } | null;
  ms: number;
}

export interface CaseVerdict {
  id: string;
  pass: boolean;
  scores: { type: number; format: number; grounding: number };
  /** The verdict's support kind and confidence, where the engine gives them. */
  support: string | null;
  confidence: number | null;
  issues: string[];
  /** The judge threw: the case counts as not passed. */
  error: string | null;
}

export interface RunnerOutput {
  cwd: string;
  runs: RunRecord[];
  verdicts: CaseVerdict[];
  ingestMs: number;
  execMs: number;
  judgeMs: number;
}

function runKey(table: string, code: string): string {
  return `${table}\0${code}`;
}

/** The code's captured result, read loosely: an engine without the field gives null. */
function capturedResult(result: ExecResult): RunRecord["result"] {
  const captured = (result as { result?: unknown }).result;
  if (!captured || typeof captured !== "object") return null;
  const { from, text, derived } = captured as Record<string, unknown>;
  return { from: String(from), text: String(text), derived: String(derived) };
}

async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return out;
}

function progress(message: string): void {
  process.stderr.write(`[checker-runner] ${message}\n`);
}

/** Ingests the tables, runs each distinct code once per table and judges every case. */
export async function judgeCases(
  file: CaseFile,
  options: { concurrency?: number } = {},
): Promise<RunnerOutput> {
  const concurrency = options.concurrency ?? 2;
  let started = performance.now();
  const refs = new Map<string, TableRef>();
  for (const table of file.tables) {
    const [loaded] = await loadTables(table.source);
    if (!loaded) throw new Error(`table ${table.id}: ingest gave no table`);
    refs.set(table.id, loaded.table);
  }
  const ingestMs = performance.now() - started;

  const wanted = new Map<string, { table: string; code: string }>();
  for (const c of file.cases) wanted.set(runKey(c.table, c.code), { table: c.table, code: c.code });
  started = performance.now();
  const sandbox = await getSandbox("local");
  const jobs = [...wanted.values()];
  let done = 0;
  const executed = await mapLimit(jobs, concurrency, async ({ table, code }) => {
    const ref = refs.get(table);
    if (!ref) throw new Error(`no table ${table}`);
    const t0 = performance.now();
    const result = await sandbox.execute({ code, tables: [ref] });
    done++;
    if (done % 50 === 0 || done === jobs.length) progress(`ran ${done}/${jobs.length} codes`);
    return { table, code, result, ms: performance.now() - t0 };
  });
  const execMs = performance.now() - started;
  const results = new Map(executed.map((e) => [runKey(e.table, e.code), e.result]));

  started = performance.now();
  const verdicts: CaseVerdict[] = [];
  for (const c of file.cases) {
    const result = results.get(runKey(c.table, c.code));
    const ref = refs.get(c.table);
    if (!result || !ref) throw new Error(`case ${c.id}: no run`);
    // As the executor posts it: the attempt with its result, and its output as evidence.
    const attempt: Attempt = { id: "a1", code: c.code, raw: c.code, result, parseError: null };
    const evidence = evidenceFromExecution(attempt, result, "executor", new Date().toISOString());
    try {
      const { verdict } = await ruleVerdict({
        question: c.question,
        answer: { raw: `Final Answer: ${c.answer}`, final: c.answer, evidence: [] },
        evidence,
        attempts: [attempt],
        tables: [ref],
      });
      const loose = verdict as { support?: unknown; confidence?: unknown };
      verdicts.push({
        id: c.id,
        pass: verdict.pass,
        scores: { ...verdict.scores },
        support: typeof loose.support === "string" ? loose.support : null,
        confidence: typeof loose.confidence === "number" ? loose.confidence : null,
        issues: verdict.issues,
        error: null,
      });
    } catch (error) {
      verdicts.push({
        id: c.id,
        pass: false,
        scores: { type: 0, format: 0, grounding: 0 },
        support: null,
        confidence: null,
        issues: [],
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const judgeMs = performance.now() - started;
  progress(`judged ${verdicts.length} cases`);

  const runs: RunRecord[] = executed.map(({ table, code, result, ms }) => ({
    table,
    code,
    ok: result.ok,
    error: result.error ? `${result.error.type}: ${result.error.message}` : null,
    stdout: result.stdout.slice(0, 400),
    result: capturedResult(result),
    ms,
  }));
  return { cwd: process.cwd(), runs, verdicts, ingestMs, execMs, judgeMs };
}

function argument(name: string): string {
  const at = process.argv.indexOf(name);
  const value = at >= 0 ? process.argv[at + 1] : undefined;
  if (!value) throw new Error(`usage: checker-runner.ts --in CASES.json --out VERDICTS.json`);
  return value;
}

async function main(): Promise<void> {
  const file = JSON.parse(await readFile(argument("--in"), "utf8")) as CaseFile;
  try {
    const output = await judgeCases(file);
    await writeFile(argument("--out"), JSON.stringify(output));
  } finally {
    await closeSandboxes();
  }
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(path.resolve(entry)).href) {
  main().catch((error) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
    process.exit(1);
  });
}
