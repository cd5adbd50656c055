/**
 * TableBench with the embedded local model (not a test, not run in CI): direct prompting (one
 * call with upstream's DP instruction) vs table_qa vs mom, on a seeded stratified sample.
 * Each system is an ordinary eval run directory (resumable: run the same command again to go
 * on); a combined report with charts is written beside them after each system.
 *
 *   npm run bench:real-model -- [--sample 50] [--seed 15] [--systems dp,table_qa,mom]
 *     [--plans 3] [--out bench/results/real-model] [--timeout-ms 900000] [--report-only]
 *     [--recheck]
 *
 * The combined report sets the checker's figures of each system side by side (evals/selective.ts:
 * pass precision and recall against the official score, wrong answers that passed, AURC, ECE).
 * Each answered question's trajectory goes to `<system>/trajectories.jsonl`; `--recheck` runs
 * no model: it judges the stored answers again with the current checker rules and prints the
 * stored verdicts' figures ("before") beside the re-checked ones ("after"), see recheck.ts.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { TopLevelSpec } from "vega-lite";
import { z } from "zod";
import { renderSvg, svgToPng } from "../evals/charts.js";
import { loadDataset, locateDataset } from "../evals/datasets/index.js";
import { sandboxChartRunner } from "../evals/metrics/chart.js";
import { getScorer } from "../evals/metrics/index.js";
import { lastPythonBlock, parsePrediction } from "../evals/metrics/tablebench.js";
import { buildReport, type Report, writeReport } from "../evals/report.js";
import { loadResults, type ResultRecord } from "../evals/results-file.js";
import { readRunInfo } from "../evals/run-info.js";
import { type EvalGraph, runEvaluation } from "../evals/runner.js";
import { type Selection, selectExamples } from "../evals/selection.js";
import { checkerFigures } from "../evals/selective.js";
import type { EvalExample } from "../evals/types.js";
import { callModel } from "../models/chat.js";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import type { Configuration } from "../settings/configuration.js";
import { appendTrajectory, figuresTable, recheckLines, recheckRun } from "./recheck.js";

const SYSTEMS = ["dp", "table_qa", "mom"] as const;
type System = (typeof SYSTEMS)[number];

const ArgsSchema = z.object({
  sample: z.coerce.number().int().min(1).default(50),
  seed: z.coerce.number().int().min(0).default(15),
  systems: z
    .string()
    .default(SYSTEMS.join(","))
    .transform((s) => s.split(",").map((x) => x.trim()))
    .pipe(z.array(z.enum(SYSTEMS)).min(1)),
  plans: z.coerce.number().int().min(1).max(8).default(3),
  out: z.string().default("bench/results/real-model"),
  "timeout-ms": z.coerce.number().int().positive().default(900_000),
  "report-only": z.boolean().default(false),
  recheck: z.boolean().default(false),
});

const { values } = parseArgs({
  options: {
    sample: { type: "string" },
    seed: { type: "string" },
    systems: { type: "string" },
    plans: { type: "string" },
    out: { type: "string" },
    "timeout-ms": { type: "string" },
    "report-only": { type: "boolean" },
    recheck: { type: "boolean" },
  },
});
const args = ArgsSchema.parse(values);
const outRoot = path.resolve(args.out);

// A machine with no endpoint: every role runs on the embedded default model.
for (const key of Object.keys(process.env)) {
  if (/^(OPENAI_|TABLEMINDS_\w*MODEL$)/.test(key)) delete process.env[key];
}

/** The bounds every graph run gets: small enough for a 135M model on two cores. */
const BOUNDS: Partial<Configuration> = {
  model: "local",
  memory: false,
  maxCodeAttempts: 2,
  maxReflections: 0,
  contextTokens: 1200,
  llmTimeoutMs: 120_000,
};

const contextOf: Record<System, Partial<Configuration>> = {
  dp: { model: "local" },
  table_qa: BOUNDS,
  mom: { ...BOUNDS, plans: args.plans, maxConcurrency: 2 },
};

