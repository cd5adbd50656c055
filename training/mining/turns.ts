import { shapeTurnRewards } from "../rewards/shaping.js";
import type { MinedNode, MinedQuestion, TurnRecord } from "./records.js";
import { compareIds, correctness } from "./select.js";

/** The nodes from the root down to `leaf`. */
function pathTo(leaf: MinedNode, byId: Map<string, MinedNode>): MinedNode[] {
  const path: MinedNode[] = [];
  for (let node: MinedNode | undefined = leaf; node; ) {
    path.unshift(node);
    node = node.parent ? byId.get(node.parent) : undefined;
  }
  return path;
}

/**
 * Every trajectory of a mined question (root to each answer, in branch order) as MARTI-style
 * turn records; each turn is rewarded with its node's correctness, then shaped as MARTI does.
 */
export function turnRecords(question: MinedQuestion): TurnRecord[] {
  const byId = new Map(question.nodes.map((n) => [n.id, n]));
  const scores = correctness(question.nodes);
  const leaves = question.nodes
    .filter((n) => n.stage === "answer")
    .sort((a, b) => compareIds(a.id, b.id));
  return leaves.flatMap((leaf) => {
    const turns = pathTo(leaf, byId).flatMap((node) =>
      node.turns.map((turn) => ({ node, turn, reward: scores.get(node.id) ?? 0 })),
    );
    const shaped = shapeTurnRewards(turns.map((t) => t.reward));
    return turns.map(({ node, turn, reward }, i) => ({
      questionId: question.id,
      trajectory: leaf.id,
      turn: i,
      agent: { id: node.id, role: turn.role },
      input: turn.messages,
      output: turn.output,
      execution: turn.execution,
      reward,
      shapedReward: shaped[i] ?? reward,
    }));
  });
}
