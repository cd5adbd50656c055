/**
 * The checker measured on labelled cases whose truth is known by construction (issue 21,
 * "Measure it"): questions generated from templates over the example tables and a seeded draw
 * of TableBench's test tables, each with right code and its right answer and with wrong
 * variants (a coincidental cell, code that reads only metadata or hard-codes the answer, an
 * answer that contradicts the code's result); see bench/support/checker-cases.ts.
 *
 * Two engines judge the same cases in one run, each in its own process through
 * bench/support/checker-runner.ts: the baseline commit's (a git worktree of it in a temp
 * directory, node_modules linked, the runner copied in) and this tree's. Each ingests the
 * tables, runs the code in its own local sandbox and judges with its own `ruleVerdict`.
 * Reported: pass precision (of the passed, how many are right), recall (of the right, how many
 * passed), the pass rate per variant and per template. Goal: precision >= 0.98, recall >= 0.9.
 * Writes bench/results/checker/results.json (figures, and every case with each engine's verdict)
 * and report.txt (the tables printed).
 *
 *   npm run bench:checker [-- --seed 21 --tables 40 --per-table 2 --baseline 8cb955a --no-baseline]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { git, ROOT } from "./support/baseline.js";
import {
  buildCaseFile,
  type CaseFile,
  type CheckerCase,
  DEFAULT_OPTIONS,
  TEMPLATES,
  VARIANTS,
} from "./support/checker-cases.js";
import {
  type EngineRun,
  engineDirty,
  fixed,
  option,
  ratio,
  runEngines,
  table,
} from "./support/checker-engines.js";
import type { CaseVerdict, RunnerOutput } from "./support/checker-runner.js";

const TABLEBENCH = path.resolve(ROOT, "../shared/datasets/tablebench/tablebench_test.jsonl");
const EXAMPLES = path.join(ROOT, "examples");
const RESULTS = path.join(ROOT, "bench/results/checker");
const GOAL = { precision: 0.98, recall: 0.9 };

// --- figures -----------------------------------------------------------------------------

interface Rate {
  n: number;
  passed: number;
}

interface Figures {
  cases: number;
  right: number;
  passed: number;
  rightPassed: number;
  precision: number | null;
  recall: number | null;
  goalMet: boolean;
  /** The same with a lookup's right cell counted right without code computing it. */
  /** Right answers the code derives, and how many of them passed: the goal's recall. */
  derived: { right: number; passed: number };
  /** Recall over every right answer, lookups included. */
  allRecall: number | null;
  errors: number;
  byVariant: Record<string, Rate & { right: number; lookups: number }>;
  /** Right answers to lookups on code that does not compute them: passed of all. */
  lookupCells: Rate;
  byTemplate: Record<
    string,
    { n: number; right: Rate; wrong: Rate; precision: number | null; recall: number | null }
  >;
  supports: Record<string, number>;
}

function figures(cases: readonly CheckerCase[], verdicts: readonly CaseVerdict[]): Figures {
  const byId = new Map(verdicts.map((v) => [v.id, v]));
  const passOf = (c: CheckerCase) => byId.get(c.id)?.pass === true;
  const count = (items: readonly CheckerCase[], test: (c: CheckerCase) => boolean) =>
    items.filter(test).length;
  const right = count(cases, (c) => c.right);
  const passed = count(cases, passOf);
  const rightPassed = count(cases, (c) => c.right && passOf(c));
  // The goal's recall is on answers that are right and derived; lookups are reported apart.
  const derived = (c: CheckerCase) => c.right && c.support === "derived";
  const derivedRight = count(cases, derived);
  const derivedPassed = count(cases, (c) => derived(c) && passOf(c));
  const precision = ratio(rightPassed, passed);
  const recall = ratio(derivedPassed, derivedRight);
  const byVariant: Figures["byVariant"] = {};
  for (const variant of VARIANTS) {
    const items = cases.filter((c) => c.variant === variant);
    byVariant[variant] = {
      n: items.length,
      right: count(items, (c) => c.right),
      lookups: count(items, (c) => c.support === "looked-up"),
      passed: count(items, passOf),
    };
  }
  const byTemplate: Figures["byTemplate"] = {};
  for (const template of TEMPLATES) {
    const items = cases.filter((c) => c.template === template);
    const rights = items.filter((c) => c.right);
    const wrongs = items.filter((c) => !c.right);
    const r = { n: rights.length, passed: count(rights, passOf) };
    const w = { n: wrongs.length, passed: count(wrongs, passOf) };
    byTemplate[template] = {
      n: items.length,
      right: r,
      wrong: w,
      precision: ratio(r.passed, r.passed + w.passed),
      recall: ratio(r.passed, r.n),
    };
  }
  const supports: Record<string, number> = {};
  for (const v of verdicts) {
    const key = v.support ?? "(none given)";
    supports[key] = (supports[key] ?? 0) + 1;
  }
  return {
    cases: cases.length,
    right,
    passed,
    rightPassed,
    precision,
    recall,
    goalMet: (precision ?? 0) >= GOAL.precision && (recall ?? 0) >= GOAL.recall,
    derived: { right: derivedRight, passed: derivedPassed },
    allRecall: ratio(rightPassed, right),
    lookupCells: {
      n: count(cases, (c) => c.support === "looked-up"),
      passed: count(cases, (c) => c.support === "looked-up" && passOf(c)),
    },
    errors: verdicts.filter((v) => v.error).length,
    byVariant,
    byTemplate,
    supports,
  };
}

