import { type ConditionalEdgeRouter, END, START, StateGraph } from "@langchain/langgraph";
import {
  TableQAGraphState,
  type TableQAGraphStateValue,
  type TableQAStateValue,
} from "../../blackboard/state.js";
import { trustedWrites } from "../../blackboard/trusted-writes.js";
import { archiver } from "../../nodes/archiver.js";
import { checker } from "../../nodes/checker.js";
import { finalizer } from "../../nodes/finalizer.js";
import { ingest } from "../../nodes/ingest.js";
import { presentation, presenter, routeToPresenter } from "../../nodes/presenter.js";
import { reported } from "../../nodes/progress.js";
import { recall } from "../../nodes/recall.js";
import { reflector } from "../../nodes/reflector.js";
import { reviewer, reviewing } from "../../nodes/reviewer.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "../../nodes/runtime.js";
import { turn } from "../../nodes/turn.js";
import { type Configuration, LARGEST_BOUNDS } from "../../settings/configuration.js";
import { graph as solve, stepsAroundSolve } from "../solve/graph.js";
import { context } from "./configuration.js";

/*
 * table_qa: one trajectory of `solve`, checked; a failed check is reflected on and solved again
 * (from the plan or from the code, as the reflector decides) while reflections remain, then the
 * best checked answer stands. With `review` on answers, a person sees the answer before it is
 * final. With memory on, past episodes are recalled before solving and the episode is archived
 * at the end. A new question on a thread opens a new turn of its conversation (`turn`).
 */

type Router<Nodes extends string> = ConditionalEdgeRouter<
  typeof TableQAGraphState,
  NodeContext,
  Nodes
>;

/** Where a run with its final answer goes: to the archiver with memory on, else as presented. */
function archived(runtime?: NodeRuntime): "archiver" | "presenter" | typeof END {
  return configurationOf(runtime).memory ? "archiver" : presentation(runtime);
}

/** Where a settled run goes: to the reviewer when answers are reviewed, else as archived. */
function settled(runtime?: NodeRuntime): "reviewer" | "archiver" | "presenter" | typeof END {
  return reviewing("answer", configurationOf(runtime)) ? "reviewer" : archived(runtime);
}

/** With memory on, recall past episodes before solving. */
export const routeAfterIngest = ((_state: unknown, runtime?: NodeRuntime) =>
  configurationOf(runtime).memory ? "recall" : "solve") satisfies Router<"recall" | "solve">;

/** After solving: check the answer when checking is on, else the run is settled. */
export const routeAfterSolve = ((_state: unknown, runtime?: NodeRuntime) =>
  configurationOf(runtime).check ? "checker" : settled(runtime)) satisfies Router<
  "checker" | "reviewer" | "archiver" | "presenter"
>;

/**
 * After a check: keep a passing answer, and an unchecked one (prose with no claim to check:
 * reflecting cannot make it checkable); reflect on a failing one while reflections remain.
 */
export const routeAfterCheck = ((
  state: Pick<TableQAStateValue, "verdict" | "reflections">,
  runtime?: NodeRuntime,
) => {
  if (state.verdict?.pass || state.verdict?.unchecked) return settled(runtime);
  return state.reflections.length < configurationOf(runtime).maxReflections
    ? "reflector"
    : "finalizer";
}) satisfies Router<"reviewer" | "archiver" | "presenter" | "reflector" | "finalizer">;

/** Once the finalizer has settled the best checked answer. */
export const routeAfterFinalizer = ((_state: unknown, runtime?: NodeRuntime) =>
  settled(runtime)) satisfies Router<"reviewer" | "archiver" | "presenter">;

/** After the answer's review: a rejected answer is presented as it is; else as archived. */
export const routeAfterAnswerReview = ((
  state: Pick<TableQAGraphStateValue, "reviews">,
  runtime?: NodeRuntime,
) =>
  state.reviews.find((r) => r.id === "review:answer")?.action === "reject"
    ? presentation(runtime)
    : archived(runtime)) satisfies Router<"archiver" | "presenter">;

/**
 * The recursion limit a run needs: the steps of table_qa itself (turn, ingest, recall, a solve
 * and a check per round, a reflection between rounds, finalizer, archiver, presenter) or of one solve,
 * whichever is more (a subgraph counts its own steps), plus the step LangGraph counts for the
 * input. A review pause ends the invocation and the resume counts afresh, so reviews add no
 * steps.
 */
export function stepBound(config: Pick<Configuration, "maxCodeAttempts" | "maxReflections">) {
  const rounds = config.maxReflections + 1;
  const own = 3 + 2 * rounds + config.maxReflections + 3;
  return stepsAroundSolve(own, config);
}

export const builder = new StateGraph({
  state: trustedWrites(TableQAGraphState),
  input: TableQAGraphState,
  context,
})
  .addNode("turn", reported("turn", turn))
  .addNode("ingest", reported("ingest", ingest))
  .addNode("recall", reported("recall", recall))
  .addNode("solve", solve)
  .addNode("checker", reported("checker", checker))
  .addNode("reflector", reported("reflector", reflector))
  .addNode("finalizer", reported("finalizer", finalizer))
  .addNode("reviewer", reported("reviewer", reviewer))
  .addNode("archiver", reported("archiver", archiver))
  .addNode("presenter", presenter)
  .addEdge(START, "turn")
  .addEdge("turn", "ingest")
  .addConditionalEdges("ingest", routeAfterIngest, ["recall", "solve"])
  .addEdge("recall", "solve")
  .addConditionalEdges("solve", routeAfterSolve, [
    "checker",
    "reviewer",
    "archiver",
    "presenter",
    END,
  ])
  .addConditionalEdges("checker", routeAfterCheck, [
    "reviewer",
    "archiver",
    "reflector",
    "finalizer",
    "presenter",
    END,
  ])
  .addEdge("reflector", "solve")
  .addConditionalEdges("finalizer", routeAfterFinalizer, ["reviewer", "archiver", "presenter", END])
  .addConditionalEdges("reviewer", routeAfterAnswerReview, ["archiver", "presenter", END])
  .addConditionalEdges("archiver", routeToPresenter, ["presenter", END])
  .addEdge("presenter", END);

/** Studio and SDK runs get a step limit that fits the largest configuration the form allows. */
export const RECURSION_LIMIT = stepBound(LARGEST_BOUNDS);

export const graph = builder.compile({ name: "table_qa" }).withConfig({
  recursionLimit: RECURSION_LIMIT,
});
