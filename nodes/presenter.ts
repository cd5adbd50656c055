import { END } from "@langchain/langgraph";
import type { TableQAStateValue } from "../blackboard/state.js";
import type { AnsweredRun } from "../views/answer-view.js";
import { pushAnswerView, showsViews } from "../views/push.js";
import type { NodeRuntime } from "./runtime.js";

/*
 * The last step of every graph a client watches: the answer as the generative UI draws it
 * (views/answer-view.ts), pushed to the clients of a served run. It changes nothing else in the
 * state. A run no client draws (the CLI, an evaluation) ends without the step.
 */

export type PresenterState = AnsweredRun & Pick<TableQAStateValue, "turns">;

export async function presenter(state: PresenterState, runtime: NodeRuntime) {
  await pushAnswerView(runtime, state, state.turns.length);
  return {};
}

/** Where a run with its final answer goes last: to the presenter when a client draws it. */
export function presentation(runtime?: NodeRuntime): "presenter" | typeof END {
  return runtime && showsViews(runtime) ? "presenter" : END;
}

/** The router after a graph's last node: presented when a client draws the answer, else the end. */
export const routeToPresenter = (_state: unknown, runtime?: NodeRuntime) => presentation(runtime);
