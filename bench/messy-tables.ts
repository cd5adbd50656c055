/**
 * The table reader on tables no one here wrote (issue 23, item 5; not a test), side by side:
 * the literal reading (`reading: { raw: true }`, before) and the interpreted one (after).
 *
 * 1. Interpretation. The 13 asked sheets of the 9 public spreadsheets (questions.json): header
 *    paths present among the loaded columns, titles, total and subtotal rows found and rows
 *    taken as totals wrongly, note rows found (and taken wrongly), sheets split into the tables
 *    the expectation lists. TableBench's annotated tables (tablebench-multirow.json), per
 *    category: tables whose every header path is found, total rows found, wrong totals.
 * 2. Answers of a scripted model that writes the obvious code for what it is shown: each
 *    question's spec (obvious.json) resolved against the loaded column names, run as pandas in
 *    the local sandbox, compared with the hand-checked answer. For TableBench also over a
 *    careful reading built from the annotation (its paths as names; header, total, section and
 *    note rows dropped): what the specs get when the reading is right.
 *
 *   npm run bench:messy
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import type { TableRef } from "../blackboard/schemas.js";
import { loadTableBench } from "../evals/datasets/tablebench.js";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import { loadTables } from "../tables/load.js";
import type { ReadingOptions } from "../tables/reading.js";
import {
  coverage,
  ObviousFileSchema,
  type ObviousSpec,
  obviousCode,
  parseEntry,
  sameAnswer,
  words,
} from "./support/obvious-coder.js";
import {
  dataTables,
  noteRows,
  pathsFound,
  type RowsScore,
  rowsScore,
  titleFound,
  totalRows,
} from "./support/reading-score.js";

const HERE = import.meta.dirname;
const MESSY = path.join(HERE, "../tests/fixtures/messy");
const TABLEBENCH = path.resolve(HERE, "../../shared/datasets/tablebench/tablebench_test.jsonl");

const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-messy-"));
process.env.TABLEMINDS_HOME = home;

const READINGS = [
  { key: "before", options: { raw: true } },
  { key: "after", options: {} },
] as const satisfies readonly { key: string; options: ReadingOptions }[];
type ReadingKey = (typeof READINGS)[number]["key"];

const Rows = z.array(z.number().int()).optional();
const Path = z.array(z.string());

const SheetExpectSchema = z.object({
  title: z.string().nullable().optional(),
  headerPaths: z.array(Path),
  totalRows: Rows,
  subtotalRows: Rows,
  noteRows: Rows,
  tables: z.array(z.object({ title: z.string() })).optional(),
});

const QuestionsSchema = z.object({
  questions: z.array(
    z.object({
      file: z.string(),
      sheet: z.string(),
      question: z.string(),
      answer: z.union([z.string(), z.number()]),
      tolerance: z.number().optional(),
      expect: SheetExpectSchema,
    }),
  ),
});

const AnnotatedSchema = z.object({
  tables: z.array(
    z.object({
      ids: z.array(z.string()).min(1),
      category: z.string(),
      headerPaths: z.array(Path),
      multiRowHeader: z.boolean(),
      inferredLabels: z.boolean().optional(),
      headerRows: Rows,
      totalRows: Rows,
      subtotalRows: Rows,
      sectionRows: Rows,
      noteRows: Rows,
      blankRows: Rows,
      questions: z.array(z.object({ id: z.string(), question: z.string(), answer: z.string() })),
    }),
  ),
});
type Annotated = z.infer<typeof AnnotatedSchema>["tables"][number];

function readJson<T>(file: string, schema: z.ZodType<T>): T {
  return schema.parse(JSON.parse(readFileSync(path.join(MESSY, file), "utf8")));
}

const sheetOf = (table: TableRef) => (table.origin as { sheet?: string } | undefined)?.sheet;

/** The table the coder writes its code over: the best names for the spec, then the best title. */
function chooseTable(spec: ObviousSpec, question: string, tables: readonly TableRef[]): TableRef {
  const asked = new Set(words(question));
  const titleScore = (t: TableRef) =>
    words([...(t.reading?.title ?? []), t.name].join(" ")).filter((w) => asked.has(w)).length;
  let best: TableRef | undefined;
  for (const table of tables) {
    if (!best) {
      best = table;
      continue;
    }
    const names = (t: TableRef) => t.columns.map((c) => c.name);
    const a = coverage(spec, names(table));
    const b = coverage(spec, names(best));
    if (a > b || (a === b && titleScore(table) > titleScore(best))) best = table;
  }
  if (!best) throw new Error("no table to write code over");
  return best;
}

interface Outcome {
  correct: boolean;
  printed: string;
}

