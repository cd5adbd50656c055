import { paperAnswerReward, releaseAnswerReward } from "./answer.js";
import { paperCodeReward, releaseCodeReward } from "./code.js";
import { paperPlanReward, releasePlanReward } from "./plan.js";
import {
  type Preset,
  type RewardContext,
  type RewardFunction,
  type RewardResult,
  type RewardSample,
  RewardSampleSchema,
  type Role,
} from "./types.js";

export { fsum, sentenceBleu } from "./bleu.js";
export { answerFormat, codeFormat, type PlanFormat, planFormat } from "./format.js";
export {
  OPERATION_LABELS,
  type OperationLabel,
  operationF1,
  operationLabels,
} from "./operations.js";
export { type ShapingOptions, shapeTurnRewards } from "./shaping.js";
export * from "./types.js";

/** The Mixture-of-Minds rewards, by preset and role. */
export const REWARDS: Record<Preset, Record<Role, RewardFunction>> = {
  paper: { plan: paperPlanReward, code: paperCodeReward, answer: paperAnswerReward },
  release: { plan: releasePlanReward, code: releaseCodeReward, answer: releaseAnswerReward },
};

/** The reward of one sample; the sample is checked first (a ZodError when malformed). */
export function scoreReward(
  preset: Preset,
  role: Role,
  sample: RewardSample,
  context: RewardContext = {},
): Promise<RewardResult> {
  const valid = RewardSampleSchema.parse(sample);
  return REWARDS[preset][role](valid, context);
}
