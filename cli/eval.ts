import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import type { Report } from "../evals/report.js";
import type { ResultRecord } from "../evals/results-file.js";
import type { ChartRunner, EvalExample, QuestionScore } from "../evals/types.js";
import { closeSandboxes, getSandbox } from "../tools/sandbox/index.js";
import {
  configurationFromFlags,
  nonNegativeInt,
  positiveInt,
  withConfigurationFlags,
} from "./args.js";
import { evalProgress } from "./eval-progress.js";
import { listGraphs } from "./graphs.js";
import { redirectWarnings } from "./warnings.js";

const DATASET_HELP = "dataset: tablebench, wikitq or tabfact";

const EVAL_HELP = `
"tableminds eval --dataset NAME ..." is short for "tableminds eval run --dataset NAME ...".

Examples:
  tableminds eval --dataset tablebench --limit 100 --concurrency 8 --out runs/tb-100
  tableminds eval score predictions.jsonl --dataset tablebench --out runs/other-system
  tableminds eval report runs/tb-100
  tableminds eval compare runs/other-system runs/tb-100
`;

const RUN_HELP = `
The same command again resumes: questions already in results.jsonl are skipped, and a line
torn by a crash is moved to results.jsonl.corrupt-<time> so its question runs again.
Ctrl-C stops starting questions, drops those in flight (they run next time), writes the
report of what is done and exits with 130. With LANGSMITH_API_KEY set, a finished run is
also recorded as a LangSmith experiment (LANGSMITH_ENDPOINT for a self-hosted one).
`;

/** The evaluation modules load on use: charts and the runner cost ~0.3 s that `ask` need not pay. */
async function evals() {
  const [datasets, metrics, chart, report, results, runner, runInfo, pool] = await Promise.all([
    import("../evals/datasets/index.js"),
    import("../evals/metrics/index.js"),
    import("../evals/metrics/chart.js"),
    import("../evals/report.js"),
    import("../evals/results-file.js"),
    import("../evals/runner.js"),
    import("../evals/run-info.js"),
    import("../evals/pool.js"),
  ]);
  return {
    ...datasets,
    ...metrics,
    ...report,
    ...results,
    ...runner,
    ...runInfo,
    ...pool,
    localCharts: async (): Promise<ChartRunner> =>
      chart.sandboxChartRunner(await getSandbox("local")),
  };
}

function summaryText(report: Report): string {
  const s = report.summary;
  const groups = s.groups.map(
    (g) =>
      `  ${g.name.padEnd(20)} ${String(g.n).padStart(4)}  ${g.metric.padEnd(6)} ${g.score.toFixed(2)}`,
  );
  const errors = report.errors.count > 0 ? [`  ${report.errors.count} failed to run`] : [];
  return [
    `${s.dataset}: overall ${s.overall.toFixed(2)} over ${s.n} questions, Parse@1 ${s.parseRate.toFixed(2)}%`,
    ...groups,
    ...errors,
  ].join("\n");
}

const PredictionSchema = z.object({ id: z.coerce.string(), prediction: z.string() });

