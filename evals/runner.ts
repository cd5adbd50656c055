import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BaseStore } from "@langchain/langgraph";
import { z } from "zod";
import { loadGraph, PROJECT_ROOT, type RunLimits, runLimits } from "../graphs/registry.js";
import type { Env } from "../models/config.js";
import { isEndpointFailure, ModelCallError } from "../models/errors.js";
import type { Configuration } from "../settings/configuration.js";
import { ensureConfiguration } from "../settings/configuration.js";
import { adoptOperatorFields } from "../settings/operator.js";
import {
  DEFAULT_MAX_ENDPOINT_FAILURES,
  type EndpointStop,
  endpointFailureIn,
  failedHost,
  stopMessage,
} from "./endpoint-failures.js";
import { forEachBounded } from "./pool.js";
import { inQuestion } from "./question-scope.js";
import {
  type LoadedResults,
  loadResults,
  lockResults,
  type ResultRecord,
  ResultsWriter,
} from "./results-file.js";
import { resolveRunConfig } from "./run-config.js";
import { beginRun, gitState, writeRunInfo } from "./run-info.js";
import type { Selection } from "./selection.js";
import type { ChartRunner, EvalExample, Scorer } from "./types.js";

/** What the runner needs of a graph; tests pass a fake, the CLI a compiled LangGraph graph. */
export interface EvalGraph {
  invoke(input: Record<string, unknown>, options: Record<string, unknown>): Promise<unknown>;
}

export interface RunOptions {
  examples: EvalExample[];
  scorer: Scorer;
  /** A graph of langgraph.json, by name. */
  graph: string;
  /** Runs this instead of loading `graph` (tests, benchmarks). */
  runnable?: EvalGraph;
  outDir: string;
  concurrency: number;
  /** Per question: the whole graph run, retries included. */
  timeoutMs: number;
  /** Extra tries of a question whose model calls failed transiently. */
  retries: number;
  /** First pause before a retry; it doubles each time. */
  retryDelayMs?: number;
  context: Partial<Configuration>;
  runChart?: ChartRunner;
  /** Long-term memory for the graph; none by default, so questions do not teach each other. */
  store?: BaseStore;
  /** Aborting stops starting questions and cancels those in flight (they are not recorded). */
  signal?: AbortSignal;
  /** For run.json: the command line, the dataset path and limit. */
  info?: { command?: string[]; data?: string; limit?: number };
  /** How `examples` were chosen from the dataset (default: all of them). */
  selection?: Selection;
  /** Where the model and endpoint are read from (default process.env). */
  env?: Env;
  /** Resume a directory whose results were made with another configuration (recorded). */
  allowConfigChange?: boolean;
  /** Questions in a row failing on the model endpoint that stop the run (default 3). */
  maxEndpointFailures?: number;
  /**
   * Answers the questions elsewhere (a queue's consumers: evals/queue/) instead of in this
   * process; the run keeps its results file, resume and endpoint stop as they are.
   */
  answerer?: AnswererFactory;
  onStart?: (info: { total: number; done: number; repaired: LoadedRepair }) => void;
  /** A question recorded, with the graph's final state (null when its run failed). */
  onResult?: (record: ResultRecord, state: unknown) => void;
  onUnscored?: (failure: Unscored) => void;
  /** A question that failed on the model endpoint; it is not recorded and runs again next time. */
  onFailedToRun?: (failure: Unscored) => void;
}

type LoadedRepair = { lines: number; savedTo: string } | null;

/**
 * How a question's run shows in a trace (LangSmith): tagged with its graph and dataset, and
 * metadata every run inside it inherits: graph, dataset, question id and which try it is.
 */
export function traceOf(graph: string, example: Pick<EvalExample, "id" | "dataset">, tries = 1) {
  return {
    tags: [graph, example.dataset],
    metadata: { graph, dataset: example.dataset, question_id: example.id, try: tries },
  };
}

/** A question whose answer could not be scored; it is not recorded, so it runs again next time. */
export interface Unscored {
  id: string;
  error: string;
}

export interface RunOutcome {
  records: ResultRecord[];
  /** Questions answered by this invocation (the rest were already in the file). */
  ran: number;
  unscored: Unscored[];
  /** Questions whose run failed on the model endpoint: not recorded, they run again next time. */
  failedToRun: Unscored[];
  /** Set when the run stopped early because the endpoint kept failing. */
  stopped: EndpointStop | null;
  interrupted: boolean;
}

