import { z } from "zod";
import { type TableRef, TableRefSchema } from "../../blackboard/schemas.js";
import type { Sandbox } from "../../sandbox/index.js";
import type { PlanFormat } from "./format.js";

export const PRESETS = ["paper", "release"] as const;
export type Preset = (typeof PRESETS)[number];
export const ROLES = ["plan", "code", "answer"] as const;
export type Role = (typeof ROLES)[number];

/**
 * One model reply to score. `reference` is what the role is scored against: the pseudo-gold
 * plan, the pseudo-gold code, or the gold answer. Code rewards run both codes on `tables`.
 */
export const RewardSampleSchema = z.object({
  response: z.string(),
  reference: z.string(),
  /** TableBench's qtype and qsubtype: the release answer reward picks its metric by them. */
  qtype: z.string().optional(),
  qsubtype: z.string().optional(),
  tables: z.array(TableRefSchema).default([]),
});
export type RewardSample = z.input<typeof RewardSampleSchema>;
export type ValidRewardSample = z.output<typeof RewardSampleSchema> & { tables: TableRef[] };

/** What a reward may use besides the sample; everything has a default. */
export interface RewardContext {
  /** Runs code rewards' programs; the shared local sandbox when unset. */
  sandbox?: Sandbox;
  /** The release preset's plan format check; "strict" when unset (paper is always strict). */
  planFormat?: PlanFormat;
}

/** The reward and the weighted terms it is the sum of, by name (for logs). */
export interface RewardResult {
  reward: number;
  parts: Record<string, number>;
}

export type RewardFunction = (
  sample: ValidRewardSample,
  context: RewardContext,
) => Promise<RewardResult>;

/** The sum of the weighted parts. */
export function total(parts: Record<string, number>): RewardResult {
  return { reward: Object.values(parts).reduce((a, b) => a + b, 0), parts };
}
