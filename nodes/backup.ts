import type { GraphNode } from "@langchain/langgraph";
import type { Branch } from "../blackboard/schemas.js";
import type { MctsState, MctsStateValue } from "../blackboard/state.js";
import { backup as backedUp, ROOT } from "../blackboard/tree.js";
import { searchReward } from "../grounding/agreement.js";
import { configurationOf, type NodeContext } from "./runtime.js";

/** The reward of one answer branch among all answers of the search. */
export function rewardIn(state: Pick<MctsStateValue, "branches" | "gold">) {
  const answers = state.branches.filter((b) => b.stage === "answer" && b.answer);
  return (branch: Branch): number =>
    searchReward({
      answer: branch.answer?.final ?? "",
      confidence: branch.verdict?.confidence ?? null,
      peers: answers.filter((b) => b.id !== branch.id).map((b) => b.answer?.final ?? ""),
      gold: state.gold,
    });
}

/**
 * After a batch of branches has grown: they join the tree, and each new answer's reward is backed
 * up through its ancestors to the root.
 */
export const backup = (async (state, runtime) => {
  const { searchWidth } = configurationOf(runtime);
  const known = new Set(state.tree.map((node) => node.id));
  const grown = state.branches.filter((b) => !known.has(b.id));
  const tree = backedUp(state.tree, grown, rewardIn(state), searchWidth);
  return { tree: tree.length > 0 ? tree : state.tree.filter((n) => n.id === ROOT) };
}) satisfies GraphNode<typeof MctsState, NodeContext>;
