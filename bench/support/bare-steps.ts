import { END, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { z } from "zod";

/*
 * A bare LangGraph graph of `count` no-op steps in a row, uncompiled: the floor a benchmark
 * sets the real graph or a checkpointer against.
 */

const noop = async () => ({ n: 1 });

export function bareSteps(count: number) {
  // The graph's type grows with each node's name; built by name, it is one shape whatever the count.
  const graph = new StateGraph(new StateSchema({ n: z.number().default(0) })) as unknown as {
    addNode(name: string, node: typeof noop): unknown;
    addEdge(from: string, to: string): unknown;
  };
  for (let i = 1; i <= count; i++) {
    graph.addNode(`s${i}`, noop);
    graph.addEdge(i === 1 ? START : `s${i - 1}`, `s${i}`);
  }
  graph.addEdge(`s${count}`, END);
  return graph as unknown as StateGraph<StateSchema<{ n: z.ZodDefault<z.ZodNumber> }>>;
}

/** As many steps as table_qa took before its turn and presenter steps: the floor of older figures. */
export const eightSteps = () => bareSteps(8);
