import type { GraphNode } from "@langchain/langgraph";
import { evidenceGraph } from "../../grounding/evidence-graph.js";
import type { NodeContext } from "../../nodes/runtime.js";
import type { OrchestratorState } from "./state.js";

/** Lays the workers' packets out as the evidence graph: claims, and how they relate. */
export const weigher = (async (state) =>
  evidenceGraph(state.subtasks, state.packets)) satisfies GraphNode<
  typeof OrchestratorState,
  NodeContext
>;