/** The part of a graph's final state the runner reads. */
const GraphOutputSchema = z.object({
  answer: z.object({ final: z.string() }).nullish(),
  attempts: z
    .array(z.object({ code: z.string(), result: z.object({ ok: z.boolean() }).nullish() }))
    .default([]),
  budget: z
    .object({
      llmCalls: z.number(),
      cachedCalls: z.number(),
      promptTokens: z.number(),
      completionTokens: z.number(),
      llmMs: z.number(),
      execMs: z.number(),
    })
    .partial()
    .default({}),
  /**
   * The checker's verdict, as the blackboard fills it (VerdictSchema's defaults for what a
   * graph leaves out); a verdict the runner cannot read is left out, not a failed question.
   */
  verdict: z
    .object({
      pass: z.boolean(),
      support: z.string().default("none"),
      confidence: z.number().min(0).max(1).default(0),
      sure: z.boolean().default(false),
    })
    .nullish()
    .catch(null),
});
export type GraphOutput = z.infer<typeof GraphOutputSchema>;

/** A model failure that a later try may not see: rate limits, server errors, dropped connections. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof ModelCallError) || isEndpointFailure(error)) return false;
  return error.status === undefined || error.status === 429 || error.status >= 500;
}

/** The text the scorer reads: the final answer, after the chart code for chart questions. */
export function systemOutput(example: EvalExample, state: GraphOutput): string {
  const answer = `Final Answer: ${state.answer?.final ?? ""}`;
  if (example.category !== "Visualization") return answer;
  const code = state.attempts.findLast((a) => a.result?.ok)?.code ?? state.attempts.at(-1)?.code;
  return code ? `\`\`\`python\n${code}\n\`\`\`\n${answer}` : answer;
}

/** The run stopped (Ctrl-C, the endpoint stop) before the question's record was made. */
export class Cancelled extends Error {}
/** The question's answer could not be scored: not recorded, it runs again next time. */
export class ScoringFailed extends Error {}
/** The question's run failed on the model endpoint: not an answer, so it is not recorded. */
export class EndpointFailed extends Error {
  constructor(
    message: string,
    /** The endpoint's host, when the failure names it. */
    readonly host: string | undefined,
  ) {
    super(message);
  }
}
/**
 * The question was lost where it ran (a queue's consumer gave up on it): not an answer and not
 * the endpoint's fault, so it is neither recorded nor counted toward the endpoint stop.
 */
export class NotRun extends Error {}

/** A question answered: its record, and the graph's final state when it ran here. */
export interface Answered {
  record: ResultRecord;
  state: unknown;
}

/**
 * Where a run's questions are answered. `answer` gives the question's record or throws
 * Cancelled, ScoringFailed, EndpointFailed or NotRun; `recorded` follows once the record is in
 * the results file.
 */
export interface Answerer {
  answer(example: EvalExample, stop: AbortSignal): Promise<Answered>;
  recorded?(example: EvalExample): Promise<void>;
  /** Called once no question is in flight any more, whatever the outcome. */
  close?(outcome: { stopped: boolean }): Promise<void>;
  /** Questions in flight at once; the run's `concurrency` when unset. */
  width?: number;
}

/** What an answerer elsewhere needs to know of the run it serves. */
export interface RunStart {
  outDir: string;
  /** run.json's `started`: the first invocation's start, kept by every resume. */
  started: string;
  invocation: number;
  /** The questions without a result yet. */
  todo: EvalExample[];
  /** The run's options: graph, context, bounds, environment. */
  options: Readonly<RunOptions>;
}

export type AnswererFactory = (run: RunStart) => Promise<Answerer>;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The promise's outcome, or a rejection as soon as `signal` aborts, should the work ignore it. */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs every example not yet in `outDir/results.jsonl` through a graph, K at a time, and
 * appends one scored record per question. Safe to interrupt and run again: it resumes.
 */
