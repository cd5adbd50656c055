import type { GraphNode } from "@langchain/langgraph";
import type { NodeContext } from "../../nodes/runtime.js";
import type { MomState } from "./state.js";

/**
 * Waits for every branch started together, so that the next stage, or the vote, is decided once
 * over all of them. It changes nothing itself.
 */
export const gather = (async () => ({})) satisfies GraphNode<typeof MomState, NodeContext>;
