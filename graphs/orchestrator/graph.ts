import { END, Send, START, StateGraph } from "@langchain/langgraph";
import { inputsOf } from "../../blackboard/subtasks.js";
import { trustedWrites } from "../../blackboard/trusted-writes.js";
import { checker } from "../../nodes/checker.js";
import { ingest } from "../../nodes/ingest.js";
import { modelRetryPolicy } from "../../nodes/policies.js";
import { presenter, routeToPresenter } from "../../nodes/presenter.js";
import { reported } from "../../nodes/progress.js";
import { turn } from "../../nodes/turn.js";
import {
  type Configuration,
  DEFAULT_CONCURRENCY,
  LARGEST_BOUNDS,
} from "../../settings/configuration.js";
import { graph as solve, stepsAroundSolve } from "../solve/graph.js";
import { composer } from "./composer.js";
import { context } from "./configuration.js";
import { decomposer } from "./decomposer.js";
import { dispatcher } from "./dispatcher.js";
import { selector } from "./selector.js";
import { OrchestratorState, type OrchestratorStateValue, WorkerTask } from "./state.js";
import { weigher } from "./weigher.js";
import { workerNode } from "./worker.js";

/*
 * orchestrator: the decomposer splits the question into subtasks for registered workers; each
 * round the dispatcher sends the subtasks whose inputs are in to their workers, side by side;
 * the packets they return become an evidence graph, the selector picks what the answer rests on,
 * the composer states it, and the checker judges it.
 */

/**
 * The workers of this round, each with its subtask and the answers it depends on; with none
 * left, on to the evidence graph. (Its Sends carry a worker's task, not the orchestrator's
 * state, so it is not typed as ConditionalEdgeRouter.)
 */
export const routeDispatch = (
  state: Pick<
    OrchestratorStateValue,
    "question" | "tables" | "subtasks" | "packets" | "dispatching"
  > &
    Partial<Pick<OrchestratorStateValue, "turns">>,
) => {
  if (state.dispatching.length === 0) return "weigher";
  const { question, tables, turns = [], subtasks, packets } = state;
  return state.dispatching.flatMap(({ subtask: id, worker }) => {
    const subtask = subtasks.find((s) => s.id === id);
    if (!subtask) return [];
    const inputs = inputsOf(subtask, subtasks, packets);
    return [new Send("worker", { question, tables, turns, subtask, worker, inputs })];
  });
};

/**
 * The recursion limit a run needs: turn, ingest, decomposer, a dispatcher and a worker per
 * round, the last dispatcher, weigher, selector, composer, checker and presenter, or one solve inside a
 * worker, plus the step LangGraph counts for the input.
 */
export function stepBound(config: Pick<Configuration, "maxCodeAttempts" | "maxDispatchRounds">) {
  return stepsAroundSolve(3 + 2 * config.maxDispatchRounds + 6, config);
}

export const builder = new StateGraph({
  state: trustedWrites(OrchestratorState),
  input: OrchestratorState,
  context,
})
  .addNode("turn", reported("turn", turn))
  .addNode("ingest", reported("ingest", ingest))
  .addNode("decomposer", reported("decomposer", decomposer), { retryPolicy: modelRetryPolicy })
  .addNode("dispatcher", reported("dispatcher", dispatcher))
  .addNode("worker", reported("worker", workerNode(solve)), {
    input: WorkerTask,
    retryPolicy: modelRetryPolicy,
  })
  .addNode("weigher", reported("weigher", weigher))
  .addNode("selector", reported("selector", selector))
  .addNode("composer", reported("composer", composer), { retryPolicy: modelRetryPolicy })
  .addNode("checker", reported("checker", checker))
  .addNode("presenter", presenter)
  .addEdge(START, "turn")
  .addEdge("turn", "ingest")
  .addEdge("ingest", "decomposer")
  .addEdge("decomposer", "dispatcher")
  .addConditionalEdges("dispatcher", routeDispatch, ["worker", "weigher"])
  .addEdge("worker", "dispatcher")
  .addEdge("weigher", "selector")
  .addEdge("selector", "composer")
  .addEdge("composer", "checker")
  .addConditionalEdges("checker", routeToPresenter, ["presenter", END])
  .addEdge("presenter", END);

/** Studio and SDK runs get a step limit that fits the largest configuration the form allows. */
export const RECURSION_LIMIT = stepBound(LARGEST_BOUNDS);

export const graph = builder.compile({ name: "orchestrator" }).withConfig({
  recursionLimit: RECURSION_LIMIT,
  maxConcurrency: DEFAULT_CONCURRENCY,
});
