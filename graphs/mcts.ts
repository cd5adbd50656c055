import { END, Send, START, StateGraph } from "@langchain/langgraph";
import {
  type BranchSpec,
  idSegment,
  nextBranches,
  type Shape,
  seedOf,
  stageAfter,
  stagesThrough,
} from "../blackboard/branches.js";
import {
  type Configuration,
  ConfigurationSchema,
  ContextSchema,
} from "../blackboard/configuration.js";
import type { Stage } from "../blackboard/schemas.js";
import { BranchTask, MctsState, type MctsStateValue } from "../blackboard/state.js";
import { ROOT, selectExpansions } from "../blackboard/tree.js";
import { backup } from "../nodes/backup.js";
import { best } from "../nodes/best.js";
import { branchNode } from "../nodes/branch.js";
import { ingest } from "../nodes/ingest.js";
import { configurationOf, type NodeRuntime } from "../nodes/runtime.js";
import { turn } from "../nodes/turn.js";
import { graph as solve, solveSteps } from "./solve.js";

/*
 * mcts: a Monte-Carlo tree search over plans, codes and answers. Each round selects places to
 * grow by UCT (several at once, up to maxConcurrency), grows each by one new plan, code or answer
 * and rolls it out to an answer, then backs the answer's reward up the tree; rounds go on while
 * the model-call budget allows. In a fixed-width mode it grows Mixture-of-Minds' rollouts for one
 * stage instead, valued the same way.
 */

/** Mixture-of-Minds' fixed-width rollouts per stage mined: plans x codes x answers. */
export const PRESETS: Record<Exclude<Configuration["searchMode"], "uct">, Shape> = {
  planner: { plan: 8, code: 4, answer: 1 },
  coder: { plan: 1, code: 8, answer: 1 },
  answerer: { plan: 1, code: 4, answer: 8 },
};

/** The most model calls growing a branch through `stages` can take. */
export function worstCalls(stages: Stage[], config: Pick<Configuration, "maxCodeAttempts">) {
  return stages.reduce((sum, stage) => sum + (stage === "code" ? config.maxCodeAttempts : 1), 0);
}

/** The branches UCT (or the fixed-width mode) grows next, as many as the budget allows. */
export function nextSearch(
  state: Pick<MctsStateValue, "branches" | "tree" | "budget">,
  config: Configuration,
): BranchSpec[] {
  let left = config.searchBudget - state.budget.llmCalls;
  const affordable = (spec: BranchSpec) => {
    const first = stageAfter(spec.parent?.stage ?? null) ?? "answer";
    const cost = worstCalls(stagesThrough(first, spec.until), config);
    if (cost > left) return false;
    left -= cost;
    return true;
  };
  if (config.searchMode !== "uct") {
    return nextBranches(state.branches, PRESETS[config.searchMode]).filter(affordable);
  }
  const rounds = selectExpansions(state.tree, config.maxConcurrency, {
    width: config.searchWidth,
    exploration: config.exploration,
  });
  return rounds
    .map((pick): BranchSpec => {
      const rollout = stagesThrough(pick.stage, "answer").slice(1);
      const id = [pick.id, ...rollout.map((stage) => idSegment(stage, 1))].join(".");
      const parent =
        pick.parent === ROOT ? null : (state.branches.find((b) => b.id === pick.parent) ?? null);
      return { id, parent, until: "answer", seed: seedOf(id), sampled: [pick.stage] };
    })
    .filter(affordable);
}

/** Grow the next branches, or, when the budget or the tree allows no more, pick the best answer. */
export const routeSearch = (
  state: Pick<MctsStateValue, "question" | "tables" | "memories" | "branches" | "tree" | "budget"> &
    Partial<Pick<MctsStateValue, "turns">>,
  runtime?: NodeRuntime,
) => {
  const specs = nextSearch(state, configurationOf(runtime));
  if (specs.length === 0) return "best";
  const { question, tables, turns = [], memories } = state;
  return specs.map((spec) => new Send("branch", { question, tables, turns, memories, ...spec }));
};

/**
 * The recursion limit a search needs: a round (branch, backup) per model call at most, turn,
 * ingest and best, or one solve's inside a branch, plus the step LangGraph counts for the input.
 */
export function stepBound(config: Pick<Configuration, "maxCodeAttempts" | "searchBudget">) {
  return 1 + Math.max(3 + 2 * config.searchBudget, solveSteps(config));
}

export const builder = new StateGraph(MctsState, ContextSchema)
  .addNode("turn", turn)
  .addNode("ingest", ingest)
  .addNode("branch", branchNode(solve), { input: BranchTask })
  .addNode("backup", backup)
  .addNode("best", best)
  .addEdge(START, "turn")
  .addEdge("turn", "ingest")
  .addConditionalEdges("ingest", routeSearch, ["branch", "best"])
  .addEdge("branch", "backup")
  .addConditionalEdges("backup", routeSearch, ["branch", "best"])
  .addEdge("best", END);

const LIMITS = ConfigurationSchema.shape;

/** Studio and SDK runs get a step limit that fits the largest configuration the form allows. */
export const RECURSION_LIMIT = stepBound({
  maxCodeAttempts: LIMITS.maxCodeAttempts.unwrap().maxValue ?? 0,
  searchBudget: LIMITS.searchBudget.unwrap().maxValue ?? 0,
});

export const graph = builder.compile({ name: "mcts" }).withConfig({
  recursionLimit: RECURSION_LIMIT,
  maxConcurrency: LIMITS.maxConcurrency.parse(undefined),
});
