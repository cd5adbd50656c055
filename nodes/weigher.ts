import type { GraphNode } from "@langchain/langgraph";
import type { OrchestratorState } from "../blackboard/state.js";
import { evidenceGraph } from "../grounding/evidence-graph.js";
import type { NodeContext } from "./runtime.js";

/** Lays the workers' packets out as the evidence graph: claims, and how they relate. */
export const weigher = (async (state) =>
  evidenceGraph(state.subtasks, state.packets)) satisfies GraphNode<
  typeof OrchestratorState,
  NodeContext
>;