/** Writes the obvious code for `spec` over the chosen table, runs it, checks the printed answer. */
async function answer(
  spec: ObviousSpec,
  question: string,
  gold: string | number,
  tables: readonly TableRef[],
  tolerance?: number,
): Promise<Outcome> {
  const table = chooseTable(spec, question, tables);
  const code = obviousCode(
    spec,
    table.columns.map((c) => c.name),
  );
  const sandbox = await getSandbox("local");
  const run = await sandbox.execute({ code, tables: [table], lineage: false, timeoutMs: 30_000 });
  const printed = run.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (!run.ok) return { correct: false, printed: `error: ${run.error?.type ?? "failed"}` };
  return { correct: sameAnswer(printed, gold, spec.tolerance ?? tolerance), printed };
}

const fraction = (n: number, of: number) => `${n}/${of}`;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const pad = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;

function markdown(header: readonly string[], rows: readonly (readonly (string | number)[])[]) {
  console.log(pad(header));
  console.log(pad(header.map(() => "---")));
  for (const row of rows) console.log(pad(row));
  console.log();
}

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: HERE }).toString().trim();
  } catch {
    return "unknown";
  }
}

// --- spreadsheets -------------------------------------------------------------------------

interface SheetScore {
  paths: [number, number];
  titles: [number, number];
  totals: RowsScore;
  notes: RowsScore;
  split?: boolean;
}

async function spreadsheets(specs: Map<string, ObviousSpec | { skip: string }>) {
  const { questions } = readJson("questions.json", QuestionsSchema);
  const files = [...new Set(questions.map((q) => q.file))];
  const loaded = new Map<string, TableRef[]>();
  for (const file of files) {
    for (const { key, options } of READINGS) {
      const tables = await loadTables({ path: path.join(MESSY, file) }, { reading: options });
      loaded.set(
        `${key}\0${file}`,
        tables.map((t) => t.table),
      );
    }
  }
  const sheetTables = (key: ReadingKey, file: string, sheet: string) =>
    dataTables((loaded.get(`${key}\0${file}`) ?? []).filter((t) => sheetOf(t) === sheet));

  const sheets = new Map<string, (typeof questions)[number]>();
  for (const q of questions)
    if (!sheets.has(`${q.file}\0${q.sheet}`)) sheets.set(`${q.file}\0${q.sheet}`, q);
  const scores: Record<ReadingKey, SheetScore[]> = { before: [], after: [] };
  const rows: (string | number)[][] = [];
  for (const q of sheets.values()) {
    const e = q.expect;
    const titles = [e.title, ...(e.tables ?? []).map((t) => t.title)].filter(
      (t): t is string => typeof t === "string",
    );
    const row: (string | number)[] = [`${q.file} ${q.sheet}`];
    for (const { key } of READINGS) {
      const tables = sheetTables(key, q.file, q.sheet);
      const score: SheetScore = {
        paths: [pathsFound(e.headerPaths, tables), e.headerPaths.length],
        titles: [titles.filter((t) => titleFound(t, tables)).length, titles.length],
        totals: rowsScore([...(e.totalRows ?? []), ...(e.subtotalRows ?? [])], totalRows(tables)),
        notes: rowsScore(e.noteRows ?? [], noteRows(tables)),
      };
      if (e.tables) score.split = tables.length === e.tables.length;
      scores[key].push(score);
      row.push(
        fraction(...score.paths),
        fraction(...score.titles),
        `${fraction(score.totals.found, score.totals.expected)} (${score.totals.wrong})`,
        `${fraction(score.notes.found, score.notes.expected)} (${score.notes.wrong})`,
        score.split === undefined ? "" : score.split ? "yes" : "no",
      );
    }
    rows.push(row);
  }
  const total = (key: ReadingKey) => {
    const s = scores[key];
    const split = s.filter((x) => x.split !== undefined);
    return [
      fraction(sum(s.map((x) => x.paths[0])), sum(s.map((x) => x.paths[1]))),
      fraction(sum(s.map((x) => x.titles[0])), sum(s.map((x) => x.titles[1]))),
      `${fraction(sum(s.map((x) => x.totals.found)), sum(s.map((x) => x.totals.expected)))} (${sum(s.map((x) => x.totals.wrong))})`,
      `${fraction(sum(s.map((x) => x.notes.found)), sum(s.map((x) => x.notes.expected)))} (${sum(s.map((x) => x.notes.wrong))})`,
      fraction(split.filter((x) => x.split).length, split.length),
    ];
  };
  rows.push(["**all 13 sheets**", ...total("before"), ...total("after")]);
  console.log(
    "## Spreadsheets: interpretation (before = literal reading, after = interpreted; totals and notes: found/expected (taken wrongly))\n",
  );
  const cols = ["paths", "titles", "totals", "notes", "split"];
  markdown(["sheet", ...cols.map((c) => `${c} before`), ...cols.map((c) => `${c} after`)], rows);

  const details: string[] = [];
  const correct: Record<ReadingKey, number> = { before: 0, after: 0 };
  let asked = 0;
  for (const q of questions) {
    const spec = specs.get(q.question);
    if (!spec) throw new Error(`obvious.json has no entry for "${q.question}"`);
    if ("skip" in spec) continue;
    asked++;
    const line = [`${q.file} ${q.sheet}: ${q.question.slice(0, 60)} [${q.answer}]`];
    for (const { key } of READINGS) {
      const outcome = await answer(
        spec,
        q.question,
        q.answer,
        sheetTables(key, q.file, q.sheet),
        q.tolerance,
      );
      if (outcome.correct) correct[key]++;
      line.push(`${key} ${outcome.correct ? "right" : "wrong"} (${outcome.printed.slice(0, 40)})`);
    }
    details.push(line.join(" | "));
  }
  return { asked, of: questions.length, correct, details };
}

