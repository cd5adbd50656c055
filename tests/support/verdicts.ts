import type { Answer, CheckedAnswer, Verdict } from "../../blackboard/schemas.js";

/** A verdict with the given scores; it passes when every score is 2 unless told otherwise. */
export function verdict(
  answer: string,
  scores: Partial<Verdict["scores"]> = {},
  issues: string[] = [],
): Verdict {
  const full = { type: 2, format: 2, grounding: 2, ...scores };
  return {
    answer,
    expectedType: "number",
    scores: full,
    issues,
    pass: full.type === 2 && full.format === 2 && full.grounding === 2,
    by: "rules",
    claims: [],
    support: full.grounding === 2 ? "derived" : "none",
    confidence: full.grounding === 2 ? 0.9 : 0.3,
    sure: full.grounding === 2,
    unchecked: false,
  };
}

export function answer(final: string, evidence: string[] = []): Answer {
  return { raw: `Final Answer: ${final}`, final, evidence };
}

export function checked(id: string, final: string, scores: Partial<Verdict["scores"]> = {}) {
  return { id, answer: answer(final), verdict: verdict(final, scores) } satisfies CheckedAnswer;
}