/** A predictions file: JSONL of {id, prediction}; every id must be a question of the dataset. */
function readPredictions(file: string, known: Map<string, EvalExample>, dataset: string) {
  const predictions: { example: EvalExample; prediction: string }[] = [];
  const seen = new Set<string>();
  for (const [i, line] of readFileSync(file, "utf8").split("\n").entries()) {
    if (!line.trim()) continue;
    const where = `${file}:${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new Error(`${where}: not JSON`);
    }
    const parsed = PredictionSchema.safeParse(json);
    if (!parsed.success) {
      throw new Error(`${where}: expected {"id": ..., "prediction": "<the raw output>"}`);
    }
    const example = known.get(parsed.data.id);
    if (!example) throw new Error(`${where}: id ${parsed.data.id} is not in ${dataset}`);
    if (seen.has(example.id)) throw new Error(`${where}: id ${example.id} appears twice`);
    seen.add(example.id);
    predictions.push({ example, prediction: parsed.data.prediction });
  }
  if (predictions.length === 0) throw new Error(`${file}: no predictions`);
  return predictions;
}

export function registerEvalCommands(program: Command): void {
  const evalCommand = program
    .command("eval")
    .description("evaluate a graph on a benchmark, resumably, and report the scores")
    .addHelpText("after", EVAL_HELP);

  withConfigurationFlags(
    evalCommand
      .command("run", { isDefault: true })
      .description("run a dataset's questions through a graph; the same command again resumes")
      .requiredOption("-d, --dataset <name>", DATASET_HELP)
      .option(
        "--data <path>",
        "the dataset's file or directory (default: $TABLEMINDS_HOME/datasets/<name>, or ../shared)",
      )
      .option("-g, --graph <name>", "graph of langgraph.json", "table_qa")
      .option("-n, --limit <n>", "only the first n questions", positiveInt)
      .option("-c, --concurrency <k>", "questions in flight at once", positiveInt, 4)
      .option(
        "-o, --out <dir>",
        "run directory: results.jsonl, run.json, report.md (default runs/<dataset>-<graph>)",
      )
      .option("--timeout <ms>", "limit per question, retries included", positiveInt, 300_000)
      .option(
        "--retries <n>",
        "tries again after a transient model failure (429, 5xx, dropped connection)",
        nonNegativeInt,
        2,
      ),
  )
    .option("-q, --quiet", "no progress on stderr", false)
    .addHelpText("after", RUN_HELP)
    .action(async (opts) => {
      const ev = await evals();
      const graphs = listGraphs();
      if (!graphs[opts.graph]) {
        throw new Error(
          `unknown graph "${opts.graph}"; available: ${Object.keys(graphs).join(", ")}`,
        );
      }
      const scorer = ev.getScorer(opts.dataset);
      const examples = await ev.loadDataset(opts.dataset, { path: opts.data, limit: opts.limit });
      const outDir = path.resolve(opts.out ?? path.join("runs", `${opts.dataset}-${opts.graph}`));
      const bar = evalProgress(opts.quiet);
      const controller = new AbortController();
      const onSigint = () => {
        if (controller.signal.aborted) {
          bar.note("eval: stopped at once");
          process.exit(130);
        }
        bar.note(
          "eval: stopping (Ctrl-C again quits at once); questions in flight are dropped and run next time",
        );
        controller.abort();
      };
      process.on("SIGINT", onSigint);
      mkdirSync(outDir, { recursive: true });
      const warningsFile = path.join(outDir, "warnings.log");
      let warnings = 0;
      const restoreWarnings = redirectWarnings((line) => {
        warnings += 1;
        appendFileSync(warningsFile, `${new Date().toISOString()} ${line}\n`);
      });
      try {
        const outcome = await ev.runEvaluation({
          examples,
          scorer,
          graph: opts.graph,
          outDir,
          concurrency: opts.concurrency,
          timeoutMs: opts.timeout,
          retries: opts.retries,
          // Questions must not teach each other during an evaluation.
          context: { ...configurationFromFlags(opts), memory: false },
          runChart: await ev.localCharts(),
          signal: controller.signal,
          info: {
            command: process.argv.slice(2),
            data: opts.data ? path.resolve(opts.data) : undefined,
            limit: opts.limit,
          },
          onStart: ({ total, done, repaired }) => {
            if (repaired) {
              bar.note(
                `eval: ${repaired.lines} torn line(s) in results.jsonl moved to ${repaired.savedTo}; those questions run again`,
              );
            }
            bar.start(total - done, done, total);
          },
          onResult: (record) => bar.tick(record),
          onUnscored: (failure) =>
            bar.note(
              `eval: ${failure.id} could not be scored (${failure.error}); it runs again next time`,
            ),
        });
        bar.stop();
        restoreWarnings();
        if (warnings > 0)
          process.stderr.write(`eval: ${warnings} warning(s), in ${warningsFile}\n`);
        const report = await ev.writeReport(outDir, examples, outcome.records, scorer);
        process.stdout.write(`${summaryText(report)}\nreport: ${path.join(outDir, "report.md")}\n`);
        const missing = examples.length - report.answered;
        if (outcome.interrupted) {
          process.stderr.write(
            `eval: interrupted with ${missing} of ${examples.length} questions left; the same command goes on\n`,
          );
          process.exitCode = 130;
        } else if (outcome.unscored.length > 0) {
          process.stderr.write(
            `eval: ${outcome.unscored.length} questions could not be scored; the same command tries them again\n`,
          );
          process.exitCode = 1;
        } else if (process.env.LANGSMITH_API_KEY?.trim()) {
          await toLangSmith(opts.dataset, opts.graph, outDir, examples, outcome.records);
        }
      } finally {
        restoreWarnings();
        process.removeListener("SIGINT", onSigint);
        bar.stop();
        await closeSandboxes();
      }
    });

  evalCommand
    .command("score")
    .description("score predictions made elsewhere (JSONL of {id, prediction}) as a run is scored")
    .argument("<file>", "one JSON object per line: id, and prediction (the raw output text)")
    .requiredOption("-d, --dataset <name>", DATASET_HELP)
    .option("--data <path>", "the dataset's file or directory")
    .option(
      "-o, --out <dir>",
      "also write results.jsonl, run.json and the report there, for `eval compare`",
    )
    .option("--json", "print the summary as JSON", false)
    .action(async (file: string, opts) => {
      const ev = await evals();
      const scorer = ev.getScorer(opts.dataset);
      const examples = await ev.loadDataset(opts.dataset, { path: opts.data });
      const predictions = readPredictions(
        file,
        new Map(examples.map((e) => [e.id, e])),
        opts.dataset,
      );
      const runChart = await ev.localCharts();
      try {
        const scores: QuestionScore[] = new Array(predictions.length);
        const indexed = predictions.map((p, i) => ({ ...p, i }));
        await ev.forEachBounded(indexed, 4, async ({ example, prediction, i }) => {
          scores[i] = await scorer.score(example, prediction, { runChart });
        });
        const scored = predictions.map((p) => p.example);
        const records: ResultRecord[] = predictions.map((p, i) => {
          const score = scores[i] as QuestionScore;
          return {
            id: p.example.id,
            prediction: score.prediction,
            output: p.prediction,
            score,
            latencyMs: 0,
            tokens: { prompt: 0, completion: 0 },
            llmCalls: 0,
            attempts: 0,
            error: null,
            finishedAt: new Date().toISOString(),
          };
        });
        const report = ev.buildReport(scored, records, scorer);
        if (opts.out) {
          const out = path.resolve(opts.out);
          mkdirSync(out, { recursive: true });
          const results = path.join(out, "results.jsonl");
          const unlock = ev.lockResults(results);
          try {
            const info = ev.beginRun(out, {
              kind: "scored",
              dataset: opts.dataset,
              data: opts.data ? path.resolve(opts.data) : undefined,
              command: process.argv.slice(2),
              questions: predictions.length,
            });
            // Scoring is repeatable: the file is replaced whole.
            writeFileSync(`${results}.tmp`, records.map((r) => `${JSON.stringify(r)}\n`).join(""));
            renameSync(`${results}.tmp`, results);
            ev.writeRunInfo(out, { ...info, finished: new Date().toISOString() });
            await ev.writeReport(out, scored, records, scorer);
          } finally {
            unlock();
          }
        }
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(report.summary, null, 2)}\n`
            : `${summaryText(report)}\n${opts.out ? `report: ${path.join(path.resolve(opts.out), "report.md")}\n` : ""}`,
        );
      } finally {
        await closeSandboxes();
      }
    });

  evalCommand
    .command("report")
    .description("write report.md, report.json and charts/ of a run directory again")
    .argument("<run>", "run directory")
    .action(async (run: string) => {
      const { writeReport } = await evals();
      const { examples, records, scorer } = await loadRun(run);
      const report = await writeReport(run, examples, records, scorer);
      process.stdout.write(`${summaryText(report)}\nreport: ${path.join(run, "report.md")}\n`);
      if (report.answered < examples.length) {
        process.stderr.write(
          `eval: ${run} has results for ${report.answered} of its ${examples.length} questions\n`,
        );
      }
    });

  evalCommand
    .command("compare")
    .description(
      "per-category deltas and per-question wins of run B over run A (writes compare.md in B)",
    )
    .argument("<runA>", "baseline run directory")
    .argument("<runB>", "run directory to compare")
    .action(async (runA: string, runB: string) => {
      const { buildReport, compareRuns } = await evals();
      const side = async (dir: string) => {
        const { examples, records, scorer } = await loadRun(dir);
        const report: Report = buildReport(examples, records, scorer);
        return { name: path.basename(path.resolve(dir)), dataset: scorer.dataset, report, records };
      };
      const a = await side(runA);
      const b = await side(runB);
      if (a.dataset !== b.dataset) {
        throw new Error(`${runA} is a ${a.dataset} run and ${runB} a ${b.dataset} run`);
      }
      const text = compareRuns(a, b);
      writeFileSync(path.join(runB, "compare.md"), text);
      process.stdout.write(text);
    });
}