/** Upstream's DP prompt of each question, read from the dataset's own `instruction` field. */
const InstructionRow = z.object({ id: z.string(), instruction: z.string().min(1) });
function instructions(file: string): Map<string, string> {
  const seen = new Map<string, number>();
  const found = new Map<string, string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const row = InstructionRow.parse(JSON.parse(line));
    // The loader renames a repeated id `id#2`, `id#3`...: the same here.
    const count = (seen.get(row.id) ?? 0) + 1;
    seen.set(row.id, count);
    found.set(count === 1 ? row.id : `${row.id}#${count}`, row.instruction);
  }
  return found;
}

/** Direct prompting as a graph for the runner: the instruction as one user message, one call. */
function directPrompting(examples: EvalExample[], prompts: Map<string, string>): EvalGraph {
  const byTables = new Map<unknown, string>(
    examples.map((e) => [e.tables, prompts.get(e.id) ?? ""]),
  );
  return {
    async invoke(input, options) {
      const instruction = byTables.get(input.sources);
      if (!instruction) throw new Error("direct prompting: no instruction for this question");
      const signal = options.signal instanceof AbortSignal ? options.signal : undefined;
      const reply = await callModel(
        "answerer",
        [{ role: "user", content: instruction }],
        { model: "local", maxTokens: 256, timeoutMs: 180_000 },
        { signal },
      );
      // The scorer sees only what it parses: keep the model's own words to read later.
      appendFileSync(
        path.join(dirOf("dp"), "raw.jsonl"),
        `${JSON.stringify({ instruction: instruction.slice(-200), reply: reply.text })}\n`,
      );
      // Upstream reads the first `Final Answer:` line; without one the prediction is empty.
      const final = parsePrediction(reply.text);
      const code = lastPythonBlock(reply.text);
      return {
        answer: final === null ? null : { final },
        attempts: code ? [{ code, result: { ok: true } }] : [],
        budget: {
          llmCalls: 1,
          promptTokens: reply.promptTokens,
          completionTokens: reply.completionTokens,
          llmMs: reply.ms,
        },
      };
    },
  };
}

const file = locateDataset("tablebench").path;
const dataset = await loadDataset("tablebench", { path: file });
const selection: Selection = { kind: "sample", n: args.sample, seed: args.seed };
const examples = selectExamples(dataset, selection);
const scorer = getScorer("tablebench");
const dirOf = (system: System) => path.join(outRoot, system);
const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

