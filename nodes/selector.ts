import type { GraphNode } from "@langchain/langgraph";
import type { OrchestratorState } from "../blackboard/state.js";
import { selectPackets } from "../grounding/evidence-selection.js";
import type { NodeContext } from "./runtime.js";

/** Chooses the packets the answer rests on (coverage minus conflict minus cost). */
export const selector = (async (state) => ({
  selection: selectPackets(state.subtasks, state.packets, state.edges),
})) satisfies GraphNode<typeof OrchestratorState, NodeContext>;
