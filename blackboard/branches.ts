import type { Branch, Stage } from "./schemas.js";

/*
 * How a search over plans, codes and answers grows: which branches to start next, given those
 * that exist. A branch runs through every stage that does not branch after it, so that
 * 8 x 1 x 1 is eight whole solves, and 1 x 4 x 8 is one plan, four codes of it, and eight
 * answers of each code's run.
 */

/** Branches per stage: plans, codes per plan, answers per code. */
export interface Shape {
  plan: number;
  code: number;
  answer: number;
}

/** A branch to start: its id (its path), its parent, how far it goes, its seed. */
export interface BranchSpec {
  id: string;
  parent: Branch | null;
  until: Stage;
  seed: number;
  /** The stages it samples, those that branch. */
  sampled: Stage[];
}

/** The stages of a trajectory, in order. */
export const STAGES: Stage[] = ["plan", "code", "answer"];
const LETTER: Record<Stage, string> = { plan: "p", code: "c", answer: "a" };

/** The stage after `stage` (after none: the plan); undefined after the answer. */
export function stageAfter(stage: Stage | null): Stage | undefined {
  return stage === null ? "plan" : STAGES[STAGES.indexOf(stage) + 1];
}

/** The stages from `first` through `until`. */
export function stagesThrough(first: Stage, until: Stage): Stage[] {
  return STAGES.slice(STAGES.indexOf(first), STAGES.indexOf(until) + 1);
}

/** One stage's part of a branch id: `p3`, `c1`, `a2`. */
export function idSegment(stage: Stage, index: number): string {
  return `${LETTER[stage]}${index}`;
}

/** The stages one branch runs, from `first`: up to the next stage that branches again. */
function run(first: Stage, shape: Shape): Stage[] {
  const from = STAGES.indexOf(first);
  const stages: Stage[] = [first];
  for (const stage of STAGES.slice(from + 1)) {
    if (shape[stage] > 1) break;
    stages.push(stage);
  }
  return stages;
}

/** A branch's own seed, from its id: the same branch samples the same way in every run. */
export function seedOf(id: string): number {
  let hash = 2166136261;
  for (const char of id) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
  return (hash >>> 0) % 1_000_000;
}

/** Children of `parent` (none: the roots) for the stage after it, as a shape asks. */
function children(parent: Branch | null, shape: Shape): BranchSpec[] {
  const first = stageAfter(parent?.stage ?? null);
  if (!first) return [];
  const stages = run(first, shape);
  const sampled = stages.filter((stage) => shape[stage] > 1);
  return Array.from({ length: shape[first] }, (_, i) => {
    const path = stages.map((stage, j) => idSegment(stage, j === 0 ? i + 1 : 1));
    const id = [...(parent ? [parent.id] : []), ...path].join(".");
    return { id, parent, until: stages.at(-1) ?? first, seed: seedOf(id), sampled };
  });
}

/**
 * The branches to start next: the roots when there are none, else the children of every branch
 * that stopped before answering and has none yet. Empty when every branch has answered.
 */
export function nextBranches(branches: Branch[], shape: Shape): BranchSpec[] {
  if (branches.length === 0) return children(null, shape);
  const parents = new Set(branches.map((b) => b.parent));
  return branches
    .filter((b) => b.stage !== "answer" && !parents.has(b.id))
    .flatMap((b) => children(b, shape));
}

/** The winner's trajectory as the run's own: what a single solve would have left. */
export function winnerTrajectory(state: { branches: Branch[] }, winner: string | null) {
  const branch = state.branches.find((b) => b.id === winner);
  if (!branch) return {};
  return {
    plan: branch.plan,
    attempts: branch.attempts,
    evidence: branch.evidence,
    claims: branch.claims,
    edges: branch.edges,
    answer: branch.answer,
    verdict: branch.verdict,
  };
}