/** Also records the run as a LangSmith experiment; a failure there loses nothing local. */
async function toLangSmith(
  dataset: string,
  graph: string,
  outDir: string,
  examples: EvalExample[],
  records: ResultRecord[],
): Promise<void> {
  const { recordExperiment } = await import("../evals/langsmith.js");
  const experimentName = `${path.basename(outDir)}-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  try {
    await recordExperiment({
      datasetName: `tableminds-${dataset}`,
      experimentName,
      graph,
      examples,
      records,
    });
    process.stderr.write(`eval: recorded in LangSmith as experiment ${experimentName}\n`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `eval: warning: could not record the run in LangSmith (${message}); the local results are complete\n`,
    );
  }
}

async function loadRun(dir: string) {
  const { loadDataset, loadResults, getScorer, readRunInfo } = await evals();
  const info = readRunInfo(dir);
  if (!info) throw new Error(`${dir} is not a run directory (no run.json)`);
  const all = await loadDataset(info.dataset, { path: info.data, limit: info.limit });
  const { records } = loadResults(path.join(dir, "results.jsonl"), { repair: false });
  // Predictions scored with `eval score --out` cover the questions they answer.
  const ids = new Set(records.map((r) => r.id));
  const examples = info.kind === "scored" ? all.filter((e) => ids.has(e.id)) : all;
  return { examples, records, scorer: getScorer(info.dataset) };
}
