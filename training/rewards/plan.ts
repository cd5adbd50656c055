import { sentenceBleu } from "./bleu.js";
import { planBody, planFormat } from "./format.js";
import { type RewardFunction, total } from "./types.js";

/*
 * Plan rewards: 0.1 format + 0.9 BLEU(plan, pseudo-gold plan), the plan being the text of
 * its <plan> block (the whole reply when there is none). `paper` checks the strict format;
 * `release` the format the context asks for (strict unless told "loose").
 */

async function planReward(
  reply: string,
  reference: string,
  mode: "strict" | "loose",
): Promise<ReturnType<typeof total>> {
  return total({
    format: 0.1 * planFormat(reply, mode),
    bleu: 0.9 * sentenceBleu(reference, planBody(reply)),
  });
}

export const paperPlanReward: RewardFunction = (sample) =>
  planReward(sample.response, sample.reference, "strict");

export const releasePlanReward: RewardFunction = (sample, context) =>
  planReward(sample.response, sample.reference, context.planFormat ?? "strict");
