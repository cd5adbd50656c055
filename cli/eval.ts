import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SingleBar } from "cli-progress";
import type { Command } from "commander";
import { z } from "zod";
import type { Report } from "../evals/report.js";
import type { ResultRecord } from "../evals/results-file.js";
import type { ChartRunner, DatasetSummary, EvalExample } from "../evals/types.js";
import { closeSandboxes, getSandbox } from "../tools/sandbox/index.js";
import { nonNegativeInt, positiveInt } from "./args.js";
import { listGraphs } from "./graphs.js";

const RunJsonSchema = z.object({
  dataset: z.string(),
  data: z.string().optional(),
  limit: z.number().optional(),
});

function summaryLines(summary: DatasetSummary): string {
  const groups = summary.groups.map(
    (g) =>
      `  ${g.name.padEnd(20)} ${String(g.n).padStart(4)}  ${g.metric.padEnd(6)} ${g.score.toFixed(2)}`,
  );
  return [
    `${summary.dataset}: overall ${summary.overall.toFixed(2)} over ${summary.n} questions, Parse@1 ${summary.parseRate.toFixed(2)}%`,
    ...groups,
  ].join("\n");
}

/** The evaluation modules load on use: charts and the runner cost ~0.3 s that `ask` need not pay. */
async function evals() {
  const [datasets, metrics, chart, report, results, runner] = await Promise.all([
    import("../evals/datasets/index.js"),
    import("../evals/metrics/index.js"),
    import("../evals/metrics/chart.js"),
    import("../evals/report.js"),
    import("../evals/results-file.js"),
    import("../evals/runner.js"),
  ]);
  return {
    ...datasets,
    ...metrics,
    ...report,
    ...results,
    ...runner,
    localCharts: async (): Promise<ChartRunner> =>
      chart.sandboxChartRunner(await getSandbox("local")),
  };
}

/** Progress on stderr: a bar with rate and ETA on a terminal, a line per question otherwise. */
function progress(quiet: boolean) {
  let bar: SingleBar | undefined;
  let count = 0;
  let total = 0;
  return {
    start(todo: number, done: number, all: number) {
      total = all;
      count = done;
      if (quiet) return;
      if (process.stderr.isTTY) {
        bar = new SingleBar({
          format: "eval [{bar}] {value}/{total} | {rate}/min | ETA {eta_formatted} | score {score}",
          stream: process.stderr,
        });
        bar.start(all, done, { rate: "0.0", score: "-" });
      } else {
        process.stderr.write(`eval: ${todo} to run, ${done} already done, ${all} in all\n`);
      }
    },
    tick(record: ResultRecord, started: number, mean: number) {
      count += 1;
      if (quiet) return;
      const rate = ((count * 60_000) / Math.max(1, performance.now() - started)).toFixed(1);
      if (bar) bar.update(count, { rate, score: (100 * mean).toFixed(1) });
      else {
        const err = record.error ? ` error: ${record.error}` : "";
        process.stderr.write(
          `[${count}/${total}] ${record.id} ${record.score.metric}=${record.score.score.toFixed(2)} ${record.latencyMs} ms${err}\n`,
        );
      }
    },
    stop() {
      bar?.stop();
    },
  };
}

