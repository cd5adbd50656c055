/**
 * The checker measured on mutations of right code (issue 33): TableBench FactChecking and
 * NumericalReasoning questions with right code, and that code mutated so that it still runs
 * but answers another question, plus answers mutated as models mistake them (see
 * bench/support/mutation-cases.ts). Labels come from the gold answers, never from the checker.
 *
 * Two engines judge the same cases in one run, each in its own process with its own sandbox
 * (bench/support/checker-runner.ts): the baseline commit's and this tree's. Reported: pass
 * precision and recall on the right answers, and per kind the pass rate (right kinds: should
 * be 1; mutations: the share that passed, should be 0). Goal: precision >= 0.97 with recall >=
 * 0.9 on right answers, and at least 90% of every mutation kind caught.
 * Writes bench/results/checker-mutations/{results.json,report.txt}.
 *
 *   npm run bench:checker-mutations [-- --seed 33 --per-kind 1 --limit 0 --baseline d352666 --no-baseline]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import { ROOT } from "./support/baseline.js";
import {
  type EngineRun,
  fixed,
  option,
  ratio,
  runEngines,
  table,
} from "./support/checker-engines.js";
import type { CaseVerdict } from "./support/checker-runner.js";
import {
  ANSWER_MUTATIONS,
  buildMutationFile,
  CODE_MUTATIONS,
  KINDS,
  type MutationCase,
  type MutationFile,
} from "./support/mutation-cases.js";

const RESULTS = path.join(ROOT, "bench/results/checker-mutations");
const GOAL = { precision: 0.97, recall: 0.9, caught: 0.9 };

interface Figures {
  passed: number;
  rightPassed: number;
  right: number;
  precision: number | null;
  recall: number | null;
  byKind: Record<string, { n: number; passed: number; derived: number }>;
  /** Precision and recall on the questions looked at while writing the rules, and on the rest. */
  bySplit: Record<
    "dev" | "held-out",
    { precision: number | null; recall: number | null; caught: number | null }
  >;
  goalMet: boolean;
  errors: number;
}

function figures(cases: readonly MutationCase[], verdicts: readonly CaseVerdict[]): Figures {
  const byId = new Map(verdicts.map((v) => [v.id, v]));
  const pass = (c: MutationCase) => byId.get(c.id)?.pass === true;
  const passed = cases.filter(pass).length;
  const rights = cases.filter((c) => c.right);
  const rightPassed = rights.filter(pass).length;
  const byKind: Figures["byKind"] = {};
  for (const kind of KINDS) {
    const items = cases.filter((c) => c.variant === kind);
    byKind[kind] = {
      n: items.length,
      passed: items.filter(pass).length,
      derived: items.filter((c) => c.derived === "yes").length,
    };
  }
  const precision = ratio(rightPassed, passed);
  const recall = ratio(rightPassed, rights.length);
  const split = (name: "dev" | "held-out") => {
    const items = cases.filter((c) => c.split === name);
    const r = items.filter((c) => c.right);
    const w = items.filter((c) => !c.right);
    const rp = r.filter(pass).length;
    return {
      precision: ratio(rp, items.filter(pass).length),
      recall: ratio(rp, r.length),
      caught: ratio(w.filter((c) => !pass(c)).length, w.length),
    };
  };
  const caughtAll = [...CODE_MUTATIONS, ...ANSWER_MUTATIONS].every((k) => {
    const f = byKind[k];
    return !f || f.n === 0 || 1 - f.passed / f.n >= GOAL.caught;
  });
  return {
    passed,
    rightPassed,
    right: rights.length,
    precision,
    recall,
    byKind,
    bySplit: { dev: split("dev"), "held-out": split("held-out") },
    goalMet: (precision ?? 0) >= GOAL.precision && (recall ?? 0) >= GOAL.recall && caughtAll,
    errors: verdicts.filter((v) => v.error).length,
  };
}

type Engine = EngineRun & { figures: Figures };

