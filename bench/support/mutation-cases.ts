/**
 * The checker's mutation set (issue 33): labelled cases the checker's rules were not written
 * from. Right code for TableBench FactChecking and NumericalReasoning questions (written by
 * hand against the gold answers, bench/support/right-code/*.jsonl, each checked to reach the
 * gold answer by TableBench's own exact match) is mutated so that it still runs but answers
 * another question (bench/support/mutate.py: another column, a filter dropped or changed,
 * another aggregate, a row off by one, head(n) with another n, the opposite sort order), and
 * answers are mutated as models mistake them (a scale word, a fraction given as a percent, a
 * list cut or extended). Every mutant whose answer differs from the gold answer (by TableBench's
 * exact match) is a wrong case. The right cases: the unmutated code with its answer written
 * as the gold is, with a scale word, with a percent sign, and printed instead of assigned.
 *
 * Labels come from running the code in the local sandbox and scoring against the gold answer;
 * nothing of the checker is used to make them.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { CodeResult, TableRef } from "../../blackboard/schemas.js";
import { exactMatch } from "../../evals/metrics/tablebench.js";
import type { Sandbox } from "../../sandbox/index.js";
import type { CaseFile, CheckerCase } from "./checker-runner.js";
import { answerLike, ingest, type TableBenchRow, tableBenchRows } from "./right-code.js";

const HERE = import.meta.dirname;
const RIGHT_CODE = path.join(HERE, "right-code");
const MUTATOR = path.join(HERE, "mutate.py");

export const RIGHT_VARIANTS = ["right", "right-print", "right-scale", "right-percent"] as const;
export const CODE_MUTATIONS = [
  "other-column",
  "filter-dropped",
  "filter-changed",
  "other-aggregate",
  "row-off-by-one",
  "head-n",
  "sort-flipped",
] as const;
export const ANSWER_MUTATIONS = ["scale", "fraction-percent", "list-cut", "list-extended"] as const;
export const KINDS = [...RIGHT_VARIANTS, ...CODE_MUTATIONS, ...ANSWER_MUTATIONS];

/** Questions looked at while the alignment rules were written (the first in file order); the rest are held out. */
export const DEV_QUESTIONS = 150;

export interface MutationCase extends CheckerCase {
  /** "dev": a question whose cases were looked at while writing the rules; "held-out": never. */
  split: "dev" | "held-out";
  /** What changed, in words (mutants only). */
  note?: string;
  /** Whether the case's code result is derived from the table (as the sandbox found it). */
  derived: string | null;
}

export interface MutationFile extends CaseFile {
  cases: MutationCase[];
  /** Counts of what was dropped on the way, by reason. */
  dropped: Record<string, number>;
}

export interface BuildOptions {
  seed: number;
  /** Mutants kept per kind and question (mutate.py offers up to 2). */
  perKind: number;
  /** At most this many questions (0: all). */
  limit: number;
  python: string;
}

interface RightCode {
  id: string;
  code: string;
}

export function rightCode(dir = RIGHT_CODE): RightCode[] {
  const out: RightCode[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    for (const line of readFileSync(path.join(dir, file), "utf8").split("\n")) {
      if (line.trim()) out.push(JSON.parse(line) as RightCode);
    }
  }
  return out;
}

interface Mutant {
  kind: string;
  code: string;
  note: string;
}

function mutants(
  python: string,
  code: string,
  ref: TableRef,
  row: TableBenchRow,
  seed: number,
): Mutant[] {
  const values: Record<string, unknown[]> = {};
  row.table.columns.forEach((column, i) => {
    const seen = [...new Set(row.table.data.map((r) => r[i]))].slice(0, 30);
    values[String(column)] = seen;
  });
  const input = JSON.stringify({
    code,
    columns: ref.columns.map((c) => ({ name: c.name, dtype: c.dtype })),
    values,
    seed,
  });
  const out = execFileSync(python, [MUTATOR], { input, encoding: "utf8", maxBuffer: 1 << 24 });
  return JSON.parse(out) as Mutant[];
}

/** The code with its last `result = X` printed instead: `print(X)`. */
function printed(code: string): string | null {
  const lines = code.trimEnd().split("\n");
  const last = lines.at(-1) ?? "";
  const match = /^result\s*=\s*(.+)$/.exec(last);
  if (!match) return null;
  return [...lines.slice(0, -1), `print(${match[1]})`].join("\n");
}

const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

function numberOf(result: CodeResult): number | null {
  const [value] = result.values;
  return result.values.length === 1 && typeof value === "number" && Number.isFinite(value)
    ? value
    : null;
}

/** The number written exactly with a scale word: 74886 -> "74.886 thousand". */
function withScale(gold: string): string | null {
  if (!PLAIN_NUMBER.test(gold)) return null;
  const n = Number(gold);
  if (Math.abs(n) < 10_000) return null;
  const [scale, word] = Math.abs(n) >= 1e6 ? [1e6, "million"] : [1e3, "thousand"];
  const places = (/\.(\d+)$/.exec(gold)?.[1]?.length ?? 0) + Math.log10(scale);
  return `${(n / scale).toFixed(places).replace(/\.?0+$/, "")} ${word}`;
}

