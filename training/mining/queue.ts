import path from "node:path";
import { z } from "zod";
import { inQuestion } from "../../evals/question-scope.js";
import { QuestionJobSchema, QuestionResultSchema } from "../../evals/queue/payload.js";
import { type GraphSource, projectGraphs, questionSetup } from "../../evals/queue/run-job.js";
import { queuedAnswerer } from "../../evals/queue/submit.js";
import { type AnswererFactory, answerQuestion } from "../../evals/runner.js";
import { ensureConfiguration } from "../../settings/configuration.js";
import { artifactDir } from "../../storage/artifacts.js";
import { miningGraph } from "./mine.js";
import { MINE_STAGES, type MinedQuestion, MinedQuestionSchema } from "./records.js";

/*
 * `mine --queue`: each question's mcts search runs on a consumer, which returns the question's
 * record and its mined search; the submitter writes both, mined.jsonl first, as a local mine
 * does.
 */

export const MineJobSchema = QuestionJobSchema.extend({ stage: z.enum(MINE_STAGES) });
export type MineJob = z.infer<typeof MineJobSchema>;

export const MineResultSchema = QuestionResultSchema.extend({
  /** Absent when the search failed (the record then says why), as a local mine writes none. */
  mined: MinedQuestionSchema.optional(),
});
export type MineResult = z.infer<typeof MineResultSchema>;

/**
 * A mined search as if mined here: its tables' files named in this machine's artifact folder,
 * where readers look for them by hash (storage/artifacts.ts: localArtifact), not in the
 * consumer's.
 */
export function minedHere(mined: MinedQuestion): MinedQuestion {
  const tables = mined.tables.map((table) => {
    const name = path.basename(table.uri);
    const stored = name === `${table.sha256}.csv` || name === `${table.sha256}.parquet`;
    return stored ? { ...table, uri: path.join(artifactDir(), name) } : table;
  });
  return { ...mined, tables };
}

/** The run's answerer for `mine`'s options: its questions go to the queue as "mine" jobs. */
export function queuedMining(options: {
  url: string;
  stage: MineJob["stage"];
  note?: (line: string) => void;
}): (keep: (mined: MinedQuestion) => void) => AnswererFactory {
  return (keep) =>
    queuedAnswerer({
      url: options.url,
      kind: "mine",
      result: MineResultSchema,
      schema: MineJobSchema,
      extra: { stage: options.stage },
      keep: (result) => {
        if (result.mined) keep(minedHere(result.mined));
      },
      note: options.note,
    });
}

/** Mines one question on a consumer: its record and its search, as a local mine makes them. */
export async function runMineJob(
  job: MineJob,
  stop: AbortSignal,
  graphs: GraphSource = projectGraphs,
): Promise<Omit<MineResult, "warnings">> {
  const setup = await questionSetup(job, graphs);
  let mined: MinedQuestion | undefined;
  const graph = miningGraph({
    graph: setup.graph,
    limits: setup.limits,
    stage: job.stage,
    scorer: setup.scorer,
    config: ensureConfiguration(setup.context),
    example: () => job.example,
    keep: (search) => {
      mined = search;
    },
  });
  // The wrapper applies the graph's limits, as it does in a local mine.
  const { record } = await inQuestion(job.example.id, () =>
    answerQuestion(job.example, { ...setup, graph, limits: {} }, stop),
  );
  return { record, ...(mined ? { mined } : {}) };
}
