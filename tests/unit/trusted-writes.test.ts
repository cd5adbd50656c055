import { END, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { trustedWrites, UncheckedWriteError } from "../../blackboard/trusted-writes.js";
import { graph as tableQa } from "../../graphs/table_qa/graph.js";

const State = new StateSchema({
  count: z.number().default(0),
  item: z.object({ name: z.string() }).nullable().default(null),
});

/** A graph whose one node writes `write`, on `State` trusted under `env`. */
function writing(write: Record<string, unknown>, env: NodeJS.ProcessEnv) {
  return new StateGraph({ state: trustedWrites(State, env), input: State })
    .addNode("node", async () => write)
    .addEdge(START, "node")
    .addEdge("node", END)
    .compile();
}

describe("node writes on a trusted state", () => {
  it("are taken as they are outside the tests: nothing parses them again", async () => {
    const out = await writing({ item: { name: "a", extra: 1 } }, {}).invoke({ count: 1 });
    // A parse would have stripped the key the schema does not know.
    expect(out.item).toEqual({ name: "a", extra: 1 });
  });

  it("are parsed under the tests, and one the schema would change or refuse throws", async () => {
    const env = { VITEST: "true" };
    await expect(writing({ item: { name: "a", extra: 1 } }, env).invoke({})).rejects.toThrow(
      UncheckedWriteError,
    );
    await expect(writing({ count: "3" }, env).invoke({})).rejects.toThrow(/schema refuses/);
    expect((await writing({ item: { name: "b" } }, env).invoke({})).item).toEqual({ name: "b" });
  });

  it("leave the graph's input parsed in full", async () => {
    // As an HTTP client may send them: not what the types allow.
    const wrongCount = JSON.parse('{"count": "many"}') as { count: number };
    const wrongQuestion = JSON.parse('{"question": 42, "sources": []}') as { question: string };
    await expect(writing({}, {}).invoke(wrongCount)).rejects.toThrow(/count/);
    await expect(tableQa.invoke(wrongQuestion)).rejects.toThrow(/question/);
  });
});