// --- printing ----------------------------------------------------------------------------

const share = (r: Rate) => `${fixed(ratio(r.passed, r.n))} (${r.passed}/${r.n})`;

type Engine = EngineRun & { figures: Figures };

function report(file: CaseFile, engines: readonly Engine[]): string {
  const names = engines.map((e) => e.label);
  const right = file.cases.filter((c) => c.right).length;
  const lines = [
    `Checker bench: ${file.cases.length} cases (${right} right, ${file.cases.length - right} wrong) on ${file.tables.length} tables, seed ${file.seed}`,
    "",
    table(
      ["", ...names],
      [
        [
          "pass precision",
          ...engines.map(
            (e) => `${fixed(e.figures.precision)} (${e.figures.rightPassed}/${e.figures.passed})`,
          ),
        ],
        [
          "pass recall (right and derived)",
          ...engines.map(
            (e) =>
              `${fixed(e.figures.recall)} (${e.figures.derived.passed}/${e.figures.derived.right})`,
          ),
        ],
        [
          "pass recall (every right answer)",
          ...engines.map(
            (e) => `${fixed(e.figures.allRecall)} (${e.figures.rightPassed}/${e.figures.right})`,
          ),
        ],
        [
          `goal: P >= ${GOAL.precision}, R >= ${GOAL.recall}`,
          ...engines.map((e) => (e.figures.goalMet ? "met" : "not met")),
        ],
        [
          "lookup cells on non-computing code passed",
          ...engines.map((e) => share(e.figures.lookupCells)),
        ],
        ["judge errors", ...engines.map((e) => String(e.figures.errors))],
        ["gold = right code's output", ...engines.map((e) => goldSummary(file, e.output))],
        [
          "code runs failed",
          ...engines.map(
            (e) => `${e.output.runs.filter((r) => !r.ok).length}/${e.output.runs.length}`,
          ),
        ],
        ["runs with a captured result", ...engines.map((e) => capturedSummary(e.output))],
        [
          "time: exec / judge / wall (s)",
          ...engines.map(
            (e) =>
              `${(e.output.execMs / 1000).toFixed(1)} / ${(e.output.judgeMs / 1000).toFixed(1)} / ${(e.output.wallMs / 1000).toFixed(1)}`,
          ),
        ],
      ],
    ),
    "",
    "Pass rate per variant (right variants: recall; wrong variants: should be 0)",
    table(
      ["variant", "n", "label", ...names],
      VARIANTS.map((variant) => {
        const first = engines[0]?.figures.byVariant[variant];
        const kind = !first
          ? ""
          : first.right === first.n
            ? "right"
            : first.right === 0
              ? "wrong"
              : `${first.right} right`;
        const label = first?.lookups ? `${kind} (${first.lookups} lookup)` : kind;
        return [
          variant,
          String(first?.n ?? 0),
          label,
          ...engines.map((e) => share(e.figures.byVariant[variant] ?? { n: 0, passed: 0 })),
        ];
      }),
    ),
    "",
    `Per template: recall on the right cases, pass rate on the wrong ones, precision (${names.join(" -> ")})`,
    table(
      ["template", "right", "wrong", "recall", "wrong passed", "precision"],
      TEMPLATES.map((template) => {
        const first = engines[0]?.figures.byTemplate[template];
        const each = (f: (t: Figures["byTemplate"][string]) => string) =>
          engines
            .map((e) => {
              const t = e.figures.byTemplate[template];
              return t ? f(t) : "";
            })
            .join(" -> ");
        return [
          template,
          String(first?.right.n ?? 0),
          String(first?.wrong.n ?? 0),
          each((t) => fixed(t.recall)),
          each((t) => `${t.wrong.passed}/${t.wrong.n}`),
          each((t) => fixed(t.precision)),
        ];
      }),
    ),
    "",
    `Verdict support kinds: ${engines.map((e) => `${e.label}: ${JSON.stringify(e.figures.supports)}`).join("; ")}`,
  ];
  return lines.join("\n");
}

function goldSummary(file: CaseFile, output: RunnerOutput): string {
  const checked = file.cases.filter((c) => c.variant === "right-print").length;
  const wrong = goldDisagreements(file, output);
  return `${checked - wrong.length}/${checked}`;
}

function capturedSummary(output: RunnerOutput): string {
  const captured = output.runs.filter((r) => r.result);
  if (captured.length === 0) return `0/${output.runs.length}`;
  const derived = (d: string) => captured.filter((r) => r.result?.derived === d).length;
  return `${captured.length}/${output.runs.length} (derived ${derived("yes")} yes, ${derived("no")} no, ${derived("unknown")} unknown)`;
}

