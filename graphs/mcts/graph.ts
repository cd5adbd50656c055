import { END, START, StateGraph } from "@langchain/langgraph";
import { trustedWrites } from "../../blackboard/trusted-writes.js";
import { ingest } from "../../nodes/ingest.js";
import { presenter, routeToPresenter } from "../../nodes/presenter.js";
import { reported } from "../../nodes/progress.js";
import { turn } from "../../nodes/turn.js";
import {
  type Configuration,
  DEFAULT_CONCURRENCY,
  LARGEST_BOUNDS,
} from "../../settings/configuration.js";
import { graph as solve, stepsAroundSolve } from "../solve/graph.js";
import { best } from "./best.js";
import { context } from "./configuration.js";
import { searchNode } from "./search.js";
import { MctsState } from "./state.js";

/*
 * mcts: a Monte-Carlo tree search over plans, codes and answers. `search` keeps up to
 * maxConcurrency branches growing: whenever one finishes, its answer's reward is backed up the
 * tree and the next place to grow is selected by UCT (those still growing count as visits that
 * brought nothing), grown by one new plan, code or answer and rolled out to an answer, while the
 * model-call budget allows. In a fixed-width mode it grows Mixture-of-Minds' rollouts for one
 * stage instead, valued the same way. `best` picks the answer.
 */

/**
 * The recursion limit a search needs: turn, ingest, search, best and presenter, or one solve's inside a
 * branch, plus the step LangGraph counts for the input.
 */
export function stepBound(config: Pick<Configuration, "maxCodeAttempts">) {
  return stepsAroundSolve(5, config);
}

export const builder = new StateGraph({
  state: trustedWrites(MctsState),
  input: MctsState,
  context,
})
  .addNode("turn", reported("turn", turn))
  .addNode("ingest", reported("ingest", ingest))
  .addNode("search", reported("search", searchNode(solve)))
  .addNode("best", reported("best", best))
  .addNode("presenter", presenter)
  .addEdge(START, "turn")
  .addEdge("turn", "ingest")
  .addEdge("ingest", "search")
  .addEdge("search", "best")
  .addConditionalEdges("best", routeToPresenter, ["presenter", END])
  .addEdge("presenter", END);

/** Studio and SDK runs get a step limit that fits the largest configuration the form allows. */
export const RECURSION_LIMIT = stepBound(LARGEST_BOUNDS);

export const graph = builder.compile({ name: "mcts" }).withConfig({
  recursionLimit: RECURSION_LIMIT,
  maxConcurrency: DEFAULT_CONCURRENCY,
});