export function registerEvalCommands(program: Command): void {
  const evalCommand = program
    .command("eval")
    .description("evaluate a graph on a benchmark (TableBench), resumably, and report the scores");

  evalCommand
    .command("run", { isDefault: true })
    .description("run a dataset's questions through a graph; the same command again resumes")
    .requiredOption("-d, --dataset <name>", "dataset: tablebench")
    .option(
      "--data <path>",
      "the dataset file (default: $TABLEMINDS_HOME/datasets/<name>, or ../shared)",
    )
    .option("-g, --graph <name>", "graph of langgraph.json", "table_qa")
    .option("-n, --limit <n>", "only the first n questions", positiveInt)
    .option("-c, --concurrency <k>", "questions in flight at once", positiveInt, 4)
    .option("-o, --out <dir>", "run directory (results.jsonl, report.md, charts/)")
    .option("--timeout <ms>", "per-question limit for the whole run", positiveInt, 300_000)
    .option("--retries <n>", "tries again after a transient model failure", nonNegativeInt, 2)
    .option("-m, --model <name>", "model for every role")
    .option("--max-reflections <n>", "reflections after a failed check (default 2)", nonNegativeInt)
    .option("--no-check", "skip checking answers")
    .option(
      "--replay-cache <file>",
      "answer repeated model calls from this file and record new ones",
    )
    .option("-q, --quiet", "no progress on stderr", false)
    .action(async (opts) => {
      const { loadDataset, getScorer, runEvaluation, writeReport, localCharts } = await evals();
      if (!listGraphs()[opts.graph]) throw new Error(`unknown graph "${opts.graph}"`);
      const examples = await loadDataset(opts.dataset, { path: opts.data, limit: opts.limit });
      const scorer = getScorer(opts.dataset);
      const outDir = path.resolve(opts.out ?? path.join("runs", `${opts.dataset}-${opts.graph}`));
      const controller = new AbortController();
      const onSigint = () => {
        process.stderr.write(
          "\neval: stopping; questions in flight are dropped and rerun next time\n",
        );
        controller.abort();
      };
      process.once("SIGINT", onSigint);
      const bar = progress(opts.quiet);
      const started = performance.now();
      let sum = 0;
      let n = 0;
      try {
        const outcome = await runEvaluation({
          examples,
          scorer,
          graph: opts.graph,
          outDir,
          concurrency: opts.concurrency,
          timeoutMs: opts.timeout,
          retries: opts.retries,
          context: Object.fromEntries(
            Object.entries({
              model: opts.model,
              maxReflections: opts.maxReflections,
              check: opts.check,
              replayCache: opts.replayCache ? path.resolve(opts.replayCache) : undefined,
              memory: false,
            }).filter(([, v]) => v !== undefined),
          ),
          runChart: await localCharts(),
          signal: controller.signal,
          meta: { data: opts.data ? path.resolve(opts.data) : undefined, limit: opts.limit },
          onStart: ({ total, done, repaired }) => {
            if (repaired) {
              process.stderr.write(
                `eval: ${repaired.lines} torn line(s) in results.jsonl moved to ${repaired.savedTo}; those questions run again\n`,
              );
            }
            bar.start(total - done, done, total);
          },
          onResult: (record) => {
            sum += record.score.score;
            n += 1;
            bar.tick(record, started, sum / n);
          },
        });
        bar.stop();
        const report = await writeReport(outDir, examples, outcome.records, scorer);
        process.stdout.write(
          `${summaryLines(report.summary)}\nreport: ${path.join(outDir, "report.md")}\n`,
        );
        if (process.env.LANGSMITH_API_KEY?.trim()) {
          await toLangSmith(opts.dataset, opts.graph, outDir, examples, outcome.records);
        }
        if (outcome.interrupted) process.exitCode = 130;
      } finally {
        process.removeListener("SIGINT", onSigint);
        bar.stop();
        await closeSandboxes();
      }
    });

  evalCommand
    .command("score")
    .description(
      "score a predictions file made elsewhere (JSONL of {id, prediction}) with the official scorer",
    )
    .argument(
      "<file>",
      "predictions: one JSON object per line with id and prediction (the raw output)",
    )
    .requiredOption("-d, --dataset <name>", "dataset: tablebench")
    .option("--data <path>", "the dataset file")
    .option("--json", "print the summary as JSON", false)
    .action(async (file: string, opts) => {
      const { loadDataset, getScorer, localCharts } = await evals();
      const examples = await loadDataset(opts.dataset, { path: opts.data });
      const byId = new Map(examples.map((e) => [e.id, e]));
      const scorer = getScorer(opts.dataset);
      const Line = z.object({ id: z.string(), prediction: z.string() });
      const lines = readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim());
      const runChart = await localCharts();
      try {
        const scored = [];
        for (const [i, line] of lines.entries()) {
          const parsed = Line.safeParse(JSON.parse(line));
          if (!parsed.success) throw new Error(`${file}:${i + 1}: expected {"id", "prediction"}`);
          const example = byId.get(parsed.data.id);
          if (!example)
            throw new Error(`${file}:${i + 1}: id ${parsed.data.id} is not in ${opts.dataset}`);
          scored.push({
            example,
            score: await scorer.score(example, parsed.data.prediction, { runChart }),
          });
        }
        const summary = scorer.summarize(
          scored.map((s) => s.example),
          scored.map((s) => s.score),
        );
        process.stdout.write(
          opts.json ? `${JSON.stringify(summary, null, 2)}\n` : `${summaryLines(summary)}\n`,
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
      process.stdout.write(
        `${summaryLines(report.summary)}\nreport: ${path.join(run, "report.md")}\n`,
      );
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
        return { name: path.basename(path.resolve(dir)), report, records };
      };
      const text = compareRuns(await side(runA), await side(runB));
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
  const { loadDataset, loadResults, getScorer } = await evals();
  const runJson = path.join(dir, "run.json");
  if (!existsSync(runJson)) throw new Error(`${dir} is not a run directory (no run.json)`);
  const meta = RunJsonSchema.parse(JSON.parse(readFileSync(runJson, "utf8")));
  const examples = await loadDataset(meta.dataset, { path: meta.data, limit: meta.limit });
  const { records } = loadResults(path.join(dir, "results.jsonl"));
  return { examples, records, scorer: getScorer(meta.dataset) };
}