/**
 * The bench's own check: the gold answer, computed in TypeScript, against what the right code
 * printed in this engine's sandbox (rounded to the gold answer's decimals). Any disagreement
 * is a bug of the case generator, not of the checker.
 */
function goldDisagreements(file: CaseFile, output: RunnerOutput): string[] {
  const stdout = new Map(output.runs.map((r) => [`${r.table}\0${r.code}`, r.stdout]));
  const out: string[] = [];
  for (const c of file.cases) {
    if (c.variant !== "right-print") continue;
    const printed =
      (stdout.get(`${c.table}\0${c.code}`) ?? "").trim().split("\n").at(-1)?.trim() ?? "";
    const places = /\.(\d+)$/.exec(c.gold)?.[1]?.length ?? 0;
    const number = Number(printed);
    const agrees =
      printed === c.gold ||
      (/^-?\d+(?:\.\d+)?$/.test(c.gold) &&
        printed !== "" &&
        Number.isFinite(number) &&
        Number(number.toFixed(places)) === Number(c.gold));
    if (!agrees)
      out.push(`${c.id}: gold ${JSON.stringify(c.gold)}, printed ${JSON.stringify(printed)}`);
  }
  return out;
}

/** Per case: its label and each engine's verdict; issues only where the engine misjudged it. */
function caseRows(file: CaseFile, engines: readonly Engine[]) {
  const verdicts = engines.map((e) => new Map(e.output.verdicts.map((v) => [v.id, v])));
  return file.cases.map((c) => ({
    id: c.id,
    template: c.template,
    variant: c.variant,
    question: c.question,
    code: c.code,
    answer: c.answer,
    gold: c.gold,
    right: c.right,
    support: c.support,
    verdicts: Object.fromEntries(
      engines.map((e, i) => {
        const v = verdicts[i]?.get(c.id);
        const misjudged = !v || v.pass !== c.right;
        return [
          e.name,
          {
            pass: v?.pass ?? false,
            scores: v?.scores,
            support: v?.support ?? null,
            ...(misjudged ? { issues: v?.issues ?? [], error: v?.error ?? null } : {}),
          },
        ];
      }),
    ),
  }));
}

async function main(): Promise<void> {
  const options = {
    seed: Number(option("--seed", String(DEFAULT_OPTIONS.seed))),
    tableBench: Number(option("--tables", String(DEFAULT_OPTIONS.tableBench))),
    perTable: Number(option("--per-table", String(DEFAULT_OPTIONS.perTable))),
  };
  const baselineCommit = option("--baseline", "8cb955a");
  const withBaseline = !process.argv.includes("--no-baseline");
  const started = performance.now();
  const file = buildCaseFile({ examples: EXAMPLES, tableBench: TABLEBENCH }, options);
  const work = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-checker-"));
  try {
    const casesFile = path.join(work, "cases.json");
    writeFileSync(casesFile, JSON.stringify(file));
    const engines: Engine[] = (await runEngines(casesFile, work, baselineCommit, withBaseline)).map(
      (run) => ({ ...run, figures: figures(file.cases, run.output.verdicts) }),
    );
    const dirty = engineDirty();

    const text = report(file, engines);
    process.stdout.write(`\n${text}\n`);
    mkdirSync(RESULTS, { recursive: true });
    const results = {
      generatedAt: new Date().toISOString(),
      options,
      goal: GOAL,
      engines: engines.map((e) => ({
        name: e.name,
        label: e.label,
        commit:
          e.name === "baseline"
            ? git(["rev-parse", `${baselineCommit}^{commit}`])
            : git(["rev-parse", "HEAD"]),
        workingTreeChanges: e.name === "current" ? dirty : false,
        figures: e.figures,
        timings: {
          ingestMs: e.output.ingestMs,
          execMs: e.output.execMs,
          judgeMs: e.output.judgeMs,
          wallMs: e.output.wallMs,
        },
        goldDisagreements: goldDisagreements(file, e.output),
        failedRuns: e.output.runs
          .filter((r) => !r.ok)
          .map((r) => ({ table: r.table, code: r.code, error: r.error })),
      })),
      tables: file.tables.map((t) => t.id),
      cases: caseRows(file, engines),
    };
    const out = path.join(RESULTS, "results.json");
    // One case a line, so that the file diffs case by case from run to run.
    const { cases, ...summary } = results;
    const rows = cases.map((c) => `  ${JSON.stringify(c)}`).join(",\n");
    const json = JSON.stringify(summary, null, 1).replace(
      /\n}$/,
      `,\n "cases": [\n${rows}\n ]\n}\n`,
    );
    writeFileSync(out, json);
    writeFileSync(path.join(RESULTS, "report.txt"), `${text}\n`);
    process.stdout.write(
      `\nwrote ${path.relative(ROOT, out)} (${((performance.now() - started) / 1000).toFixed(1)} s in all)\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
  process.exit(1);
});
