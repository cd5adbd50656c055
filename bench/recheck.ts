/**
 * The checker's verdicts on stored answers, then and now: bench/real-model.ts keeps each
 * answered question's trajectory (question, tables, code attempts with their results,
 * evidence, answer, verdict) in `<system>/trajectories.jsonl`; `--recheck` judges every stored
 * answer again with the current rules (`ruleVerdict`, no model, no sandbox: the attempts carry
 * what their code computed) and sets the figures of the stored verdicts ("before") beside
 * those of the new ones ("after").
 */
import { appendFileSync, existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import {
  AnswerSchema,
  AttemptSchema,
  EvidenceSchema,
  TableRefSchema,
  type TableSource,
} from "../blackboard/schemas.js";
import type { RecordedVerdict, ResultRecord } from "../evals/results-file.js";
import { type CheckerFigures, checkerFigures } from "../evals/selective.js";
import { ruleVerdict } from "../grounding/verdict.js";
import { readJsonLines } from "../storage/jsonl.js";
import { loadTables } from "../tables/load.js";

export const TRAJECTORIES = "trajectories.jsonl";

/** What a stored trajectory keeps of a graph's final state: enough for the rules to judge it. */
const StoredStateSchema = z.object({
  question: z.string(),
  tables: z.array(z.unknown()).default([]),
  attempts: z.array(z.unknown()).default([]),
  evidence: z.array(z.unknown()).default([]),
  answer: z.unknown().nullish(),
  verdict: z.unknown().nullish(),
  reflections: z.array(z.unknown()).default([]),
});

/**
 * One line of trajectories.jsonl (the reflections only counted), read loosely: the current
 * schemas judge it at re-check.
 */
const TrajectoryLineSchema = StoredStateSchema.extend({
  id: z.string(),
  reflections: z.number().int().nonnegative().default(0),
});
type TrajectoryLine = z.infer<typeof TrajectoryLineSchema>;

/** Appends a recorded question's trajectory; a state without one (a failed run) is skipped. */
export function appendTrajectory(dir: string, id: string, state: unknown): void {
  const parsed = StoredStateSchema.safeParse(state);
  if (!parsed.success) return;
  const { reflections, ...kept } = parsed.data;
  appendFileSync(
    path.join(dir, TRAJECTORIES),
    `${JSON.stringify({ id, ...kept, reflections: reflections.length })}\n`,
  );
}

/** The trajectory as the current rules read it; the reason when they cannot. */
const JudgedSchema = z.object({
  question: z.string(),
  tables: z.array(TableRefSchema),
  attempts: z.array(AttemptSchema),
  evidence: z.array(EvidenceSchema),
  answer: AnswerSchema.nullish().transform((a) => a ?? null),
  reflections: z.number().int().nonnegative(),
});

export interface Recheck {
  /** Results that have a stored trajectory: with their stored verdicts, and re-checked. */
  before: ResultRecord[];
  after: ResultRecord[];
  /** Results with no trajectory, and trajectories the current schemas cannot read. */
  missing: number;
  unreadable: { id: string; error: string }[];
  /** Answers whose pass verdict the re-check turned. */
  passedNow: number;
  failedNow: number;
}

/**
 * Re-checks the stored answers of one system's run directory. The tables are ingested again
 * from the questions' sources first, so their artifacts exist (content-addressed: the same
 * table gives the same artifact) wherever the run was made.
 */
export async function recheckRun(
  dir: string,
  records: readonly ResultRecord[],
  sourcesOf: (id: string) => TableSource[] | undefined,
  minConfidence?: number,
): Promise<Recheck> {
  const file = path.join(dir, TRAJECTORIES);
  const stored = new Map<string, TrajectoryLine>(
    existsSync(file) ? readJsonLines(file, TrajectoryLineSchema).records.map((t) => [t.id, t]) : [],
  );
  const outcome: Recheck = {
    before: [],
    after: [],
    missing: 0,
    unreadable: [],
    passedNow: 0,
    failedNow: 0,
  };
  for (const record of records) {
    const line = stored.get(record.id);
    if (!line) {
      outcome.missing += 1;
      continue;
    }
    const judged = JudgedSchema.safeParse(line);
    if (!judged.success) {
      outcome.unreadable.push({ id: record.id, error: z.prettifyError(judged.error) });
      continue;
    }
    for (const source of sourcesOf(record.id) ?? []) await loadTables(source);
    const state = judged.data;
    const { verdict } = await ruleVerdict({
      question: state.question,
      answer: state.answer,
      evidence: state.evidence,
      attempts: state.attempts,
      tables: state.tables,
      reflected: state.reflections,
      minConfidence,
    });
    const storedVerdict = record.verdict ?? recordedVerdict(line.verdict);
    const now: RecordedVerdict = {
      pass: verdict.pass,
      support: verdict.support,
      confidence: verdict.confidence,
      sure: verdict.sure,
    };
    const { verdict: _, ...bare } = record;
    outcome.before.push(storedVerdict ? { ...bare, verdict: storedVerdict } : bare);
    outcome.after.push({ ...bare, verdict: now });
    if (storedVerdict && storedVerdict.pass !== now.pass) {
      if (now.pass) outcome.passedNow += 1;
      else outcome.failedNow += 1;
    }
  }
  return outcome;
}

/** A stored state's verdict as a result records it, when it has one. */
function recordedVerdict(value: unknown): RecordedVerdict | undefined {
  const parsed = z
    .object({
      pass: z.boolean(),
      support: z.string().default("none"),
      confidence: z.number().min(0).max(1).default(0),
      sure: z.boolean().default(false),
    })
    .safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

const pct = (x: number | null) => (x === null ? "-" : `${x.toFixed(2)}%`);
const num = (x: number | null) => (x === null ? "-" : x.toFixed(3));

/** The checker's figures of a few runs (or of one run before and after), as table rows. */
export function figureRows(figures: CheckerFigures): string[] {
  const s = figures.selective;
  const coverage = (c: number) => {
    const p = s.atCoverage.find((x) => x.coverage === c);
    return p ? `${pct(p.accuracy)} (${p.k})` : "-";
  };
  return [
    `${figures.checked}`,
    `${figures.right} / ${figures.wrong}`,
    `${figures.pass.passed}`,
    pct(figures.pass.precision),
    pct(figures.pass.recall),
    `${figures.pass.wrongPassed} of ${figures.wrong}`,
    `${figures.sure.n} (${pct(figures.sure.accuracy)} right)`,
    `${num(s.aurc)} (best ${num(s.optimalAurc)}, none ${num(s.randomAurc)})`,
    coverage(100),
    coverage(80),
    coverage(50),
    num(figures.calibration.ece),
  ];
}

export const FIGURE_NAMES = [
  "answers with a verdict",
  "right / wrong",
  "passed",
  "pass precision",
  "pass recall",
  "wrong answers that passed",
  "sure",
  "AURC",
  "accuracy at 100% coverage",
  "accuracy at 80% coverage",
  "accuracy at 50% coverage",
  "ECE (10 bins)",
];

/** A Markdown table of figures, one column per named side. */
export function figuresTable(sides: { name: string; figures: CheckerFigures }[]): string[] {
  const rows = sides.map((s) => figureRows(s.figures));
  return [
    `| figure | ${sides.map((s) => s.name).join(" | ")} |`,
    `| --- | ${sides.map(() => "---:").join(" | ")} |`,
    ...FIGURE_NAMES.map((name, i) => `| ${name} | ${rows.map((r) => r[i]).join(" | ")} |`),
  ];
}

/** The before/after section of one system's re-check. */
export function recheckLines(system: string, recheck: Recheck, total: number): string[] {
  if (recheck.before.length === 0) {
    return [
      `- **${system}**: ${
        recheck.unreadable.length > 0
          ? `the current schemas cannot read its ${recheck.unreadable.length} stored trajectories (first: ${recheck.unreadable[0]?.error.split("\n")[0]})`
          : `none of its ${total} results has a stored trajectory (results.jsonl keeps the answer and its score, not the attempts, evidence and tables the rules judge)`
      }, so its answers cannot be re-checked without running the model again.`,
    ];
  }
  const left =
    recheck.missing + recheck.unreadable.length > 0
      ? ` ${recheck.missing} without a trajectory and ${recheck.unreadable.length} unreadable are left out.`
      : "";
  return [
    `**${system}**: ${recheck.before.length} of ${total} answers re-checked.${left} The re-check passed ${recheck.passedNow} answers the stored verdict failed, and failed ${recheck.failedNow} it passed.`,
    "",
    ...figuresTable([
      { name: "before (stored verdicts)", figures: checkerFigures(recheck.before) },
      { name: "after (re-checked)", figures: checkerFigures(recheck.after) },
    ]),
    "",
  ];
}
