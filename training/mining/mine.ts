import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { BranchSchema, MemorySchema, TableRefSchema } from "../../blackboard/schemas.js";
import { currentQuestion } from "../../evals/question-scope.js";
import { loadResults, lockResults } from "../../evals/results-file.js";
import {
  type AnswererFactory,
  type EvalGraph,
  type RunOptions,
  type RunOutcome,
  runEvaluation,
} from "../../evals/runner.js";
import { stratifiedSample } from "../../evals/selection.js";
import type { EvalExample, Scorer } from "../../evals/types.js";
import { loadGraph, type RunLimits, runLimits } from "../../graphs/registry.js";
import { type Configuration, ensureConfiguration } from "../../settings/configuration.js";
import { type ExportCounts, writeExports } from "../exports/write.js";
import { collectQuestion } from "./collect.js";
import { MinedWriter, readMined, repairMined } from "./journal.js";
import type { MinedQuestion, MineStage } from "./records.js";

/*
 * `mine`: the eval runner drives mcts over the questions (resume, lock, retries, timeouts,
 * results.jsonl of the best answers); a wrapper around the graph gives it the gold answer and
 * appends the question's whole search to mined.jsonl before the runner records it (on a queue,
 * the wrapper runs on a consumer and the search comes back with the record: queue.ts). The
 * exports are then rebuilt from mined.jsonl.
 */

export const MINED_FILE = "mined.jsonl";

export interface MineOptions
  extends Pick<
    RunOptions,
    | "concurrency"
    | "timeoutMs"
    | "retries"
    | "signal"
    | "selection"
    | "info"
    | "env"
    | "allowConfigChange"
    | "onStart"
    | "onResult"
    | "onUnscored"
    | "onFailedToRun"
  > {
  examples: EvalExample[];
  scorer: Scorer;
  stage: MineStage;
  outDir: string;
  /** The rest of the configuration; `searchMode` is the stage's, memory is off. */
  context: Partial<Configuration>;
  /** Questions held out as the test split (seeded, stratified by subtype). */
  heldOut: number;
  seed: number;
  /** Runs this instead of the mcts graph (tests). */
  graph?: EvalGraph;
  /**
   * Mines on a queue's consumers (training/mining/queue.ts) instead of in this process: the
   * answerer of the run, given where each question's mined search goes.
   */
  remote?: (keep: (mined: MinedQuestion) => void) => AnswererFactory;
}

export interface MineOutcome {
  run: RunOutcome;
  exports: ExportCounts;
}

const SearchStateSchema = z.object({
  tables: z.array(TableRefSchema),
  memories: z.array(MemorySchema).default([]),
  branches: z.array(BranchSchema),
});

/**
 * The mcts graph as mining drives it: given the gold answer of the question it runs (`example`
 * finds it by id), and each question's whole search collected and handed to `keep`, unless the
 * run was given up on (timeout, Ctrl-C), which the runner does not record either.
 */
export function miningGraph(options: {
  graph: EvalGraph;
  limits: Partial<RunLimits>;
  stage: MineStage;
  scorer: Scorer;
  config: Configuration;
  example: (id: string | undefined) => EvalExample | undefined;
  keep: (mined: MinedQuestion) => void;
}): EvalGraph {
  const { graph, limits, config } = options;
  return {
    async invoke(input, invokeOptions) {
      const id = currentQuestion();
      const example = options.example(id);
      if (!example) throw new Error(`mine: no question for run ${id ?? "(none)"}`);
      const state = await graph.invoke(
        { ...input, gold: example.gold },
        { ...invokeOptions, ...limits },
      );
      const mined = await collectQuestion(example, options.stage, SearchStateSchema.parse(state), {
        scorer: options.scorer,
        sampleRows: config.sampleRows,
        contextTokens: config.contextTokens,
      });
      const signal = (invokeOptions as { signal?: AbortSignal }).signal;
      if (!signal?.aborted) options.keep(mined);
      return state;
    },
  };
}

/** The context a mining run gives the mcts graph: the stage's search mode, memory and reflections off. */
function miningContext(context: Partial<Configuration>, stage: MineStage): Partial<Configuration> {
  return { ...context, searchMode: stage, memory: false, maxReflections: 0 };
}

export async function mine(options: MineOptions): Promise<MineOutcome> {
  mkdirSync(options.outDir, { recursive: true });
  const minedFile = path.join(options.outDir, MINED_FILE);
  const context = miningContext(options.context, options.stage);
  const config = ensureConfiguration(context);
  const byId = new Map(options.examples.map((e) => [e.id, e]));
  const unlock = lockResults(minedFile);
  try {
    const done = new Set(
      loadResults(path.join(options.outDir, "results.jsonl"), { repair: false }).records.map(
        (r) => r.id,
      ),
    );
    repairMined(minedFile, done);
    const writer = new MinedWriter(minedFile);
    const keep = (mined: MinedQuestion) => writer.append(mined);
    let run: RunOutcome;
    try {
      // Mined lines come back with the questions' records and are written before them.
      const answering = options.remote
        ? { answerer: options.remote(keep) }
        : {
            runnable: miningGraph({
              graph: options.graph ?? (await loadGraph("mcts")),
              limits: options.graph ? {} : await runLimits("mcts", config),
              stage: options.stage,
              scorer: options.scorer,
              config,
              example: (id) => (id ? byId.get(id) : undefined),
              keep,
            }),
          };
      run = await runEvaluation({ ...options, graph: "mcts", ...answering, context });
    } finally {
      writer.close();
    }
    const recorded = new Set(run.records.map((r) => r.id));
    const questions = readMined(minedFile).filter((q) => recorded.has(q.id) && byId.has(q.id));
    const heldOut = new Set(
      stratifiedSample(options.examples, options.heldOut, options.seed).map((e) => e.id),
    );
    const exports = await writeExports(options.outDir, questions, {
      heldOut,
      dataSource: `tableminds/${options.scorer.dataset}`,
    });
    return { run, exports };
  } finally {
    unlock();
  }
}
