import { describe, expect, it } from "vitest";
import { confidenceOf, supportOf, withAgreement } from "../../grounding/confidence.js";
import type { ItemCheck } from "../../grounding/verify.js";
import { verdict } from "../support/verdicts.js";

const item = (
  support: ItemCheck["support"],
  status: ItemCheck["status"] = "supported",
): ItemCheck => ({
  item: "x",
  kind: "number",
  status,
  support,
  supports: [],
  conflicts: [],
});
const full = { type: 2, format: 2, grounding: 2 };

describe("confidence", () => {
  it("takes the weakest support of the items", () => {
    expect(supportOf([item("derived"), item("derived")])).toBe("derived");
    expect(supportOf([item("derived"), item("looked-up")])).toBe("looked-up");
    expect(supportOf([item("derived"), item("coincidental", "unsupported")])).toBe("coincidental");
    expect(supportOf([item("derived"), item("none", "conflicted")])).toBe("none");
    expect(supportOf([])).toBe("none");
  });

  it("ranks derived over looked up over coincidence and conflict, and falls with effort and doubt", () => {
    const of = (checks: ItemCheck[], more: Partial<Parameters<typeof confidenceOf>[0]> = {}) =>
      confidenceOf({ checks, scores: full, failedAttempts: 0, reflections: 0, ...more });
    const derived = of([item("derived")]);
    const looked = of([item("looked-up")]);
    const coincidental = of([item("coincidental", "unsupported")]);
    const conflicted = of([item("none", "conflicted")]);
    expect(derived).toBeGreaterThan(looked);
    expect(looked).toBeGreaterThan(0.5);
    expect(coincidental).toBeLessThan(0.5);
    expect(conflicted).toBeLessThan(coincidental);
    expect(of([item("derived")], { failedAttempts: 2, reflections: 1 })).toBeLessThan(derived);
    expect(of([item("derived")], { scores: { type: 1, format: 2, grounding: 2 } })).toBeLessThan(
      derived,
    );
  });

  it("weighs a search's answer by the share behind it, and says when it is no longer sure", () => {
    const sound = { ...verdict("203"), confidence: 0.9 };
    expect(withAgreement(sound, 1, 0.5)).toMatchObject({ confidence: 0.9, sure: true });
    expect(withAgreement(sound, 0.25, 0.6)).toMatchObject({ confidence: 0.563, sure: false });
  });
});