function report(file: MutationFile, engines: readonly Engine[]): string {
  const right = file.cases.filter((c) => c.right).length;
  const questions = new Set(file.cases.map((c) => c.table)).size;
  const rate = (f: { n: number; passed: number }) =>
    `${fixed(ratio(f.passed, f.n))} (${f.passed}/${f.n})`;
  return [
    `Checker mutation bench: ${file.cases.length} cases (${right} right, ${file.cases.length - right} wrong) on ${questions} TableBench questions, seed ${file.seed}`,
    "",
    table(
      ["", ...engines.map((e) => e.label)],
      [
        [
          "pass precision",
          ...engines.map(
            (e) => `${fixed(e.figures.precision)} (${e.figures.rightPassed}/${e.figures.passed})`,
          ),
        ],
        [
          "pass recall (right answers)",
          ...engines.map(
            (e) => `${fixed(e.figures.recall)} (${e.figures.rightPassed}/${e.figures.right})`,
          ),
        ],
        [
          `goal: P >= ${GOAL.precision}, R >= ${GOAL.recall}, each kind >= ${GOAL.caught} caught`,
          ...engines.map((e) => (e.figures.goalMet ? "met" : "not met")),
        ],
        ...(["dev", "held-out"] as const).map((name) => [
          `${name}: precision / recall / wrong caught`,
          ...engines.map((e) => {
            const f = e.figures.bySplit[name];
            return `${fixed(f.precision)} / ${fixed(f.recall)} / ${fixed(f.caught)}`;
          }),
        ]),
        ["judge errors", ...engines.map((e) => String(e.figures.errors))],
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
    "Pass rate per kind (right kinds: should be 1; mutations: should be 0, caught = 1 - pass rate)",
    table(
      ["kind", "n", "derived", "label", ...engines.map((e) => e.label)],
      KINDS.map((kind) => {
        const first = engines[0]?.figures.byKind[kind];
        return [
          kind,
          String(first?.n ?? 0),
          String(first?.derived ?? 0),
          kind.startsWith("right") ? "right" : "wrong",
          ...engines.map((e) => rate(e.figures.byKind[kind] ?? { n: 0, passed: 0 })),
        ];
      }),
    ),
    "",
    `Dropped while building: ${JSON.stringify(file.dropped)}`,
  ].join("\n");
}

async function main(): Promise<void> {
  const options = {
    seed: Number(option("--seed", "33")),
    perKind: Number(option("--per-kind", "1")),
    limit: Number(option("--limit", "0")),
    python: option("--python", "python3"),
  };
  const baselineCommit = option("--baseline", "d352666");
  const withBaseline = !process.argv.includes("--no-baseline");
  const started = performance.now();
  const sandbox = await getSandbox("local");
  const file = await buildMutationFile(sandbox, options, (m) =>
    process.stderr.write(`[build] ${m}\n`),
  ).finally(() => closeSandboxes());
  const work = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-mutations-"));
  try {
    const casesFile = path.join(work, "cases.json");
    writeFileSync(casesFile, JSON.stringify(file));
    const engines: Engine[] = (await runEngines(casesFile, work, baselineCommit, withBaseline)).map(
      (run) => ({ ...run, figures: figures(file.cases, run.output.verdicts) }),
    );
    const text = report(file, engines);
    process.stdout.write(`\n${text}\n`);
    mkdirSync(RESULTS, { recursive: true });
    const verdicts = engines.map((e) => new Map(e.output.verdicts.map((v) => [v.id, v])));
    const rows = file.cases.map((c) =>
      JSON.stringify({
        ...c,
        verdicts: Object.fromEntries(
          engines.map((e, i) => {
            const v = verdicts[i]?.get(c.id);
            const misjudged = !v || v.pass !== c.right;
            return [
              e.name,
              { pass: v?.pass ?? false, ...(misjudged ? { issues: v?.issues ?? [] } : {}) },
            ];
          }),
        ),
      }),
    );
    const summary = {
      generatedAt: new Date().toISOString(),
      options,
      goal: GOAL,
      dropped: file.dropped,
      engines: engines.map((e) => ({ name: e.name, label: e.label, figures: e.figures })),
    };
    const json = JSON.stringify(summary, null, 1).replace(
      /\n}$/,
      `,\n "cases": [\n${rows.map((r) => `  ${r}`).join(",\n")}\n ]\n}\n`,
    );
    writeFileSync(path.join(RESULTS, "results.json"), json);
    writeFileSync(path.join(RESULTS, "report.txt"), `${text}\n`);
    process.stdout.write(
      `\nwrote bench/results/checker-mutations (${((performance.now() - started) / 1000).toFixed(1)} s in all)\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
  process.exit(1);
});
