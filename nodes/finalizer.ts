import type { GraphNode } from "@langchain/langgraph";
import type { CheckedAnswer } from "../blackboard/schemas.js";
import type { ReviewState } from "../blackboard/state.js";
import type { NodeContext } from "./runtime.js";

/** Orders checked answers: passing first, then grounding, confidence, total score, the latest. */
function rank(candidate: CheckedAnswer, index: number): number[] {
  const { pass, scores, confidence } = candidate.verdict;
  const total = scores.type + scores.format + scores.grounding;
  return [pass ? 1 : 0, scores.grounding, confidence, total, index];
}

function better(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return false;
}

/** The best of the checked answers, or undefined when none was checked. */
export function bestChecked(checked: CheckedAnswer[]): CheckedAnswer | undefined {
  let best: CheckedAnswer | undefined;
  let bestRank: number[] = [];
  checked.forEach((candidate, index) => {
    const r = rank(candidate, index);
    if (!best || better(r, bestRank)) {
      best = candidate;
      bestRank = r;
    }
  });
  return best;
}

/**
 * Settles the run's answer: when the last answer failed its check and no reflection is
 * left, the best answer checked so far is returned with its own verdict, rather than the
 * last one or an error.
 */
export const finalizer = (async (state) => {
  if (state.verdict?.pass !== false) return {};
  const best = bestChecked(state.checked);
  if (!best || best.answer.final === state.answer?.final) return {};
  return { answer: best.answer, verdict: best.verdict };
}) satisfies GraphNode<typeof ReviewState, NodeContext>;
