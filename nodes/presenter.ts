import type { TableQAStateValue } from "../blackboard/state.js";
import type { AnsweredRun } from "../views/answer-view.js";
import { pushAnswerView } from "../views/push.js";
import type { NodeRuntime } from "./runtime.js";

/*
 * The last step of every graph: the answer as the generative UI draws it (views/answer-view.ts),
 * pushed to the clients of a served run. It changes nothing else in the state.
 */

export type PresenterState = AnsweredRun & Pick<TableQAStateValue, "turns">;

export async function presenter(state: PresenterState, runtime: NodeRuntime) {
  await pushAnswerView(runtime, state, state.turns.length);
  return {};
}