// --- TableBench ---------------------------------------------------------------------------

/** The annotation's own reading: paths as names, header, total, section and note rows dropped. */
function carefulSource(annotated: Annotated, source: { columns: string[]; data: unknown[][] }) {
  const drop = new Set([
    ...(annotated.headerRows ?? []),
    ...(annotated.totalRows ?? []),
    ...(annotated.subtotalRows ?? []),
    ...(annotated.sectionRows ?? []),
    ...(annotated.noteRows ?? []),
    ...(annotated.blankRows ?? []),
  ]);
  return {
    name: "table",
    columns: annotated.headerPaths.map((p) => p.join(" / ")),
    data: source.data.filter((_, r) => !drop.has(r)),
  };
}

interface CategoryScore {
  tables: number;
  multiRow: number;
  paths: Record<ReadingKey, number>;
  totals: Record<ReadingKey, RowsScore>;
}

const noRows = (): RowsScore => ({ expected: 0, found: 0, wrong: 0 });
const addRows = (a: RowsScore, b: RowsScore): RowsScore => ({
  expected: a.expected + b.expected,
  found: a.found + b.found,
  wrong: a.wrong + b.wrong,
});

function emptyScore(): CategoryScore {
  return {
    tables: 0,
    multiRow: 0,
    paths: { before: 0, after: 0 },
    totals: { before: noRows(), after: noRows() },
  };
}

function addScore(a: CategoryScore, b: CategoryScore): CategoryScore {
  return {
    tables: a.tables + b.tables,
    multiRow: a.multiRow + b.multiRow,
    paths: { before: a.paths.before + b.paths.before, after: a.paths.after + b.paths.after },
    totals: {
      before: addRows(a.totals.before, b.totals.before),
      after: addRows(a.totals.after, b.totals.after),
    },
  };
}

