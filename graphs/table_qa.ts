import { END, START, StateGraph } from "@langchain/langgraph";
import { ContextSchema } from "../blackboard/configuration.js";
import { TableQAState, type TableQAStateValue } from "../blackboard/state.js";
import { answerNode } from "../nodes/answer.js";
import { codeNode } from "../nodes/code.js";
import { executeNode } from "../nodes/execute.js";
import { ingestNode } from "../nodes/ingest.js";
import { planNode } from "../nodes/plan.js";
import { modelRetryPolicy } from "../nodes/policies.js";
import { configurationOf } from "../nodes/runtime.js";

/** After a run: answer when it worked or the attempts are used up, else code again. */
export function routeAfterExecute(
  state: Pick<TableQAStateValue, "attempts">,
  maxCodeAttempts: number,
): "coder" | "answerer" {
  const last = state.attempts.at(-1);
  if (last?.result?.ok) return "answerer";
  return state.attempts.length < maxCodeAttempts ? "coder" : "answerer";
}

/*
 * ingest -> planner -> coder -> executor -> answerer -> END
 *                        ^          |
 *                        +- retry --+   (with the error history, up to maxCodeAttempts)
 * check / reflect / memory nodes join between answerer and END in a later version.
 */
export const builder = new StateGraph(TableQAState, ContextSchema)
  .addNode("ingest", ingestNode)
  .addNode("planner", planNode, { retryPolicy: modelRetryPolicy })
  .addNode("coder", codeNode, { retryPolicy: modelRetryPolicy })
  .addNode("executor", executeNode)
  .addNode("answerer", answerNode, { retryPolicy: modelRetryPolicy })
  .addEdge(START, "ingest")
  .addEdge("ingest", "planner")
  .addEdge("planner", "coder")
  .addEdge("coder", "executor")
  .addConditionalEdges(
    "executor",
    (state, config) => routeAfterExecute(state, configurationOf(config).maxCodeAttempts),
    ["coder", "answerer"],
  )
  .addEdge("answerer", END);

export const graph = builder.compile();
graph.name = "table_qa";
