import { type ConditionalEdgeRouter, END, Send, START, StateGraph } from "@langchain/langgraph";
import { nextBranches, type Shape } from "../../blackboard/branches.js";
import { BranchTask } from "../../blackboard/state.js";
import { trustedWrites } from "../../blackboard/trusted-writes.js";
import { expectedAnswerType } from "../../grounding/answer-type.js";
import { branchNode } from "../../nodes/branch.js";
import { ingest } from "../../nodes/ingest.js";
import { presentation, presenter, routeToPresenter } from "../../nodes/presenter.js";
import { reported } from "../../nodes/progress.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "../../nodes/runtime.js";
import { turn } from "../../nodes/turn.js";
import {
  type Configuration,
  DEFAULT_CONCURRENCY,
  LARGEST_BOUNDS,
} from "../../settings/configuration.js";
import { graph as solve, stepsAroundSolve } from "../solve/graph.js";
import { context } from "./configuration.js";
import { gather } from "./gather.js";
import { judge } from "./judge.js";
import { MomState, type MomStateValue } from "./state.js";
import { vote } from "./vote.js";

/*
 * mom, Mixture-of-Minds' test-time scaling: plans sampled side by side, each solved with its own
 * code retries, and the answers voted on. With codesPerPlan or answersPerCode above 1 a stage
 * branches again once the branches before it are done (plans x codes x answers). Different
 * answers can instead be settled by a model's pairwise knockout (`judge`).
 */

type Router<Nodes extends string> = ConditionalEdgeRouter<typeof MomState, NodeContext, Nodes>;

export function shapeOf(config: Configuration): Shape {
  return { plan: config.plans, code: config.codesPerPlan, answer: config.answersPerCode };
}

/**
 * The next stage's branches, all at once; once every branch has answered, the vote. (Its Sends
 * carry a branch's task, not mom's state, so it is not typed as ConditionalEdgeRouter.)
 */
export const routeBranches = (
  state: Pick<MomStateValue, "question" | "tables" | "memories" | "branches"> &
    Partial<Pick<MomStateValue, "turns">>,
  runtime?: NodeRuntime,
) => {
  const specs = nextBranches(state.branches, shapeOf(configurationOf(runtime)));
  if (specs.length === 0) return "vote";
  const { question, tables, turns = [], memories } = state;
  return specs.map((spec) => new Send("branch", { question, tables, turns, memories, ...spec }));
};

/** After the vote: the judge's knockout when configured for this question and answers differ. */
export const routeAfterVote = ((
  state: Pick<MomStateValue, "question" | "ballot">,
  runtime?: NodeRuntime,
) => {
  const { judge } = configurationOf(runtime);
  const wanted =
    judge === "always" || (judge === "text" && expectedAnswerType(state.question) === "text");
  return wanted && (state.ballot?.tally.length ?? 0) > 1 ? "judge" : presentation(runtime);
}) satisfies Router<"judge" | "presenter">;

/**
 * The recursion limit a run needs: mom's own steps (turn, ingest, a branch and a gather per
 * stage, vote, judge, presenter) or one solve's inside a branch, plus the step LangGraph counts for the input.
 */
export function stepBound(config: Pick<Configuration, "maxCodeAttempts">): number {
  return stepsAroundSolve(2 + 2 * 3 + 3, config);
}

export const builder = new StateGraph({ state: trustedWrites(MomState), input: MomState, context })
  .addNode("turn", reported("turn", turn))
  .addNode("ingest", reported("ingest", ingest))
  .addNode("branch", reported("branch", branchNode(solve)), { input: BranchTask })
  .addNode("gather", reported("gather", gather))
  .addNode("vote", reported("vote", vote))
  .addNode("judge", reported("judge", judge))
  .addNode("presenter", presenter)
  .addEdge(START, "turn")
  .addEdge("turn", "ingest")
  .addConditionalEdges("ingest", routeBranches, ["branch", "vote"])
  .addEdge("branch", "gather")
  .addConditionalEdges("gather", routeBranches, ["branch", "vote"])
  .addConditionalEdges("vote", routeAfterVote, ["judge", "presenter", END])
  .addConditionalEdges("judge", routeToPresenter, ["presenter", END])
  .addEdge("presenter", END);

/** Studio and SDK runs get a step limit that fits the largest configuration the form allows. */
export const RECURSION_LIMIT = stepBound(LARGEST_BOUNDS);

export const graph = builder.compile({ name: "mom" }).withConfig({
  recursionLimit: RECURSION_LIMIT,
  maxConcurrency: DEFAULT_CONCURRENCY,
});
