import type { GraphNode } from "@langchain/langgraph";
import type { Packet, Subtask } from "../../blackboard/schemas.js";
import { inputsOf, readySubtasks, unanswered } from "../../blackboard/subtasks.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import type { OrchestratorState } from "./state.js";

/*
 * Starts each dispatch round: the subtasks whose inputs are all in go out to their workers
 * (the graph sends them). A subtask whose input has no answer is not run, and neither is any
 * subtask once the rounds or the model calls run out; each gets a packet that says why, so the
 * answer shows what was left undone.
 */

function unrun(subtask: Subtask, why: string): Packet[] {
  return subtask.workers.map((worker) => unanswered(subtask.id, worker, why));
}

export const dispatcher = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const settled: Packet[] = [];
  let ready: Subtask[] = [];
  // Skipping a subtask can settle the ones after it: repeat until nothing more is skipped.
  for (;;) {
    const packets = [...state.packets, ...settled];
    ready = readySubtasks(state.subtasks, packets);
    const blocked = ready.filter((s) =>
      inputsOf(s, state.subtasks, packets).some((input) => input.answer === null),
    );
    if (blocked.length === 0) break;
    for (const subtask of blocked) {
      const missing = inputsOf(subtask, state.subtasks, packets)
        .filter((input) => input.answer === null)
        .map((input) => input.id);
      settled.push(...unrun(subtask, `not run: ${missing.join(", ")} found no answer`));
    }
  }
  const outOf =
    state.round >= config.maxDispatchRounds
      ? `not run: the ${config.maxDispatchRounds} dispatch rounds were used up`
      : state.budget.llmCalls >= config.maxModelCalls
        ? `not run: the run's ${config.maxModelCalls} model calls were used up`
        : null;
  if (ready.length > 0 && outOf) {
    const done = new Set([...state.packets, ...settled].map((p) => p.subtask));
    for (const subtask of state.subtasks.filter((s) => !done.has(s.id))) {
      settled.push(...unrun(subtask, outOf));
    }
    ready = [];
  }
  return {
    packets: settled,
    dispatching: ready.flatMap((s) => s.workers.map((worker) => ({ subtask: s.id, worker }))),
    round: ready.length > 0 ? state.round + 1 : state.round,
  };
}) satisfies GraphNode<typeof OrchestratorState, NodeContext>;
