/**
 * Reads the public statistics files of tests/fixtures/wild with one engine and runs the obvious
 * code for each question (bench/wild-tables.ts): what the reader found (header paths, totals,
 * notes, title lines, letters decoded), and per question the printed answer, whether it is
 * right, whether the checker passed it and whether the evidence names source cells.
 *
 * This file is copied into a worktree of the baseline commit and run there, so it imports only
 * what both versions have (loadTables, getSandbox, closeSandboxes, evidenceFromExecution,
 * ruleVerdict, and the bench helpers it is copied with).
 *
 *   tsx bench/support/wild-runner.ts --out result.json [--wild tests/fixtures/wild]
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Attempt, TableRef } from "../../blackboard/schemas.js";
import { evidenceFromExecution } from "../../grounding/evidence.js";
import { ruleVerdict } from "../../grounding/verdict.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { loadTables } from "../../tables/load.js";
import {
  coverage,
  type ObviousSpec,
  obviousCode,
  parseEntry,
  sameAnswer,
} from "./obvious-coder.js";
import { dataTables, noteRows, pathsFound, rowsScore, totalRows } from "./reading-score.js";

/** The files' folder: this tree's, or the one `--wild` names (a baseline worktree has none). */
const at = process.argv.indexOf("--wild");
const WILD =
  at >= 0
    ? (process.argv[at + 1] as string)
    : path.resolve(import.meta.dirname, "../../tests/fixtures/wild");

export interface WildExpect {
  titleLines?: number[];
  headerLines?: number[];
  headerPaths?: string[][];
  totalLines?: number[];
  subtotalLines?: number[];
  noteLines?: number[];
}

export interface WildQuestion {
  file: string;
  question: string;
  answer: string | number | (string | number)[];
  expect?: WildExpect;
}

export interface FileFacts {
  file: string;
  error: string | null;
  paths: [number, number];
  titles: [number, number];
  totals: { expected: number; found: number; wrong: number };
  notes: { expected: number; found: number; wrong: number };
  /** Cells holding a C1 control character (U+0080-U+009F): a Windows-1252 byte read as Latin-1. */
  c1Cells: number;
  rows: number;
  columns: number;
}

export interface QuestionOutcome {
  file: string;
  question: string;
  skipped: string | null;
  printed: string;
  right: boolean;
  pass: boolean;
  cited: boolean;
  confidence: number | null;
  issues: string[];
}

export interface WildOutput {
  files: FileFacts[];
  questions: QuestionOutcome[];
}

const C1 = /[\u0080-\u009f]/;

function readJson<T>(name: string): T {
  return JSON.parse(readFileSync(path.join(WILD, name), "utf8")) as T;
}

async function cellsWithC1(tables: readonly TableRef[]): Promise<number> {
  let n = 0;
  for (const table of tables) {
    for (const column of table.columns) if (C1.test(column.name)) n++;
    const text = readFileSync(table.uri, "utf8");
    for (const line of text.split("\n")) if (C1.test(line)) n++;
  }
  return n;
}

async function factsOf(file: string, expect: WildExpect, tables: TableRef[]): Promise<FileFacts> {
  const data = dataTables(tables);
  const paths = expect.headerPaths ?? [];
  const titles = expect.titleLines ?? [];
  const takenTitles = data.flatMap((t) => t.reading?.title ?? []).length;
  return {
    file,
    error: null,
    paths: [pathsFound(paths, data), paths.length],
    titles: [Math.min(takenTitles, titles.length), titles.length],
    totals: rowsScore(
      [...(expect.totalLines ?? []), ...(expect.subtotalLines ?? [])],
      totalRows(data),
    ),
    notes: rowsScore(expect.noteLines ?? [], noteRows(data)),
    c1Cells: await cellsWithC1(tables),
    rows: data.reduce((n, t) => n + t.rows, 0),
    columns: data.reduce((n, t) => n + t.columns.length, 0),
  };
}

/** The table the coder writes over: the one whose names cover the spec best. */
function chooseTable(spec: ObviousSpec, tables: readonly TableRef[]): TableRef | undefined {
  let best: TableRef | undefined;
  for (const table of tables) {
    const names = (t: TableRef) => t.columns.map((c) => c.name);
    if (!best || coverage(spec, names(table)) > coverage(spec, names(best))) best = table;
  }
  return best;
}

