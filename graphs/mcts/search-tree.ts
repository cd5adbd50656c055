import { idSegment, stageAfter } from "../../blackboard/branches.js";
import type { Branch, Stage, TreeNode } from "../../blackboard/schemas.js";

/*
 * The search tree of mcts over the branches: UCT selection of where to grow next (a virtual loss
 * spreading the picks, and counting the branches still growing), and the backup of answers'
 * rewards to their ancestors.
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

/**
 * Whether a node offers no place to grow now: nothing can grow below it, it is a branch still
 * growing (it does not exist yet), or it is full and each of its children is so.
 */
function closed(
  node: TreeNode,
  nodes: Map<string, TreeNode>,
  pending: Set<string>,
  width: number,
): boolean {
  if (pending.has(node.id) || exhausted(node, nodes, width)) return true;
  if (node.children.length < width) return false;
  return node.children.every((id) => {
    const child = nodes.get(id);
    return !child || closed(child, nodes, pending, width);
  });
}

/** A new child to grow: its id, its parent, and the stage it starts at. */
export interface Expansion {
  parent: string;
  id: string;
  stage: Stage;
}

/**
 * Puts a pick in the tree before it exists: a child of its parent that nothing can grow from,
 * and a visit that brought nothing (a virtual loss) on the way to it, so that later picks go
 * elsewhere.
 */
function reserve(nodes: Map<string, TreeNode>, pick: Expansion, pending: Set<string>): void {
  const parent = nodes.get(pick.parent);
  if (!parent || nodes.has(pick.id)) return;
  pending.add(pick.id);
  parent.children.push(pick.id);
  nodes.set(pick.id, { ...rootNode(), id: pick.id, parent: parent.id, stage: pick.stage });
  for (let at: TreeNode | undefined = parent; at; at = nodes.get(at.parent ?? "")) at.visits += 1;
}

/**
 * Up to `count` places to grow: from the root down, a node with room for a child grows one;
 * otherwise the descent takes the child of the best UCT among those that still offer a place.
 * Each pick, and each of `growing` (picked earlier, not back yet), counts as a child and as a
 * virtual loss, so that the next pick goes elsewhere and nothing grows from a branch that does
 * not exist yet.
 */
export function selectExpansions(
  tree: TreeNode[],
  count: number,
  limits: SearchLimits,
  growing: Expansion[] = [],
): Expansion[] {
  const nodes = treeMap(tree);
  const picks: Expansion[] = [];
  const pending = new Set<string>();
  for (const pick of growing) reserve(nodes, pick, pending);
  const root = nodes.get(ROOT) as TreeNode;
  for (let n = 0; n < count && !closed(root, nodes, pending, limits.width); n++) {
    let node = root;
    while (node.children.length >= limits.width) {
      const parentVisits = node.visits;
      const open = node.children
        .map((id) => nodes.get(id))
        .filter(
          (child): child is TreeNode => !!child && !closed(child, nodes, pending, limits.width),
        );
      const best = open.reduce<TreeNode | undefined>((top, child): TreeNode => {
        if (!top) return child;
        return uct(child, parentVisits, limits.exploration) >
          uct(top, parentVisits, limits.exploration)
          ? child
          : top;
      }, undefined);
      // An open node that is full has an open child.
      if (!best) break;
      node = best;
    }
    const stage = stageAfter(node.stage === "root" ? null : node.stage);
    if (!stage || node.children.length >= limits.width) break;
    const id = `${node.id === ROOT ? "" : `${node.id}.`}${idSegment(stage, node.children.length + 1)}`;
    const pick = { parent: node.id, id, stage };
    reserve(nodes, pick, pending);
    picks.push(pick);
  }
  return picks;
}

/** The number a child's id ends with: 3 for `p2.c3`. */
function childIndex(id: string): number {
  return Number(id.slice(id.lastIndexOf(".") + 2));
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
    // In the order they were picked, whatever order they finished in.
    parent.children.sort((a, b) => childIndex(a) - childIndex(b));
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