export async function runEvaluation(options: RunOptions): Promise<RunOutcome> {
  const ids = new Set(options.examples.map((e) => e.id));
  if (ids.size !== options.examples.length) throw new Error("the examples repeat an id");
  mkdirSync(options.outDir, { recursive: true });
  const file = path.join(options.outDir, "results.jsonl");
  const selection = options.selection ?? { kind: "all" };
  const config = resolveRunConfig(
    { dataset: options.scorer.dataset, data: options.info?.data, graph: options.graph, selection },
    options.context,
    options.env,
  );
  const unlock = lockResults(file);
  try {
    const loaded = loadResults(file);
    const info = beginRun(
      options.outDir,
      {
        kind: "run",
        dataset: options.scorer.dataset,
        graph: options.graph,
        ...options.info,
        selection,
        config,
        context: options.context,
        concurrency: options.concurrency,
        timeoutMs: options.timeoutMs,
        retries: options.retries,
        questions: options.examples.length,
        git: gitState(PROJECT_ROOT),
      },
      { hasResults: loaded.records.length > 0, allowConfigChange: options.allowConfigChange },
    );
    const outcome = await answerRemaining(options, loaded, file, {
      invocation: info.invocations ?? 1,
      endpoint: config.endpoint,
      started: info.started ?? new Date().toISOString(),
    });
    const answered = new Set(outcome.records.map((r) => r.id));
    const complete = options.examples.every((e) => answered.has(e.id));
    const now = new Date().toISOString();
    const stopped = outcome.stopped ? { at: now, reason: stopMessage(outcome.stopped) } : null;
    writeRunInfo(options.outDir, {
      ...info,
      updated: now,
      finished: complete ? now : null,
      stopped,
    });
    return outcome;
  } finally {
    unlock();
  }
}

/** What answering one question needs: the graph, its limits and context, the scorer, the bounds. */
export interface QuestionSetup {
  graph: EvalGraph;
  /** The graph's name in langgraph.json, for traces. */
  graphName: string;
  limits: Partial<RunLimits>;
  /** The run's context, the operator's fields already taken out. */
  context: Partial<Configuration>;
  scorer: Scorer;
  runChart?: ChartRunner;
  timeoutMs: number;
  retries: number;
  retryDelayMs?: number;
  /** The invocation of the run the record belongs to. */
  invocation: number;
}

/**
 * Runs one question through the graph (transient model failures retried, within the
 * question's time limit) and scores it: its record, or Cancelled when `stop` aborts,
 * EndpointFailed, or ScoringFailed. The run's loop calls it here; a queue's consumer elsewhere.
 */
export async function answerQuestion(
  example: EvalExample,
  setup: QuestionSetup,
  stop: AbortSignal,
): Promise<Answered> {
  const started = performance.now();
  const deadline = AbortSignal.timeout(setup.timeoutMs);
  const signal = AbortSignal.any([stop, deadline]);
  const timedOut = `timed out after ${setup.timeoutMs} ms`;
  let state: GraphOutput | null = null;
  let finalState: unknown = null;
  let error: string | null = null;
  let tries = 0;
  while (state === null) {
    tries += 1;
    try {
      const value = await abortable(
        setup.graph.invoke(
          { question: example.question, sources: example.tables },
          {
            context: setup.context,
            signal,
            ...setup.limits,
            ...traceOf(setup.graphName, example, tries),
          },
        ),
        signal,
      );
      state = GraphOutputSchema.parse(value);
      finalState = value;
      error = null;
    } catch (caught) {
      if (stop.aborted) throw new Cancelled();
      const failure = deadline.aborted ? undefined : endpointFailureIn(caught);
      if (failure) throw new EndpointFailed(failure.message, failedHost(failure));
      error = deadline.aborted ? timedOut : messageOf(caught);
      if (deadline.aborted || !isTransient(caught) || tries > setup.retries) break;
      await pause((setup.retryDelayMs ?? 500) * 2 ** (tries - 1), signal);
      if (stop.aborted) throw new Cancelled();
      if (deadline.aborted) {
        error = timedOut;
        break;
      }
    }
  }
  const output = state ? systemOutput(example, state) : "";
  let score: ResultRecord["score"];
  try {
    score = await setup.scorer.score(example, output, { runChart: setup.runChart });
  } catch (caught) {
    if (stop.aborted) throw new Cancelled();
    throw new ScoringFailed(messageOf(caught));
  }
  // A score taken while stopping may have lost its sandbox run: keep it for next time.
  if (stop.aborted) throw new Cancelled();
  const budget = state?.budget ?? {};
  const verdict = state?.verdict;
  const record: ResultRecord = {
    id: example.id,
    prediction: score.prediction,
    output,
    score,
    latencyMs: Math.round(performance.now() - started),
    tokens: { prompt: budget.promptTokens ?? 0, completion: budget.completionTokens ?? 0 },
    llmCalls: budget.llmCalls ?? 0,
    cachedCalls: budget.cachedCalls ?? 0,
    attempts: state?.attempts.length ?? 0,
    llmMs: Math.round(budget.llmMs ?? 0),
    execMs: Math.round(budget.execMs ?? 0),
    tries,
    invocation: setup.invocation,
    error,
    ...(verdict
      ? {
          verdict: {
            pass: verdict.pass,
            support: verdict.support,
            confidence: verdict.confidence,
            sure: verdict.sure,
          },
        }
      : {}),
    finishedAt: new Date().toISOString(),
  };
  return { record, state: finalState };
}

