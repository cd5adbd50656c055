import { type ConditionalEdgeRouter, END, START, StateGraph } from "@langchain/langgraph";
import { attemptsSinceReflection } from "../../blackboard/attempts.js";
import {
  SolveGraphOutput,
  SolveGraphState,
  SolveInput,
  type SolveStateValue,
} from "../../blackboard/state.js";
import { trustedWrites } from "../../blackboard/trusted-writes.js";
import { answerer } from "../../nodes/answerer.js";
import { coder } from "../../nodes/coder.js";
import { executor } from "../../nodes/executor.js";
import { planner } from "../../nodes/planner.js";
import { modelRetryPolicy } from "../../nodes/policies.js";
import { reported } from "../../nodes/progress.js";
import { reviewer, reviewing } from "../../nodes/reviewer.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "../../nodes/runtime.js";
import type { Configuration } from "../../settings/configuration.js";
import { context } from "./configuration.js";

/*
 * solve: the core every graph composes. It plans, writes code, runs it (again with the error
 * history while it fails, up to maxCodeAttempts) and answers from what the code printed.
 * With `review` on code, a person sees each code before it runs. table_qa wraps it with
 * checks, reflections and memory.
 */

type Router<Nodes extends string> = ConditionalEdgeRouter<
  typeof SolveGraphState,
  NodeContext,
  Nodes
>;

/**
 * Where the caller said to start; else at the coder when a plan stands (given, or kept by a
 * reflection), else at the planner.
 */
export const routeSolveStart = ((
  state: Pick<SolveStateValue, "plan" | "reflections"> & Partial<Pick<SolveStateValue, "startAt">>,
) => {
  if (state.startAt) return state.startAt;
  return state.plan.length > 0 && state.reflections.at(-1)?.route !== "planner"
    ? "coder"
    : "planner";
}) satisfies Router<"planner" | "coder" | "answerer">;

/** After the plan: on to the coder, unless the caller wanted the plan only. */
export const routeAfterPlanner = ((state: Pick<SolveStateValue, "stopAfter">) =>
  state.stopAfter === "planner" ? END : "coder") satisfies Router<"coder">;

/**
 * After a run: code again while it fails and this round's attempts remain; then answer, unless
 * the caller wanted the code's run only.
 */
export const routeAfterExecutor = ((
  state: Pick<SolveStateValue, "attempts" | "reflections"> &
    Partial<Pick<SolveStateValue, "stopAfter">>,
  runtime?: NodeRuntime,
) => {
  const round = attemptsSinceReflection(state);
  const retry =
    !round.at(-1)?.result?.ok && round.length < configurationOf(runtime).maxCodeAttempts;
  if (retry) return "coder";
  return state.stopAfter === "executor" ? END : "answerer";
}) satisfies Router<"coder" | "answerer">;

/**
 * After the coder: a person reviews the code first when `review` asks for it (not in a branch
 * of a search, which says where it stops, nor for a reply that held no code); else it runs.
 */
export const routeAfterCoder = ((
  state: Pick<SolveStateValue, "attempts"> & Partial<Pick<SolveStateValue, "stopAfter">>,
  runtime?: NodeRuntime,
) => {
  const attempt = state.attempts.at(-1);
  const review =
    reviewing("code", configurationOf(runtime)) && !state.stopAfter && !attempt?.parseError;
  return review ? "reviewer" : "executor";
}) satisfies Router<"reviewer" | "executor">;

/** After a review: run the code as approved or edited; a rejected one is a failed run. */
export const routeAfterCodeReview = ((
  state: Pick<SolveStateValue, "attempts" | "reflections"> &
    Partial<Pick<SolveStateValue, "stopAfter">>,
  runtime?: NodeRuntime,
) =>
  state.attempts.at(-1)?.result ? routeAfterExecutor(state, runtime) : "executor") satisfies Router<
  "executor" | "coder" | "answerer"
>;

/**
 * Steps one solve takes at most: plan, code and run up to maxCodeAttempts times, answer. A
 * review pause ends the invocation, and its resume counts its steps afresh, so no more.
 */
export function solveSteps(config: Pick<Configuration, "maxCodeAttempts">): number {
  return 2 + 2 * config.maxCodeAttempts;
}

/**
 * The recursion limit of a graph that runs solve as a subgraph: its own steps or one solve's,
 * whichever is more (a subgraph counts its own), plus the step LangGraph counts for the input.
 */
export function stepsAroundSolve(own: number, config: Pick<Configuration, "maxCodeAttempts">) {
  return 1 + Math.max(own, solveSteps(config));
}

export const builder = new StateGraph({
  state: trustedWrites(SolveGraphState),
  // Its input is a parent graph's state, already parsed: it is a write like any other.
  input: trustedWrites(SolveInput),
  output: SolveGraphOutput,
  context,
})
  .addNode("planner", reported("planner", planner), { retryPolicy: modelRetryPolicy })
  .addNode("coder", reported("coder", coder), { retryPolicy: modelRetryPolicy })
  .addNode("reviewer", reported("reviewer", reviewer))
  .addNode("executor", reported("executor", executor))
  .addNode("answerer", reported("answerer", answerer), { retryPolicy: modelRetryPolicy })
  .addConditionalEdges(START, routeSolveStart, ["planner", "coder", "answerer"])
  .addConditionalEdges("planner", routeAfterPlanner, ["coder", END])
  .addConditionalEdges("coder", routeAfterCoder, ["reviewer", "executor"])
  .addConditionalEdges("reviewer", routeAfterCodeReview, ["executor", "coder", "answerer"])
  .addConditionalEdges("executor", routeAfterExecutor, ["coder", "answerer", END])
  .addEdge("answerer", END);

export const graph = builder.compile({ name: "solve" });
