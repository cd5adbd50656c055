import { describe, expect, it } from "vitest";
import { shapeTurnRewards } from "../../training/rewards/shaping.js";

describe("MARTI reward shaping", () => {
  it("leaves turn 0 alone and shapes later turns in quality mode", () => {
    // t=1: Q = 1, R = 0 -> d = 0 - 0*1 = 0 -> 0; t=2: Q = 0.5, R = 1 -> d = 0.5 -> 1.25.
    expect(shapeTurnRewards([1, 0, 1])).toEqual([1, 0, 1.25]);
    // t=1: Q = 0, R = 0 -> d = -1 -> -0.5 (a bad turn after a bad history is pushed down).
    expect(shapeTurnRewards([0, 0], { mode: "quality" })).toEqual([0, -0.5]);
    // t=1: Q = 0.5, R = 0.5 -> d = 0.25 - 0.25 = 0.
    expect(shapeTurnRewards([0.5, 0.5])).toEqual([0.5, 0.5]);
  });

  it("rewards improvement over the earlier turns' mean in margin mode", () => {
    // t=1: d = 1 - 0 = 1 -> 1.5; t=2: Q = 0.5, R = 0.5 -> d = 0 -> 0.5; t=3: Q = 0.5, d = -0.5.
    expect(shapeTurnRewards([0, 1, 0.5, 0], { mode: "margin" })).toEqual([0, 1.5, 0.5, -0.25]);
  });

  it("uses the given rewards, not the shaped ones, as the history", () => {
    // Q at t=2 is mean(0, 1) = 0.5 although turn 1 was shaped to 1.5.
    expect(shapeTurnRewards([0, 1, 1], { mode: "margin" })[2]).toBe(1.25);
  });

  it("adds beta times the final reward to the shaped turns only", () => {
    expect(shapeTurnRewards([1, 0, 1], { finalReward: 1 })).toEqual([1, 0.5, 1.75]);
    expect(shapeTurnRewards([0, 1], { mode: "margin", finalReward: 0.4, beta: 0.25 })).toEqual([
      0, 1.6,
    ]);
  });

  it("takes alpha from the options", () => {
    expect(shapeTurnRewards([0, 1], { mode: "margin", alpha: 0 })).toEqual([0, 1]);
    expect(shapeTurnRewards([0, 1], { mode: "margin", alpha: 1 })).toEqual([0, 2]);
  });

  it("handles empty and one-turn trajectories and rejects bad input", () => {
    expect(shapeTurnRewards([])).toEqual([]);
    expect(shapeTurnRewards([0.7], { finalReward: 1 })).toEqual([0.7]);
    expect(() => shapeTurnRewards([Number.NaN])).toThrow();
    expect(() => shapeTurnRewards([1], { alpha: Number.POSITIVE_INFINITY })).toThrow();
  });

  it("does not change its input", () => {
    const rewards = [1, 0, 1];
    shapeTurnRewards(rewards);
    expect(rewards).toEqual([1, 0, 1]);
  });
});
