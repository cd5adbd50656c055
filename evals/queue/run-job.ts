import { loadGraph, type RunLimits, type RunnableGraph, runLimits } from "../../graphs/registry.js";
import { getSandbox } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { ensureConfiguration } from "../../settings/configuration.js";
import { sandboxChartRunner } from "../metrics/chart.js";
import { getScorer } from "../metrics/index.js";
import { inQuestion } from "../question-scope.js";
import { answerQuestion, type EvalGraph, type QuestionSetup } from "../runner.js";
import type { ChartRunner } from "../types.js";
import type { QuestionJob, QuestionResult } from "./payload.js";

/*
 * A worker's side of one question: the run's configuration from the job, the graph
 * (loaded once per process), the same answering and scoring a local run does.
 */

/** How a worker finds a graph by name and its limits under a configuration; benchmarks give their own. */
export type GraphSource = (
  name: string,
  configuration: Configuration,
) => Promise<{ graph: EvalGraph; limits: Partial<RunLimits> }>;

const loaded = new Map<string, Promise<RunnableGraph>>();

/** The graphs of langgraph.json, each loaded once per process. */
export const projectGraphs: GraphSource = async (name, configuration) => {
  let graph = loaded.get(name);
  if (!graph) {
    graph = loadGraph(name);
    loaded.set(name, graph);
    graph.catch(() => loaded.delete(name));
  }
  return { graph: await graph, limits: await runLimits(name, configuration) };
};

let charts: Promise<ChartRunner> | undefined;

/** TableBench's chart questions are scored in the local sandbox, started on the first one. */
const runChart: ChartRunner = async (code, timeoutMs) => {
  charts ??= getSandbox("local").then(sandboxChartRunner);
  return (await charts)(code, timeoutMs);
};

/** What answering the job's question needs; the models are the worker's own. */
export async function questionSetup(job: QuestionJob, graphs: GraphSource): Promise<QuestionSetup> {
  const context = job.context as Partial<Configuration>;
  const { graph, limits } = await graphs(job.graph, ensureConfiguration(context));
  return {
    graph,
    graphName: job.graph,
    limits,
    context,
    scorer: getScorer(job.dataset),
    runChart,
    timeoutMs: job.timeoutMs,
    retries: job.retries,
    invocation: job.invocation,
  };
}

/** Answers an evaluation's question: its record, or the runner's errors (runner.ts: answerQuestion). */
export async function runEvalJob(
  job: QuestionJob,
  stop: AbortSignal,
  graphs: GraphSource = projectGraphs,
): Promise<Omit<QuestionResult, "warnings">> {
  const setup = await questionSetup(job, graphs);
  const { record } = await inQuestion(job.example.id, () =>
    answerQuestion(job.example, setup, stop),
  );
  return { record };
}
