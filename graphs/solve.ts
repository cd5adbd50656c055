import { type ConditionalEdgeRouter, END, START, StateGraph } from "@langchain/langgraph";
import { attemptsSinceReflection } from "../blackboard/attempts.js";
import { type Configuration, ContextSchema } from "../blackboard/configuration.js";
import { SolveInput, SolveOutput, SolveState, type SolveStateValue } from "../blackboard/state.js";
import { answerer } from "../nodes/answerer.js";
import { coder } from "../nodes/coder.js";
import { executor } from "../nodes/executor.js";
import { planner } from "../nodes/planner.js";
import { modelRetryPolicy } from "../nodes/policies.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "../nodes/runtime.js";

/*
 * solve: the core every graph composes. It plans, writes code, runs it (again with the error
 * history while it fails, up to maxCodeAttempts) and answers from what the code printed.
 * table_qa wraps it with checks, reflections and memory.
 */

/** Start at the coder when a plan stands (given, or kept by a reflection), else plan first. */
export const routeSolveStart = ((state: Pick<SolveStateValue, "plan" | "reflections">) =>
  state.plan.length > 0 && state.reflections.at(-1)?.route !== "planner"
    ? "coder"
    : "planner") satisfies ConditionalEdgeRouter<
  typeof SolveState,
  NodeContext,
  "planner" | "coder"
>;

/** After a run: answer when it worked or this round's attempts are used up, else code again. */
export const routeAfterExecutor = ((
  state: Pick<SolveStateValue, "attempts" | "reflections">,
  runtime?: NodeRuntime,
) => {
  const round = attemptsSinceReflection(state);
  if (round.at(-1)?.result?.ok) return "answerer";
  return round.length < configurationOf(runtime).maxCodeAttempts ? "coder" : "answerer";
}) satisfies ConditionalEdgeRouter<typeof SolveState, NodeContext, "coder" | "answerer">;

/** Steps one solve takes at most: plan, code and run up to maxCodeAttempts times, answer. */
export function solveSteps(config: Pick<Configuration, "maxCodeAttempts">): number {
  return 2 + 2 * config.maxCodeAttempts;
}

export const builder = new StateGraph({
  state: SolveState,
  input: SolveInput,
  output: SolveOutput,
  context: ContextSchema,
})
  .addNode("planner", planner, { retryPolicy: modelRetryPolicy })
  .addNode("coder", coder, { retryPolicy: modelRetryPolicy })
  .addNode("executor", executor)
  .addNode("answerer", answerer, { retryPolicy: modelRetryPolicy })
  .addConditionalEdges(START, routeSolveStart, ["planner", "coder"])
  .addEdge("planner", "coder")
  .addEdge("coder", "executor")
  .addConditionalEdges("executor", routeAfterExecutor, ["coder", "answerer"])
  .addEdge("answerer", END);

export const graph = builder.compile({ name: "solve" });
