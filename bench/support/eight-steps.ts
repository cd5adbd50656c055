import { END, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { z } from "zod";

/*
 * A bare LangGraph graph of eight no-op steps in a row (as many as table_qa's own), uncompiled:
 * the floor a benchmark sets the real graph or a checkpointer against.
 */

const noop = async () => ({ n: 1 });

export function eightSteps() {
  return new StateGraph(new StateSchema({ n: z.number().default(0) }))
    .addNode("s1", noop)
    .addNode("s2", noop)
    .addNode("s3", noop)
    .addNode("s4", noop)
    .addNode("s5", noop)
    .addNode("s6", noop)
    .addNode("s7", noop)
    .addNode("s8", noop)
    .addEdge(START, "s1")
    .addEdge("s1", "s2")
    .addEdge("s2", "s3")
    .addEdge("s3", "s4")
    .addEdge("s4", "s5")
    .addEdge("s5", "s6")
    .addEdge("s6", "s7")
    .addEdge("s7", "s8")
    .addEdge("s8", END);
}