async function run(system: System): Promise<void> {
  const started = performance.now();
  let done = 0;
  const outcome = await runEvaluation({
    examples,
    scorer,
    graph: system === "dp" ? "direct" : system,
    runnable:
      system === "dp" ? directPrompting(examples, instructions(locatedFile(file))) : undefined,
    outDir: dirOf(system),
    concurrency: 1,
    timeoutMs: args["timeout-ms"],
    retries: 0,
    context: contextOf[system],
    runChart: sandboxChartRunner(await getSandbox("local")),
    selection,
    info: { command: ["bench/real-model.ts", ...process.argv.slice(2)], data: file },
    onStart: ({ total, done: before }) => {
      done = before;
      log(`${system}: ${before} of ${total} already done`);
    },
    onResult: (r, state) => {
      // What the checker judged, kept so that a later checker can judge it again (--recheck).
      if (system !== "dp") appendTrajectory(dirOf(system), r.id, state);
      done += 1;
      const tail = r.error ? ` error: ${r.error.slice(0, 120)}` : "";
      log(
        `${system} ${done}/${examples.length} ${r.id} score ${r.score.score.toFixed(2)} ` +
          `${(r.latencyMs / 1000).toFixed(1)} s, ${r.llmCalls} calls, pred ${JSON.stringify(r.prediction.slice(0, 60))}${tail}`,
      );
    },
  });
  await writeReport(dirOf(system), examples, outcome.records, scorer);
  log(`${system}: finished in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** The dataset file itself (a directory holds it under one of upstream's names). */
function locatedFile(p: string): string {
  return p.endsWith(".jsonl") ? p : path.join(p, "tablebench_test.jsonl");
}

interface Side {
  system: System;
  report: Report;
  records: ResultRecord[];
}

function side(system: System): Side | null {
  const wanted = new Set(examples.map((e) => e.id));
  let records: ResultRecord[];
  try {
    records = loadResults(path.join(dirOf(system), "results.jsonl")).records;
  } catch {
    return null;
  }
  records = records.filter((r) => wanted.has(r.id));
  if (records.length === 0) return null;
  const answered = new Set(records.map((r) => r.id));
  const covered = examples.filter((e) => answered.has(e.id));
  return { system, report: buildReport(covered, records, scorer), records };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function groupedBars(title: string, field: string, rows: Record<string, unknown>[]): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: 420,
    data: { values: rows },
    mark: { type: "bar", tooltip: true },
    encoding: {
      y: { field: "group", type: "nominal", title: null, axis: { labelLimit: 320 } },
      yOffset: { field: "system", type: "nominal" },
      color: { field: "system", type: "nominal" },
      x: { field, type: "quantitative", title: field },
    },
  };
}

async function chart(dir: string, name: string, spec: TopLevelSpec): Promise<string> {
  const svg = await renderSvg(spec);
  writeFileSync(path.join(dir, `${name}.svg`), svg);
  writeFileSync(path.join(dir, `${name}.png`), await svgToPng(svg));
  return `charts/${name}.png`;
}

/** The checker's figures of each system, from the verdicts its results recorded. */
function checkerSection(sides: Side[]): string[] {
  const checked = sides
    .filter((s) => s.system !== "dp")
    .map((s) => ({ name: s.system, figures: checkerFigures(s.records) }));
  const head = [
    "",
    "## The checker's verdicts",
    "",
    "Against the official scores (evals/selective.ts; docs/evaluation.md): an answer is right when its score is full marks, or ROUGE-L ≥ 0.5. dp has no checker.",
    "",
  ];
  const without = checked.filter((c) => c.figures.checked === 0).map((c) => c.name);
  const note =
    without.length > 0
      ? [
          `${without.join(", ")}: no result records a verdict (results made before verdicts were recorded); ` +
            "`--recheck` judges stored trajectories again, where there are any.",
        ]
      : [];
  const shown = checked.filter((c) => c.figures.checked > 0);
  const table = shown.length > 0 ? figuresTable(shown) : [];
  return [...head, ...note, ...(note.length > 0 && table.length > 0 ? [""] : []), ...table];
}

/** The stored answers judged again by the current rules, beside their stored verdicts. */
async function recheckSection(sides: Side[]): Promise<string[]> {
  const sources = new Map(examples.map((e) => [e.id, e.tables]));
  const lines = ["", "## Re-checked with the current checker", ""];
  for (const s of sides) {
    if (s.system === "dp") continue;
    const settings = readRunInfo(dirOf(s.system))?.config?.settings ?? {};
    const minConfidence =
      typeof settings.minConfidence === "number" ? settings.minConfidence : undefined;
    const recheck = await recheckRun(
      dirOf(s.system),
      s.records,
      (id) => sources.get(id),
      minConfidence,
    );
    const section = recheckLines(s.system, recheck, s.records.length);
    for (const line of section) process.stdout.write(`${line}\n`);
    lines.push(...section);
  }
  return lines;
}

/** The side-by-side report of whatever results exist (partial ones included). */
async function combinedReport(): Promise<string> {
  const sides = SYSTEMS.map(side).filter((s): s is Side => s !== null);
  const charts = path.join(outRoot, "charts");
  mkdirSync(charts, { recursive: true });
  const lines = [
    "# TableBench with the embedded local model",
    "",
    `Model: SmolLM2-135M-Instruct Q4_1 (node-llama-cpp, CPU, context ≤ 4096, grammar-constrained replies for tableminds' roles). ` +
      `Questions: stratified sample of ${examples.length} (seed ${args.seed}) of TableBench's ${dataset.length}, scored by the official rules (evals/metrics/tablebench.ts).`,
    "",
    "- **dp**: upstream's direct-prompting instruction (the dataset's `instruction` field) as one user message, one call, no grammar, at most 256 tokens.",
    `- **table_qa**: ${JSON.stringify(BOUNDS)}.`,
    `- **mom**: the same bounds, ${args.plans} plans (not the default 8: two shared cores), at most 2 branches at once (LangGraph is given at least 2).`,
    "",
    "Generated by `npm run bench:real-model`; each system's directory holds its results.jsonl, report.md and charts.",
    "",
    "| system | questions | overall (%) | Parse@1 (%) | model calls / q | prompt tokens / q | completion tokens / q | wall s / q (mean) | p90 s | errors |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const s of sides) {
    const r = s.report;
    lines.push(
      `| ${s.system} | ${r.answered} | ${r.summary.overall.toFixed(2)} | ${r.summary.parseRate.toFixed(1)} | ${r.perQuestion.llmCalls.toFixed(1)} | ${r.perQuestion.promptTokens.toFixed(0)} | ${r.perQuestion.completionTokens.toFixed(0)} | ${(r.latencyMs.mean / 1000).toFixed(1)} | ${(r.latencyMs.p90 / 1000).toFixed(1)} | ${r.errors.count} |`,
    );
  }
  const groups = [...new Set(sides.flatMap((s) => s.report.summary.groups.map((g) => g.name)))];
  lines.push(
    "",
    "Score by category (%; the metric TableBench counts for each; n in brackets):",
    "",
    `| category | ${sides.map((s) => s.system).join(" | ")} |`,
    `| --- | ${sides.map(() => "---").join(" | ")} |`,
  );
  for (const g of groups) {
    const cells = sides.map((s) => {
      const found = s.report.summary.groups.find((x) => x.name === g);
      return found ? `${found.score.toFixed(2)} (${found.n}, ${found.metric})` : "-";
    });
    lines.push(`| ${g} | ${cells.join(" | ")} |`);
  }
  if (sides.length > 0) {
    const scoreRows = sides.flatMap((s) =>
      s.report.summary.groups.map((g) => ({ system: s.system, group: g.name, score: g.score })),
    );
    const costRows = sides.map((s) => ({
      system: s.system,
      group: "per question",
      "model calls": mean(s.records.map((r) => r.llmCalls)),
      "wall seconds": mean(s.records.map((r) => r.latencyMs / 1000)),
    }));
    const a = await chart(
      charts,
      "score-by-category",
      groupedBars("score by category (%)", "score", scoreRows),
    );
    const b = await chart(
      charts,
      "model-calls",
      groupedBars("model calls per question", "model calls", costRows),
    );
    const c = await chart(
      charts,
      "wall-time",
      groupedBars("wall time per question (s)", "wall seconds", costRows),
    );
    lines.push(
      "",
      `![score by category](${a})`,
      "",
      `![model calls](${b})`,
      "",
      `![wall time](${c})`,
    );
  }
  lines.push(...checkerSection(sides));
  if (args.recheck) lines.push(...(await recheckSection(sides)));
  const missing = SYSTEMS.filter(
    (s) => !sides.some((x) => x.system === s && x.report.answered === examples.length),
  );
  if (missing.length > 0) {
    lines.push(
      "",
      `Incomplete: ${missing.join(", ")} did not answer all ${examples.length} questions; ` +
        `\`npm run bench:real-model -- --seed ${args.seed} --sample ${args.sample}\` goes on where it stopped.`,
    );
  }
  const report = path.join(outRoot, "README.md");
  writeFileSync(report, `${lines.join("\n")}\n`);
  return report;
}

mkdirSync(outRoot, { recursive: true });
try {
  if (!args["report-only"] && !args.recheck) {
    for (const system of args.systems) {
      await run(system);
      log(`report: ${await combinedReport()}`);
    }
  }
  log(`report: ${await combinedReport()}`);
} finally {
  await closeSandboxes();
}