/** The default answerer: the graph runs in this process, `concurrency` questions at a time. */
async function localAnswerer(options: RunOptions, invocation: number): Promise<Answerer> {
  const graph =
    options.runnable ?? (await loadGraph(options.graph, { persistence: { store: options.store } }));
  // A graph handed in (tests, benchmarks) runs with LangGraph's defaults.
  const limits = options.runnable
    ? {}
    : await runLimits(options.graph, ensureConfiguration(options.context));
  const setup: QuestionSetup = {
    graph,
    graphName: options.graph,
    limits,
    // The operator's fields (replay cache, sandbox) hold for the process, not in a run's context.
    context: adoptOperatorFields(options.context),
    scorer: options.scorer,
    runChart: options.runChart,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    retryDelayMs: options.retryDelayMs,
    invocation,
  };
  return { answer: (example, stop) => answerQuestion(example, setup, stop) };
}

async function answerRemaining(
  options: RunOptions,
  loaded: LoadedResults,
  file: string,
  run: { invocation: number; endpoint: string; started: string },
): Promise<RunOutcome> {
  const done = new Set(loaded.records.map((r) => r.id));
  const todo = options.examples.filter((e) => !done.has(e.id));
  const answered = options.examples.length - todo.length;
  options.onStart?.({ total: options.examples.length, done: answered, repaired: loaded.repaired });
  const answerer = options.answerer
    ? await options.answerer({
        outDir: options.outDir,
        started: run.started,
        invocation: run.invocation,
        todo,
        options,
      })
    : await localAnswerer(options, run.invocation);
  const records = [...loaded.records];
  const unscored: Unscored[] = [];
  const failedToRun: Unscored[] = [];
  let ran = 0;
  // Stopping on endpoint failures cancels like Ctrl-C, but the outcome tells them apart.
  const halt = new AbortController();
  const stopSignal = options.signal ? AbortSignal.any([options.signal, halt.signal]) : halt.signal;
  const maxFailures = options.maxEndpointFailures ?? DEFAULT_MAX_ENDPOINT_FAILURES;
  let failuresInARow = 0;
  let stopped: EndpointStop | null = null;

  const writer = new ResultsWriter(file);
  try {
    await forEachBounded(
      todo,
      answerer.width ?? options.concurrency,
      async (example) => {
        let record: ResultRecord;
        let state: unknown;
        try {
          ({ record, state } = await inQuestion(example.id, () =>
            answerer.answer(example, stopSignal),
          ));
        } catch (caught) {
          if (caught instanceof Cancelled) return;
          if (caught instanceof NotRun) {
            const failure = { id: example.id, error: caught.message };
            failedToRun.push(failure);
            options.onFailedToRun?.(failure);
            return;
          }
          if (caught instanceof EndpointFailed) {
            const failure = { id: example.id, error: caught.message };
            failedToRun.push(failure);
            options.onFailedToRun?.(failure);
            failuresInARow += 1;
            if (failuresInARow >= maxFailures && !stopped) {
              stopped = {
                endpoint: caught.host ?? run.endpoint,
                failures: failuresInARow,
                reason: caught.message,
              };
              halt.abort();
            }
            return;
          }
          if (!(caught instanceof ScoringFailed)) throw caught;
          // The graph ran: the endpoint answered.
          failuresInARow = 0;
          const failure = { id: example.id, error: caught.message };
          unscored.push(failure);
          options.onUnscored?.(failure);
          return;
        }
        failuresInARow = 0;
        writer.append(record);
        records.push(record);
        ran += 1;
        await answerer.recorded?.(example);
        options.onResult?.(record, state);
      },
      stopSignal,
    );
  } finally {
    writer.close();
    await answerer.close?.({ stopped: stopped !== null });
  }
  return {
    records,
    ran,
    unscored,
    failedToRun,
    stopped,
    interrupted: Boolean(options.signal?.aborted),
  };
}
