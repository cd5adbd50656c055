import type { GraphNode } from "@langchain/langgraph";
import type { TurnState } from "../blackboard/state.js";
import { openTurn } from "../blackboard/turns.js";
import type { NodeContext } from "./runtime.js";

/**
 * The entry of every graph: a question other than the one on the blackboard opens a new turn
 * of the thread's conversation (blackboard/turns.ts). Studio and the SDK send a new question
 * to a thread as input, which LangGraph merges into the thread's state; this is where the
 * earlier question's answer, attempts and evidence are archived and cleared.
 */
export const turn = (async (state) => openTurn(state)) satisfies GraphNode<
  typeof TurnState,
  NodeContext
>;
