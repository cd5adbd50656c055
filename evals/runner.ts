import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { BaseStore } from "@langchain/langgraph";
import type { Configuration } from "../blackboard/configuration.js";
import { ensureConfiguration } from "../blackboard/configuration.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { loadGraph } from "../cli/graphs.js";
import { withPersistence } from "../cli/persistence.js";
import { stepBound } from "../graphs/table_qa.js";
import { ModelCallError } from "../tools/models/errors.js";
import { loadResults, type ResultRecord, ResultsWriter } from "./results-file.js";
import type { ChartRunner, EvalExample, Scorer } from "./types.js";

export interface RunOptions {
  examples: EvalExample[];
  scorer: Scorer;
  graph: string;
  outDir: string;
  concurrency: number;
  /** Per question, for the whole graph run. */
  timeoutMs: number;
  /** Extra tries of a question whose model calls failed transiently. */
  retries: number;
  context: Partial<Configuration>;
  runChart?: ChartRunner;
  /** Long-term memory for the graph; none by default, so questions do not teach each other. */
  store?: BaseStore;
  /** Aborting stops starting questions and cancels those in flight (they are not recorded). */
  signal?: AbortSignal;
  /** Extra facts for run.json (dataset path, limit, command line). */
  meta?: Record<string, unknown>;
  onStart?: (info: { total: number; done: number; repaired: LoadedRepair }) => void;
  onResult?: (record: ResultRecord) => void;
}

type LoadedRepair = { lines: number; savedTo: string } | null;

export interface RunOutcome {
  records: ResultRecord[];
  /** Questions answered by this invocation (the rest were already in the file). */
  ran: number;
  interrupted: boolean;
}

/** A model failure that a later try may not see: rate limits, server errors, dropped connections. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof ModelCallError)) return false;
  return error.status === undefined || error.status === 429 || error.status >= 500;
}

/** The text the scorer reads: the final answer, after the chart code for chart questions. */
export function systemOutput(example: EvalExample, state: TableQAStateValue): string {
  const answer = `Final Answer: ${state.answer?.final ?? ""}`;
  if (example.category !== "Visualization") return answer;
  const code = state.attempts.findLast((a) => a.result?.ok)?.code ?? state.attempts.at(-1)?.code;
  return code ? `\`\`\`python\n${code}\n\`\`\`\n${answer}` : answer;
}

class Cancelled extends Error {}

/**
 * Runs every example not yet in `outDir/results.jsonl` through a graph, K at a time, and
 * appends one scored record per question. Safe to interrupt and run again: it resumes.
 */
export async function runEvaluation(options: RunOptions): Promise<RunOutcome> {
  mkdirSync(options.outDir, { recursive: true });
  const file = path.join(options.outDir, "results.jsonl");
  const loaded = loadResults(file);
  const done = new Set(loaded.records.map((r) => r.id));
  const todo = options.examples.filter((e) => !done.has(e.id));
  options.onStart?.({ total: options.examples.length, done: done.size, repaired: loaded.repaired });
  const graph = withPersistence(await loadGraph(options.graph), { store: options.store });
  const config = ensureConfiguration(options.context);
  const writer = new ResultsWriter(file);
  const records = [...loaded.records];
  let next = 0;
  let ran = 0;

  const runOne = async (example: EvalExample): Promise<ResultRecord> => {
    const started = performance.now();
    let state: TableQAStateValue | null = null;
    let error: string | null = null;
    for (let attempt = 0; attempt <= options.retries; attempt++) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      try {
        state = (await graph.invoke(
          { question: example.question, sources: example.tables },
          { context: options.context, signal, recursionLimit: stepBound(config) },
        )) as TableQAStateValue;
        error = null;
        break;
      } catch (caught) {
        if (options.signal?.aborted) throw new Cancelled();
        error = timeout.aborted
          ? `timed out after ${options.timeoutMs} ms`
          : caught instanceof Error
            ? caught.message
            : String(caught);
        if (!isTransient(caught) || attempt === options.retries) break;
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      }
    }
    const output = state ? systemOutput(example, state) : "";
    const score = await options.scorer.score(example, output, { runChart: options.runChart });
    return {
      id: example.id,
      prediction: score.prediction,
      output,
      score,
      latencyMs: Math.round(performance.now() - started),
      tokens: {
        prompt: state?.budget.promptTokens ?? 0,
        completion: state?.budget.completionTokens ?? 0,
      },
      llmCalls: state?.budget.llmCalls ?? 0,
      attempts: state?.attempts.length ?? 0,
      error,
      finishedAt: new Date().toISOString(),
    };
  };

  const worker = async () => {
    while (!options.signal?.aborted) {
      const example = todo[next++];
      if (!example) return;
      try {
        const record = await runOne(example);
        writer.append(record);
        records.push(record);
        ran += 1;
        options.onResult?.(record);
      } catch (caught) {
        if (caught instanceof Cancelled) return;
        throw caught;
      }
    }
  };

  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(options.concurrency, todo.length)) }, worker),
    );
  } finally {
    writer.close();
  }
  writeFileSync(
    path.join(options.outDir, "run.json"),
    `${JSON.stringify(
      {
        ...options.meta,
        graph: options.graph,
        dataset: options.scorer.dataset,
        questions: options.examples.length,
        context: options.context,
        updated: new Date().toISOString(),
      },
      null,
      2,
    )}\n`,
  );
  return { records, ran, interrupted: Boolean(options.signal?.aborted) };
}
