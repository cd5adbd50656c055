/**
 * A graph that only talks to the model: plan, code and answer as three calls through the
 * project's model client, with none of table_qa's table work and no sandbox. The throughput
 * benchmark runs it to measure the runner itself, apart from what each question costs.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { callModel } from "../models/chat.js";
import type { Role } from "../models/config.js";

const Budget = { llmCalls: 0, llmMs: 0, promptTokens: 0, completionTokens: 0 };
type Budget = typeof Budget;

const State = Annotation.Root({
  question: Annotation<string>(),
  transcript: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  answer: Annotation<{ final: string } | null>({ reducer: (_, b) => b, default: () => null }),
  budget: Annotation<Budget>({
    reducer: (a, b) => ({
      llmCalls: a.llmCalls + b.llmCalls,
      llmMs: a.llmMs + b.llmMs,
      promptTokens: a.promptTokens + b.promptTokens,
      completionTokens: a.completionTokens + b.completionTokens,
    }),
    default: () => ({ ...Budget }),
  }),
});

function step(role: Role, last: boolean) {
  return async (state: typeof State.State) => {
    const reply = await callModel(role, [
      { role: "system", content: `# tableminds ${role}\nBenchmark step.` },
      { role: "user", content: `Question: ${state.question}\n${state.transcript.join("\n")}` },
    ]);
    return {
      transcript: [reply.text],
      budget: {
        llmCalls: 1,
        llmMs: reply.ms,
        promptTokens: reply.promptTokens,
        completionTokens: reply.completionTokens,
      },
      ...(last ? { answer: { final: reply.text } } : {}),
    };
  };
}

export const threeCallGraph = new StateGraph(State)
  .addNode("planner", step("planner", false))
  .addNode("coder", step("coder", false))
  .addNode("answerer", step("answerer", true))
  .addEdge(START, "planner")
  .addEdge("planner", "coder")
  .addEdge("coder", "answerer")
  .addEdge("answerer", END)
  .compile();
