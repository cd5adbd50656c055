import { exactMatch, parsePrediction, tablebenchScorer } from "../../evals/metrics/tablebench.js";
import type { EvalExample } from "../../evals/types.js";
import { answerFormat } from "./format.js";
import { type RewardFunction, total } from "./types.js";

/*
 * Answer rewards against the gold answer, the answer being the text of the "Final Answer:"
 * line (TableBench's parser; "" when there is none).
 *   paper:   0.1 format + 0.9 TableBench exact match
 *   release: TableBench's own metric for the question's qtype/qsubtype and nothing else: EM;
 *            EM within 10% for CorrelationAnalysis, TrendForecasting, StatisticalAnalysis;
 *            ROUGE-L for the other DataAnalysis subtypes. Visualization questions score 0
 *            (their metric runs the chart, which a reward does not).
 */

export const paperAnswerReward: RewardFunction = async (sample) =>
  total({
    format: 0.1 * answerFormat(sample.response),
    match: 0.9 * exactMatch(sample.reference, parsePrediction(sample.response) ?? ""),
  });

export const releaseAnswerReward: RewardFunction = async (sample) => {
  // The scorer reads only the gold answer and the type; the rest fills EvalExample's shape.
  const example: EvalExample = {
    id: "reward",
    dataset: "tablebench",
    question: "",
    tables: [{ columns: [], data: [] }],
    gold: sample.reference,
    category: sample.qtype,
    subcategory: sample.qsubtype,
  };
  const scored = await tablebenchScorer.score(example, sample.response);
  return total({ [scored.metric ?? "score"]: scored.score });
};
