import { z } from "zod";

/*
 * MARTI's reward shaping over the turns of one multi-agent trajectory. For turn t >= 1, with
 * R its reward and Q the mean of the rewards of turns 0..t-1 (as given, not as shaped):
 *   quality mode  d = Q*R - (1-Q)*(1-R)   (rewards agreeing with a good or bad history)
 *   margin mode   d = R - Q               (rewards improving on the history)
 *   R' = R + alpha*d, plus beta * the final reward when one is given.
 * Turn 0 has no history and is returned as it is.
 */

export const ShapingOptionsSchema = z.object({
  mode: z.enum(["quality", "margin"]).default("quality"),
  alpha: z.number().finite().default(0.5),
  beta: z.number().finite().default(0.5),
  /** The trajectory's outcome reward; when set, beta times it is added to turns 1.. */
  finalReward: z.number().finite().optional(),
});
export type ShapingOptions = z.input<typeof ShapingOptionsSchema>;

const RewardsSchema = z.array(z.number().finite());

/** The shaped reward of each turn, in order; the input is not changed. */
export function shapeTurnRewards(
  rewards: readonly number[],
  options: ShapingOptions = {},
): number[] {
  const turns = RewardsSchema.parse(rewards);
  const { mode, alpha, beta, finalReward } = ShapingOptionsSchema.parse(options);
  let earlier = 0;
  return turns.map((reward, t) => {
    const history = t === 0 ? 0 : earlier / t;
    earlier += reward;
    if (t === 0) return reward;
    const d =
      mode === "quality" ? history * reward - (1 - history) * (1 - reward) : reward - history;
    return reward + alpha * d + (finalReward === undefined ? 0 : beta * finalReward);
  });
}
