import type { DatasetSummary, EvalExample, QuestionScore, Scorer } from "../types.js";
import { singleGroupSummary } from "./summary.js";
import { parsePrediction } from "./tablebench.js";

const ENTAILED = /^(yes|true|entailed|entails|supported|1)$/i;
const REFUTED = /^(no|false|refuted|refutes|not supported|0)$/i;

/** A verdict on a statement as 1 (entailed) or 0 (refuted), or null when it is neither. */
export function parseVerdict(prediction: string): 0 | 1 | null {
  const text = prediction
    .trim()
    .replace(/[.!"'*`]+$/g, "")
    .replace(/^[*`"']+/, "")
    .trim();
  if (ENTAILED.test(text)) return 1;
  if (REFUTED.test(text)) return 0;
  return null;
}

/** TabFact accuracy: the verdict equals the gold label ("1" entailed, "0" refuted). */
export const tabfactScorer: Scorer = {
  dataset: "tabfact",
  async score(example: EvalExample, output: string): Promise<QuestionScore> {
    const parsed = parsePrediction(output);
    const verdict = parsed === null ? null : parseVerdict(parsed);
    const right = verdict !== null && String(verdict) === example.gold.trim() ? 1 : 0;
    return {
      id: example.id,
      prediction: parsed ?? "",
      parsed: verdict !== null,
      metrics: { accuracy: right },
      metric: "accuracy",
      score: right,
    };
  },
  summarize(examples, scores): DatasetSummary {
    return singleGroupSummary("tabfact", ["accuracy"], examples, scores);
  },
};
