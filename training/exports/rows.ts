import { z } from "zod";
import { ChatMessageSchema, type MinedQuestion, type MineStage } from "../mining/records.js";
import type { PseudoGold } from "../mining/select.js";

/*
 * Training rows from pseudo-gold: chat SFT samples, verl GRPO rows and DPO plan pairs. Each
 * role's prompt is the input its pseudo-gold output was made from.
 */

export const ABILITY = { planner: "planning", coder: "coding", answerer: "answering" } as const;
/** The reward each role's data is scored with (the reward server's roles). */
export const REWARD_ROLE = { planner: "plan", coder: "code", answerer: "answer" } as const;
export const SPLITS = ["train", "test"] as const;
export type Split = (typeof SPLITS)[number];

export const SftRowSchema = z.object({
  questionId: z.string(),
  split: z.enum(SPLITS),
  messages: z.array(ChatMessageSchema),
});
export type SftRow = z.infer<typeof SftRowSchema>;

export const VerlRowSchema = z.object({
  data_source: z.string(),
  prompt: z.array(ChatMessageSchema),
  ability: z.enum(["planning", "coding", "answering"]),
  reward_model: z.object({ style: z.literal("rule"), ground_truth: z.string() }),
  extra_info: z.object({
    split: z.enum(SPLITS),
    index: z.number().int().nonnegative(),
    question_id: z.string(),
    /** The branch the pseudo-gold came from. */
    branch: z.string(),
    qtype: z.string(),
    qsubtype: z.string(),
    question: z.string(),
    /** The gold answer. */
    answer: z.string(),
    /** The question's tables (TableRef[] as JSON): code rewards run both programs on them. */
    tables: z.string(),
    /** The reward that scores this row: plan, code or answer. */
    role: z.enum(["plan", "code", "answer"]),
  }),
});
export type VerlRow = z.infer<typeof VerlRowSchema>;

export const DpoRowSchema = z.object({
  questionId: z.string(),
  split: z.enum(SPLITS),
  prompt: z.array(ChatMessageSchema),
  chosen: z.string(),
  rejected: z.string(),
  chosenScore: z.number(),
  rejectedScore: z.number(),
});
export type DpoRow = z.infer<typeof DpoRowSchema>;

/** One pseudo-gold sample of a role: its prompt, target and what GRPO scores against. */
export interface RoleSample {
  role: MineStage;
  branch: string;
  prompt: z.infer<typeof ChatMessageSchema>[];
  target: string;
  groundTruth: string;
}

export function roleSamples(question: MinedQuestion, gold: PseudoGold): RoleSample[] {
  const samples: RoleSample[] = [];
  const plan = gold.plan?.node.turns[0];
  if (gold.plan && plan) {
    samples.push({
      role: "planner",
      branch: gold.plan.node.id,
      prompt: plan.messages,
      target: plan.output,
      groundTruth: plan.output,
    });
  }
  // The turn that wrote the code kept (after any failed attempts).
  const code = gold.code?.node.turns.at(-1);
  if (gold.code && code) {
    samples.push({
      role: "coder",
      branch: gold.code.node.id,
      prompt: code.messages,
      target: code.output,
      groundTruth: gold.code.node.text,
    });
  }
  for (const context of gold.answers) {
    const child = question.nodes.find((n) => n.stage === "answer" && n.parent === context.node.id);
    const turn = child?.turns[0];
    if (!child || !turn) continue;
    samples.push({
      role: "answerer",
      branch: context.node.id,
      prompt: turn.messages,
      target: `Final Answer: ${question.gold}`,
      groundTruth: question.gold,
    });
  }
  return samples;
}

export function sftRow(question: MinedQuestion, sample: RoleSample, split: Split): SftRow {
  return {
    questionId: question.id,
    split,
    messages: [...sample.prompt, { role: "assistant", content: sample.target }],
  };
}

export function verlRow(
  question: MinedQuestion,
  sample: RoleSample,
  where: { split: Split; index: number; dataSource: string },
): VerlRow {
  return {
    data_source: where.dataSource,
    prompt: sample.prompt,
    ability: ABILITY[sample.role],
    reward_model: { style: "rule", ground_truth: sample.groundTruth },
    extra_info: {
      split: where.split,
      index: where.index,
      question_id: question.id,
      branch: sample.branch,
      qtype: question.qtype ?? "",
      qsubtype: question.qsubtype ?? "",
      question: question.question,
      answer: question.gold,
      tables: JSON.stringify(question.tables),
      role: REWARD_ROLE[sample.role],
    },
  };
}

export function dpoRow(question: MinedQuestion, gold: PseudoGold, split: Split): DpoRow | null {
  const pair = gold.planPair;
  const chosen = pair?.chosen.node.turns[0];
  const rejected = pair?.rejected.node.turns[0];
  if (!pair || !chosen || !rejected) return null;
  return {
    questionId: question.id,
    split,
    prompt: chosen.messages,
    chosen: chosen.output,
    rejected: rejected.output,
    chosenScore: pair.chosen.correctness,
    rejectedScore: pair.rejected.correctness,
  };
}