async function tablebench(specs: Map<string, ObviousSpec | { skip: string }>) {
  const { tables: annotated } = readJson("tablebench-multirow.json", AnnotatedSchema);
  const examples = new Map((await loadTableBench(TABLEBENCH)).map((e) => [e.id, e]));
  const categories = new Map<string, CategoryScore>();
  const multi = emptyScore();
  /** Where the interpreted reading differs from the annotation, for the reader's owner. */
  const missed = { paths: [] as string[], totals: [] as string[] };
  const details: string[] = [];
  const correct = { before: 0, after: 0, careful: 0 };
  const multiCorrect = { before: 0, after: 0, careful: 0 };
  let asked = 0;
  let multiAsked = 0;
  let questions = 0;
  for (const a of annotated) {
    const source = examples.get(a.ids[0] ?? "")?.tables[0];
    if (!source || !("columns" in source)) throw new Error(`TableBench has no table ${a.ids[0]}`);
    const inline = { name: "table", columns: source.columns, data: source.data };
    const score = categories.get(a.category) ?? emptyScore();
    categories.set(a.category, score);
    const targets = a.multiRowHeader ? [score, multi] : [score];
    for (const s of targets) {
      s.tables++;
      if (a.multiRowHeader) s.multiRow++;
    }
    const expectedTotals = [...(a.totalRows ?? []), ...(a.subtotalRows ?? [])].map((r) => r + 1);
    const read = {} as Record<ReadingKey, TableRef[]>;
    for (const { key, options } of READINGS) {
      const all = (await loadTables(inline, { reading: options })).map((l) => l.table);
      read[key] = dataTables(all);
      const matched =
        pathsFound(a.headerPaths, read[key], a.inferredLabels) === a.headerPaths.length;
      const totals = rowsScore(expectedTotals, totalRows(all));
      for (const s of targets) {
        if (matched) s.paths[key]++;
        s.totals[key] = addRows(s.totals[key], totals);
      }
      if (key === "after") {
        const id = `${a.ids[0]?.slice(0, 8)} (${a.category})`;
        if (!matched) missed.paths.push(id);
        if (totals.found < totals.expected || totals.wrong > 0) {
          missed.totals.push(`${id} ${totals.found}/${totals.expected} (${totals.wrong})`);
        }
      }
    }
    const careful = (await loadTables(carefulSource(a, inline), { reading: { raw: true } })).map(
      (l) => l.table,
    );
    for (const q of a.questions) {
      questions++;
      const spec = specs.get(q.id);
      if (!spec) throw new Error(`obvious.json has no entry for TableBench ${q.id}`);
      if ("skip" in spec) continue;
      asked++;
      if (a.multiRowHeader) multiAsked++;
      const line = [`${q.id.slice(0, 8)} ${a.category}: ${q.question.slice(0, 50)} [${q.answer}]`];
      const readings = [...Object.entries(read), ["careful", careful]] as const;
      for (const [key, tables] of readings) {
        const outcome = await answer(spec, q.question, q.answer, tables);
        if (outcome.correct) correct[key as keyof typeof correct]++;
        if (outcome.correct && a.multiRowHeader) multiCorrect[key as keyof typeof correct]++;
        line.push(
          `${key} ${outcome.correct ? "right" : "wrong"} (${outcome.printed.slice(0, 30)})`,
        );
      }
      details.push(line.join(" | "));
    }
  }
  console.log(
    "## TableBench: interpretation (header paths: tables whose every path is found; totals: rows found/expected (taken wrongly))\n",
  );
  const line = (name: string, s: CategoryScore) => [
    name,
    s.tables,
    s.multiRow,
    fraction(s.paths.before, s.tables),
    fraction(s.paths.after, s.tables),
    `${fraction(s.totals.before.found, s.totals.before.expected)} (${s.totals.before.wrong})`,
    `${fraction(s.totals.after.found, s.totals.after.expected)} (${s.totals.after.wrong})`,
  ];
  const everything = [...categories.values()].reduce(addScore, emptyScore());
  markdown(
    [
      "category",
      "tables",
      "multi-row header",
      "paths before",
      "paths after",
      "totals before",
      "totals after",
    ],
    [
      ...[...categories.entries()].map(([name, s]) => line(name, s)),
      line("**multi-row header tables**", multi),
      line("**all**", everything),
    ],
  );
  console.log(`Header paths missed after: ${missed.paths.join(", ")}.\n`);
  console.log(`Totals missed or wrong after: ${missed.totals.join(", ")}.\n`);
  const multiQuestions = sum(
    annotated.filter((a) => a.multiRowHeader).map((a) => a.questions.length),
  );
  return {
    asked,
    of: questions,
    correct,
    multi: { asked: multiAsked, of: multiQuestions, correct: multiCorrect },
    details,
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const obvious = readJson("obvious.json", ObviousFileSchema);
  const sheetSpecs = new Map(obvious.spreadsheets.map((e) => [e.question, parseEntry(e)]));
  const benchSpecs = new Map(obvious.tablebench.map((e) => [e.id, parseEntry(e)]));
  console.log(`# Messy tables, ${new Date().toISOString().slice(0, 10)}, commit ${commit()}\n`);
  const sheets = await spreadsheets(sheetSpecs);
  const bench = await tablebench(benchSpecs);
  console.log("## Answers of the scripted coder (right answers)\n");
  markdown(
    ["corpus", "questions", "with a spec", "before", "after", "careful reading"],
    [
      ["spreadsheets", sheets.of, sheets.asked, sheets.correct.before, sheets.correct.after, ""],
      [
        "TableBench",
        bench.of,
        bench.asked,
        bench.correct.before,
        bench.correct.after,
        bench.correct.careful,
      ],
      [
        "TableBench, multi-row headers",
        bench.multi.of,
        bench.multi.asked,
        bench.multi.correct.before,
        bench.multi.correct.after,
        bench.multi.correct.careful,
      ],
    ],
  );
  console.log("## Each question\n");
  for (const line of [...sheets.details, ...bench.details]) console.log(`- ${line}`);
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

try {
  await main();
} finally {
  await closeSandboxes();
  rmSync(home, { recursive: true, force: true });
}
