import { END, START, StateGraph } from "@langchain/langgraph";
import { type Configuration, ContextSchema } from "../blackboard/configuration.js";
import { TableQAState, type TableQAStateValue } from "../blackboard/state.js";
import { answerNode } from "../nodes/answer.js";
import { archiveNode } from "../nodes/archive.js";
import { checkNode } from "../nodes/check.js";
import { attemptsSinceReflection, codeNode } from "../nodes/code.js";
import { executeNode } from "../nodes/execute.js";
import { finalizeNode } from "../nodes/finalize.js";
import { ingestNode } from "../nodes/ingest.js";
import { planNode } from "../nodes/plan.js";
import { modelRetryPolicy } from "../nodes/policies.js";
import { recallNode } from "../nodes/recall.js";
import { reflectNode } from "../nodes/reflect.js";
import { configurationOf } from "../nodes/runtime.js";

/** Long-term memory on: recall past episodes first, and archive this one at the end. */
export function routeAfterIngest(memory: boolean): "recall" | "planner" {
  return memory ? "recall" : "planner";
}

/** Where a run goes once its answer is settled: to the archiver, or, with memory off, the end. */
export function toMemory(memory: boolean): "archiver" | typeof END {
  return memory ? "archiver" : END;
}

/** After a run: answer when it worked or this round's attempts are used up, else code again. */
export function routeAfterExecute(
  state: Pick<TableQAStateValue, "attempts" | "reflections">,
  maxCodeAttempts: number,
): "coder" | "answerer" {
  const round = attemptsSinceReflection(state);
  if (round.at(-1)?.result?.ok) return "answerer";
  return round.length < maxCodeAttempts ? "coder" : "answerer";
}

/** After an answer: check it when checking is on, else go straight to memory. */
export function routeAfterAnswer(
  check: boolean,
  memory: boolean,
): "checker" | "archiver" | typeof END {
  return check ? "checker" : toMemory(memory);
}

/** After a check: keep a passing answer, reflect on a failing one while reflections remain. */
export function routeAfterCheck(
  state: Pick<TableQAStateValue, "verdict" | "reflections">,
  maxReflections: number,
  memory: boolean,
): "archiver" | typeof END | "reflector" | "finalizer" {
  if (state.verdict?.pass) return toMemory(memory);
  return state.reflections.length < maxReflections ? "reflector" : "finalizer";
}

/** After a reflection: back to the plan or to the code, as the reflector decided. */
export function routeAfterReflect(
  state: Pick<TableQAStateValue, "reflections">,
): "planner" | "coder" {
  return state.reflections.at(-1)?.route ?? "coder";
}

/**
 * The most steps a run can take: each round (the first, and one per reflection) plans,
 * codes and runs up to maxCodeAttempts times, answers, checks and reflects.
 */
export function stepBound(config: Pick<Configuration, "maxCodeAttempts" | "maxReflections">) {
  const round = 1 + 2 * config.maxCodeAttempts + 3;
  return 2 + (config.maxReflections + 1) * round + 2;
}

/*
 * With memory off, ingest goes straight to the planner and the run ends where the archiver
 * would start.
 *
 * ingest -> recall -> planner -> coder -> executor -> answerer -> checker -> archiver -> END
 *                      ^          ^  \_retry_/           |          |  \          ^
 *                      |          |  (error history)     |          |   finalizer-+
 *                      |          +-- reflector <--------|----------+   (best checked answer,
 *                      +-------------/                   |   fail     when reflections run out)
 *                                                        +-- check off --> archiver
 */
export const builder = new StateGraph(TableQAState, ContextSchema)
  .addNode("ingest", ingestNode)
  .addNode("recall", recallNode)
  .addNode("planner", planNode, { retryPolicy: modelRetryPolicy })
  .addNode("coder", codeNode, { retryPolicy: modelRetryPolicy })
  .addNode("executor", executeNode)
  .addNode("answerer", answerNode, { retryPolicy: modelRetryPolicy })
  .addNode("checker", checkNode)
  .addNode("reflector", reflectNode)
  .addNode("finalizer", finalizeNode)
  .addNode("archiver", archiveNode)
  .addEdge(START, "ingest")
  .addConditionalEdges(
    "ingest",
    (_state, config) => routeAfterIngest(configurationOf(config).memory),
    ["recall", "planner"],
  )
  .addEdge("recall", "planner")
  .addEdge("planner", "coder")
  .addEdge("coder", "executor")
  .addConditionalEdges(
    "executor",
    (state, config) => routeAfterExecute(state, configurationOf(config).maxCodeAttempts),
    ["coder", "answerer"],
  )
  .addConditionalEdges(
    "answerer",
    (_state, config) => {
      const { check, memory } = configurationOf(config);
      return routeAfterAnswer(check, memory);
    },
    ["checker", "archiver", END],
  )
  .addConditionalEdges(
    "checker",
    (state, config) => {
      const { maxReflections, memory } = configurationOf(config);
      return routeAfterCheck(state, maxReflections, memory);
    },
    ["archiver", END, "reflector", "finalizer"],
  )
  .addConditionalEdges("reflector", routeAfterReflect, ["planner", "coder"])
  .addConditionalEdges("finalizer", (_state, config) => toMemory(configurationOf(config).memory), [
    "archiver",
    END,
  ])
  .addEdge("archiver", END);

/** Studio and SDK runs get a step limit that fits the largest configuration the form allows. */
export const RECURSION_LIMIT = stepBound({ maxCodeAttempts: 10, maxReflections: 5 });

export const graph = builder.compile().withConfig({ recursionLimit: RECURSION_LIMIT });
graph.name = "table_qa";
