import type { SupportKind, Verdict } from "../blackboard/schemas.js";
import { DEFAULT_MIN_CONFIDENCE } from "../settings/configuration.js";
import type { ItemCheck } from "./verify.js";

/*
 * How likely an answer is right, from what is known about it: how its items are supported,
 * its type and format scores, and how hard the run had to try (failed code attempts,
 * reflections). Search graphs fold in their own evidence: mom the share of the vote, mcts the
 * tree's value. The weights are set against the checker benchmark's labelled cases and the
 * evaluation's calibration table (docs/evaluation.md), where the calibration error is reported.
 */

/** The chance an answer with this support is right, before anything else is known. */
const BY_SUPPORT: Record<SupportKind, number> = {
  derived: 0.9,
  "looked-up": 0.8,
  coincidental: 0.15,
  none: 0.1,
};
/** An answer a result contradicts. */
const CONFLICTED = 0.05;
/** A sentence with no value to trace: only its wording can be judged. */
const PROSE = 0.4;
const BY_SCORE = [0.3, 0.75, 1] as const;
const PER_FAILED_ATTEMPT = 0.95;
const PER_REFLECTION = 0.9;

/** What a type or format score leaves of the confidence. */
export function scoreFactor(score: number): number {
  return BY_SCORE[Math.max(0, Math.min(2, Math.round(score))) as 0 | 1 | 2];
}

/** The weakest support over an answer's items; none when one is contradicted or there are none. */
export function supportOf(checks: ItemCheck[]): SupportKind {
  if (checks.length === 0 || checks.some((c) => c.status === "conflicted")) return "none";
  if (checks.every((c) => c.support === "derived")) return "derived";
  if (checks.every((c) => c.support === "derived" || c.support === "looked-up")) return "looked-up";
  return checks.some((c) => c.support === "coincidental") ? "coincidental" : "none";
}

export interface ConfidenceInput {
  checks: ItemCheck[];
  scores: Verdict["scores"];
  /** Code attempts that failed before the answer. */
  failedAttempts: number;
  /** Reflections the run went through. */
  reflections: number;
  /** The computation answers another question than the one asked (alignment.ts). */
  misaligned?: boolean;
}

/** The confidence of one checked answer, in [0, 1]. */
export function confidenceOf(input: ConfidenceInput): number {
  const { checks, scores } = input;
  let base = BY_SUPPORT[supportOf(checks)];
  if (input.misaligned || checks.some((c) => c.status === "conflicted")) base = CONFLICTED;
  else if (checks.length > 0 && checks.every((c) => c.kind === "prose")) base = PROSE;
  const shape = scoreFactor(scores.type) * scoreFactor(scores.format);
  const effort = PER_FAILED_ATTEMPT ** input.failedAttempts * PER_REFLECTION ** input.reflections;
  return round(base * shape * effort);
}

/**
 * A search's chosen answer: its check's confidence weighed with the share of the vote (mom) or
 * the reward (mcts) behind it, and whether the run is still sure of it.
 */
export function withAgreement(verdict: Verdict, share: number, minConfidence: number): Verdict {
  const agreement = 0.5 + 0.5 * Math.min(1, Math.max(0, share));
  return { ...verdict, ...rated(verdict.confidence * agreement, minConfidence) };
}

/** A confidence as a verdict holds it, and whether the run is sure at `minConfidence`. */
export function rated(
  confidence: number,
  minConfidence = DEFAULT_MIN_CONFIDENCE,
): Pick<Verdict, "confidence" | "sure"> {
  const rounded = round(confidence);
  return { confidence: rounded, sure: rounded >= minConfidence };
}

function round(x: number): number {
  return Math.round(Math.min(1, Math.max(0, x)) * 1000) / 1000;
}
