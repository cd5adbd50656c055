import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { type Configuration, ensureConfiguration } from "../../blackboard/configuration.js";
import { BranchSchema, MemorySchema, TableRefSchema } from "../../blackboard/schemas.js";
import { currentQuestion } from "../../evals/question-scope.js";
import { loadResults, lockResults } from "../../evals/results-file.js";
import {
  type EvalGraph,
  type RunOptions,
  type RunOutcome,
  runEvaluation,
} from "../../evals/runner.js";
import { stratifiedSample } from "../../evals/selection.js";
import type { EvalExample, Scorer } from "../../evals/types.js";
import { loadGraph, runLimits } from "../../graphs/registry.js";
import { type ExportCounts, writeExports } from "../exports/write.js";
import { collectQuestion } from "./collect.js";
import { MinedWriter, readMined, repairMined } from "./journal.js";
import type { MineStage } from "./records.js";

/*
 * `mine`: the eval runner drives mcts over the questions (resume, lock, retries, timeouts,
 * results.jsonl of the best answers); a wrapper around the graph gives it the gold answer and
 * appends the question's whole search to mined.jsonl before the runner records it. The exports
 * are then rebuilt from mined.jsonl.
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

export async function mine(options: MineOptions): Promise<MineOutcome> {
  mkdirSync(options.outDir, { recursive: true });
  const minedFile = path.join(options.outDir, MINED_FILE);
  const context: Partial<Configuration> = {
    ...options.context,
    searchMode: options.stage,
    memory: false,
    maxReflections: 0,
  };
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
    const graph = options.graph ?? (await loadGraph("mcts"));
    const limits = options.graph ? {} : await runLimits("mcts", config);
    const writer = new MinedWriter(minedFile);
    const runnable: EvalGraph = {
      async invoke(input, invokeOptions) {
        const id = currentQuestion();
        const example = id ? byId.get(id) : undefined;
        if (!example) throw new Error(`mine: no question for run ${id ?? "(none)"}`);
        const state = await graph.invoke(
          { ...input, gold: example.gold },
          { ...invokeOptions, ...limits },
        );
        const mined = await collectQuestion(
          example,
          options.stage,
          SearchStateSchema.parse(state),
          {
            scorer: options.scorer,
            sampleRows: config.sampleRows,
            contextTokens: config.contextTokens,
          },
        );
        const signal = (invokeOptions as { signal?: AbortSignal }).signal;
        // A run given up on (timeout, Ctrl-C) is not recorded by the runner: not here either.
        if (!signal?.aborted) writer.append(mined);
        return state;
      },
    };
    let run: RunOutcome;
    try {
      run = await runEvaluation({ ...options, graph: "mcts", runnable, context });
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
