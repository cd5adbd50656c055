import type { GraphNode } from "@langchain/langgraph";
import { winnerTrajectory } from "../../blackboard/branches.js";
import { withAgreement } from "../../grounding/confidence.js";
import { branchOrder } from "../../grounding/tally.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import type { MctsState } from "./state.js";

/**
 * The end of a search: the answer with the best reward wins (ties: the one whose code did best
 * on average, then the branch made first), and its trajectory becomes the run's.
 */
export const best = (async (state, runtime) => {
  const nodes = new Map(state.tree.map((node) => [node.id, node]));
  const mean = (id: string | null) => {
    const node = id ? nodes.get(id) : undefined;
    return node && node.visits > 0 ? node.value / node.visits : 0;
  };
  const ranked = state.tree
    .filter((node) => node.stage === "answer" && node.reward !== null)
    .sort(
      (a, b) =>
        (b.reward ?? 0) - (a.reward ?? 0) ||
        mean(b.parent) - mean(a.parent) ||
        branchOrder(a.id, b.id),
    );
  const winner = ranked[0];
  const trajectory = winnerTrajectory(state, winner?.id ?? null);
  const { minConfidence } = configurationOf(runtime);
  const verdict =
    trajectory.verdict && withAgreement(trajectory.verdict, winner?.reward ?? 0, minConfidence);
  return { ...trajectory, ...(verdict ? { verdict } : {}) };
}) satisfies GraphNode<typeof MctsState, NodeContext>;