function asksPercent(question: string): boolean {
  return /\b(?:percent|percentage)\b|%/i.test(question);
}

/** Builds the set: runs the right code and every mutant in `sandbox`, labels by the gold answer. */
export async function buildMutationFile(
  sandbox: Sandbox,
  options: BuildOptions,
  progress: (message: string) => void = () => {},
): Promise<MutationFile> {
  const rows = tableBenchRows();
  const entries = rightCode().slice(0, options.limit > 0 ? options.limit : undefined);
  const tables: CaseFile["tables"] = [];
  const cases: MutationCase[] = [];
  const dropped: Record<string, number> = {};
  const drop = (why: string) => {
    dropped[why] = (dropped[why] ?? 0) + 1;
  };
  let done = 0;
  for (const [index, entry] of entries.entries()) {
    const split = index < DEV_QUESTIONS ? "dev" : "held-out";
    const row = rows.get(entry.id);
    if (!row) {
      drop("no such question");
      continue;
    }
    const ref = await ingest(row);
    const run = await sandbox.execute({ code: entry.code, tables: [ref] });
    const result = run.result;
    if (!run.ok || !result) {
      drop("right code failed");
      continue;
    }
    const answer = answerLike(row.answer, result);
    if (exactMatch(row.answer, answer) !== 1) {
      drop("right code misses the gold");
      continue;
    }
    const tableId = `tablebench:${row.id}`;
    tables.push({
      id: tableId,
      source: {
        name: "table",
        columns: row.table.columns.map(String),
        data: row.table.data,
      } as never,
    });
    const base = {
      table: tableId,
      template: row.qsubtype,
      question: row.question,
      gold: row.answer,
    };
    const add = (
      variant: string,
      code: string,
      given: string,
      right: boolean,
      derived: string | null,
      note?: string,
    ) =>
      cases.push({
        ...base,
        id: `${row.id}#${variant}${cases.filter((c) => c.table === tableId && c.variant === variant).length + 1}`,
        variant,
        code,
        answer: given,
        right,
        split,
        support: right ? "derived" : null,
        derived,
        ...(note ? { note } : {}),
      });

    // The right cases.
    add("right", entry.code, answer, true, result.derived);
    const print = printed(entry.code);
    if (print) add("right-print", print, answer, true, result.derived);
    const scaled = withScale(answer);
    if (scaled) add("right-scale", entry.code, scaled, true, result.derived);
    if (asksPercent(row.question) && PLAIN_NUMBER.test(answer))
      add("right-percent", entry.code, `${answer}%`, true, result.derived);

    // Answers mutated.
    const n = numberOf(result);
    if (n !== null && PLAIN_NUMBER.test(answer) && Math.abs(n) >= 1) {
      add(
        "scale",
        entry.code,
        `${answer} thousand`,
        false,
        result.derived,
        "the answer says thousands",
      );
    }
    if (n !== null && asksPercent(row.question) && Math.abs(n) > 1) {
      const places = /\.(\d+)$/.exec(answer)?.[1]?.length ?? 2;
      const fraction = `${entry.code}\nresult = result / 100`;
      const given = `${(n / 100).toFixed(Math.max(2, places))}%`;
      if (exactMatch(row.answer, given) !== 1)
        add(
          "fraction-percent",
          fraction,
          given,
          false,
          result.derived,
          "a fraction answered as a percent",
        );
    }
    const items = answer.split(/,\s+/);
    if (result.values.length >= 2 && items.length >= 2) {
      add(
        "list-cut",
        entry.code,
        items.slice(0, -1).join(", "),
        false,
        result.derived,
        "the last item left out",
      );
      const others = row.table.data
        .flatMap((r) => r.map(String))
        .filter(
          (v) => !items.includes(v) && !PLAIN_NUMBER.test(v) === !PLAIN_NUMBER.test(items[0] ?? ""),
        );
      const extra = others[options.seed % Math.max(1, others.length)];
      if (extra)
        add(
          "list-extended",
          entry.code,
          [...items, extra].join(", "),
          false,
          result.derived,
          `"${extra}" added`,
        );
    }

    // Code mutated.
    const offered = mutants(options.python, entry.code, ref, row, options.seed);
    const kept = new Map<string, number>();
    for (const mutant of offered) {
      if ((kept.get(mutant.kind) ?? 0) >= options.perKind) continue;
      const ran = await sandbox.execute({ code: mutant.code, tables: [ref] });
      if (!ran.ok || !ran.result) {
        drop(`${mutant.kind}: the mutant fails`);
        continue;
      }
      const given = answerLike(row.answer, ran.result);
      if (exactMatch(row.answer, given) === 1) {
        drop(`${mutant.kind}: the mutant still reaches the gold`);
        continue;
      }
      kept.set(mutant.kind, (kept.get(mutant.kind) ?? 0) + 1);
      add(mutant.kind, mutant.code, given, false, ran.result.derived, mutant.note);
    }
    done++;
    if (done % 25 === 0 || done === entries.length)
      progress(`built ${done}/${entries.length} questions, ${cases.length} cases`);
  }
  return { seed: options.seed, tables, cases, dropped };
}
