import { z } from "zod";
import { type Figure, TableSourceSchema } from "../blackboard/schemas.js";

/** One benchmark question, the same shape for every dataset. */
export const EvalExampleSchema = z.object({
  id: z.string().min(1),
  dataset: z.string().min(1),
  question: z.string(),
  tables: z.array(TableSourceSchema).min(1),
  /** The gold answer as the dataset writes it (TableBench text, WikiTQ `|`-joined targets, TabFact "1"/"0"). */
  gold: z.string(),
  /**
   * WikiTQ's CoreNLP-normalized targets (`targetCanon` of tagged/data/*.tagged), one per gold
   * value; its official evaluator compares against these when it has them.
   */
  goldCanonical: z.array(z.string()).optional(),
  /** TableBench's qtype and qsubtype; other datasets may leave them unset. */
  category: z.string().optional(),
  subcategory: z.string().optional(),
  /** TableBench Visualization rows only. */
  chartType: z.string().optional(),
});
export type EvalExample = z.infer<typeof EvalExampleSchema>;

/** The score of one prediction. Metric values are fractions in [0, 1]. */
export const QuestionScoreSchema = z.object({
  id: z.string(),
  /** What the scorer read from the output (e.g. the `Final Answer:` text); "" when nothing parsed. */
  prediction: z.string(),
  parsed: z.boolean(),
  /** Every metric the dataset defines for this question, e.g. {em, em10, rougeL} or {pass}. */
  metrics: z.record(z.string(), z.number()),
  /** The name of the metric that counts for this question, and its value. */
  metric: z.string(),
  score: z.number(),
});
export type QuestionScore = z.infer<typeof QuestionScoreSchema>;

export const GroupScoreSchema = z.object({
  name: z.string(),
  n: z.number().int().nonnegative(),
  metric: z.string(),
  /** Percent, as the benchmark reports it. */
  score: z.number(),
});
export type GroupScore = z.infer<typeof GroupScoreSchema>;

export const DatasetSummarySchema = z.object({
  dataset: z.string(),
  n: z.number().int().nonnegative(),
  /** The benchmark's headline number, in percent. */
  overall: z.number(),
  /**
   * TableBench only (when it has chart questions): Overall recomputed with Visualization's
   * Pass@1 as a percent, where upstream's formula, which `overall` follows, adds it as a fraction
   * between 0 and 1. A corrected figure, not the published one.
   */
  overallPassPercent: z.number().optional(),
  /** Share of outputs the scorer could parse, in percent (TableBench's Parse@1). */
  parseRate: z.number(),
  groups: z.array(GroupScoreSchema),
  subgroups: z.array(GroupScoreSchema),
  /** Means of every metric over the questions that have it, in percent. */
  metrics: z.record(z.string(), z.number()),
});
export type DatasetSummary = z.infer<typeof DatasetSummarySchema>;

/**
 * Runs chart code for TableBench's Visualization metric; a sandbox supplies it, with the
 * figures the run left open as it reads them (sandbox/figures.py).
 */
export type ChartRunner = (
  code: string,
  timeoutMs: number,
) => Promise<{ ok: boolean; stdout: string; error?: string; figures?: Figure[] }>;

/** A dataset's official scoring. */
export interface Scorer {
  dataset: string;
  /** Scores one raw system output (the full text the system produced) against the example. */
  score(
    example: EvalExample,
    output: string,
    options?: { runChart?: ChartRunner },
  ): Promise<QuestionScore>;
  /** The benchmark's aggregate over the scored questions. */
  summarize(examples: EvalExample[], scores: QuestionScore[]): DatasetSummary;
}
