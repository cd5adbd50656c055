import { idSegment, stageAfter } from "./branches.js";
import type { Branch, Stage, TreeNode } from "./schemas.js";

/*
 * The search tree of mcts over the branches: UCT selection of where to grow next (several at
 * once, a virtual loss spreading them), and the backup of answers' rewards to their ancestors.
 */

export const ROOT = "root";

export interface SearchLimits {
  /** Children a node may have. */
  width: number;
  /** UCT's exploration constant. */
  exploration: number;
}

function rootNode(): TreeNode {
  return {
    id: ROOT,
    parent: null,
    stage: "root",
    visits: 0,
    value: 0,
    prior: 1,
    children: [],
    reward: null,
  };
}

/** The tree as a map, with its root. */
export function treeMap(tree: TreeNode[]): Map<string, TreeNode> {
  const nodes = new Map(tree.map((node) => [node.id, { ...node, children: [...node.children] }]));
  if (!nodes.has(ROOT)) nodes.set(ROOT, rootNode());
  return nodes;
}

/** UCT: the mean reward so far, and a bonus for what was little visited under a much visited parent. */
export function uct(node: TreeNode, parentVisits: number, exploration: number): number {
  if (node.visits === 0) return Number.POSITIVE_INFINITY;
  const mean = node.value / node.visits;
  return mean + exploration * Math.sqrt(Math.log(Math.max(1, parentVisits)) / node.visits);
}

/** Whether nothing more can grow below a node: an answer, or a full node whose children are so. */
function exhausted(node: TreeNode, nodes: Map<string, TreeNode>, width: number): boolean {
  if (node.stage === "answer") return true;
  if (node.children.length < width) return false;
  return node.children.every((id) => {
    const child = nodes.get(id);
    return !child || exhausted(child, nodes, width);
  });
}

/** A new child to grow: its id, its parent, and the stage it starts at. */
export interface Expansion {
  parent: string;
  id: string;
  stage: Stage;
}

/**
 * Up to `count` places to grow: from the root down, a node with room for a child grows one;
 * otherwise the descent takes the child of the best UCT (not one picked in this batch, which
 * does not exist yet). Each pick counts as a visit that brought nothing (a virtual loss) and as
 * a child, so the next pick goes elsewhere.
 */
export function selectExpansions(
  tree: TreeNode[],
  count: number,
  limits: SearchLimits,
): Expansion[] {
  const nodes = treeMap(tree);
  const picks: Expansion[] = [];
  // A branch picked in this batch does not exist yet: nothing can grow from it.
  const pending = new Set<string>();
  for (let n = 0; n < count; n++) {
    let node: TreeNode | undefined = nodes.get(ROOT) as TreeNode;
    if (exhausted(node, nodes, limits.width)) break;
    const path = [node];
    while (node && node.children.length >= limits.width) {
      const parentVisits: number = node.visits;
      const open: TreeNode[] = node.children
        .map((id) => nodes.get(id))
        .filter(
          (child): child is TreeNode =>
            !!child && !pending.has(child.id) && !exhausted(child, nodes, limits.width),
        );
      node = open.reduce<TreeNode | undefined>((top, child): TreeNode => {
        if (!top) return child;
        return uct(child, parentVisits, limits.exploration) >
          uct(top, parentVisits, limits.exploration)
          ? child
          : top;
      }, undefined);
      if (node) path.push(node);
    }
    // Every way down ends at a branch of this batch: the rest waits for the next round.
    if (!node) break;
    const stage = stageAfter(node.stage === "root" ? null : node.stage);
    if (!stage) break;
    const index = node.children.length + 1;
    const id = `${node.id === ROOT ? "" : `${node.id}.`}${idSegment(stage, index)}`;
    picks.push({ parent: node.id, id, stage });
    pending.add(id);
    node.children.push(id);
    nodes.set(id, { ...rootNode(), id, parent: node.id, stage });
    for (const visited of path) visited.visits += 1;
  }
  return picks;
}

/**
 * The tree with new branches in it and their answers' rewards backed up: each answer adds a
 * visit and its reward to itself and every ancestor up to the root.
 */
export function backup(
  tree: TreeNode[],
  grown: Branch[],
  rewardOf: (answer: Branch) => number,
  width: number,
): TreeNode[] {
  const nodes = treeMap(tree);
  const changed = new Set<string>();
  for (const branch of grown) {
    if (nodes.has(branch.id)) continue;
    const parent = nodes.get(branch.parent ?? ROOT);
    if (!parent) continue;
    parent.children.push(branch.id);
    changed.add(parent.id);
    nodes.set(branch.id, {
      ...rootNode(),
      id: branch.id,
      parent: parent.id,
      stage: branch.stage,
      prior: 1 / width,
    });
    changed.add(branch.id);
  }
  for (const branch of grown.filter((b) => b.stage === "answer")) {
    const leaf = nodes.get(branch.id);
    if (!leaf || leaf.reward !== null) continue;
    const reward = rewardOf(branch);
    leaf.reward = reward;
    for (let at: TreeNode | undefined = leaf; at; at = nodes.get(at.parent ?? "")) {
      at.visits += 1;
      at.value += reward;
      changed.add(at.id);
    }
  }
  return [...changed].flatMap((id) => nodes.get(id) ?? []);
}
