import type { GraphNode } from "@langchain/langgraph";
import { selectPackets } from "../../grounding/evidence-selection.js";
import type { NodeContext } from "../../nodes/runtime.js";
import type { OrchestratorState } from "./state.js";

/** Chooses the packets the answer rests on (coverage minus conflict minus cost). */
export const selector = (async (state) => ({
  selection: selectPackets(state.subtasks, state.packets, state.edges),
})) satisfies GraphNode<typeof OrchestratorState, NodeContext>;