const CELL_ID = /^[^:]+:r\d+:.+$/s;

async function answer(
  spec: ObviousSpec,
  q: WildQuestion,
  tables: readonly TableRef[],
  all: readonly TableRef[],
): Promise<QuestionOutcome> {
  const base = { file: q.file, question: q.question, skipped: null };
  const table = chooseTable(spec, tables);
  const gold = Array.isArray(q.answer) ? q.answer.join(", ") : q.answer;
  if (!table) {
    return {
      ...base,
      printed: "no table",
      right: false,
      pass: false,
      cited: false,
      confidence: null,
      issues: [],
    };
  }
  const code = obviousCode(
    spec,
    table.columns.map((c) => c.name),
  );
  const sandbox = await getSandbox("local");
  // As a run gets them: every table of the file, the one written over first (it is `df`).
  const given = [table, ...all.filter((t) => t !== table)];
  const result = await sandbox.execute({ code, tables: given, timeoutMs: 30_000 });
  const printed = result.ok
    ? (result.stdout.trim().split("\n").at(-1)?.trim() ?? "")
    : `error: ${result.error?.type ?? "failed"}`;
  const attempt: Attempt = { id: "a1", code, raw: code, result, parseError: null };
  const evidence = evidenceFromExecution(attempt, result, "executor", new Date().toISOString());
  const cited = evidence.some((e) => e.provenance.parents.some((id) => CELL_ID.test(id)));
  const { verdict } = await ruleVerdict({
    question: q.question,
    answer: { raw: `Final Answer: ${printed}`, final: printed, evidence: [] },
    evidence,
    attempts: [attempt],
    tables: given,
  });
  const loose = verdict as { confidence?: unknown };
  return {
    ...base,
    printed,
    right: result.ok && sameAnswer(printed, gold, spec.tolerance),
    pass: verdict.pass,
    cited,
    confidence: typeof loose.confidence === "number" ? loose.confidence : null,
    issues: verdict.issues,
  };
}

export async function runWild(): Promise<WildOutput> {
  const { questions } = readJson<{ questions: WildQuestion[] }>("questions.json");
  const specs = readJson<{ questions: Record<string, unknown>[] }>("obvious.json").questions;
  const files: FileFacts[] = [];
  const loaded = new Map<string, TableRef[]>();
  for (const q of questions) {
    if (loaded.has(q.file)) continue;
    try {
      const tables = (await loadTables({ path: path.join(WILD, q.file) })).map((l) => l.table);
      loaded.set(q.file, tables);
      files.push(await factsOf(q.file, q.expect ?? {}, tables));
    } catch (error) {
      loaded.set(q.file, []);
      const message = error instanceof Error ? error.message : String(error);
      const none = { expected: 0, found: 0, wrong: 0 };
      files.push({
        file: q.file,
        error: message,
        paths: [0, q.expect?.headerPaths?.length ?? 0],
        titles: [0, 0],
        totals: none,
        notes: none,
        c1Cells: 0,
        rows: 0,
        columns: 0,
      });
    }
  }
  const outcomes: QuestionOutcome[] = [];
  for (const q of questions) {
    const entry = specs.find((s) => s.question === q.question);
    const spec = entry ? parseEntry(entry) : { skip: "no spec" };
    if ("skip" in spec) {
      outcomes.push({
        file: q.file,
        question: q.question,
        skipped: spec.skip,
        printed: "",
        right: false,
        pass: false,
        cited: false,
        confidence: null,
        issues: [],
      });
      continue;
    }
    const all = loaded.get(q.file) ?? [];
    outcomes.push(await answer(spec, q, dataTables(all), all));
    process.stderr.write(`[wild-runner] ${outcomes.length}/${questions.length}\n`);
  }
  return { files, questions: outcomes };
}

const out = process.argv[process.argv.indexOf("--out") + 1];
if (process.argv.includes("--out") && out) {
  try {
    writeFileSync(out, JSON.stringify(await runWild(), null, 1));
  } finally {
    await closeSandboxes();
  }
}
