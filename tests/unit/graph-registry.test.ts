import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  Annotation,
  END,
  InMemoryStore,
  MemorySaver,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { graphFromModule, loadGraph } from "../../graphs/registry.js";

const State = Annotation.Root({ n: Annotation<number> });

/** A graph module as langgraph.json names one: builder, graph and RECURSION_LIMIT. */
function counterModule() {
  const builder = new StateGraph(State)
    .addNode("inc", (s: typeof State.State) => ({ n: s.n + 1 }))
    .addEdge(START, "inc")
    .addEdge("inc", END);
  const graph = builder.compile().withConfig({ recursionLimit: 7 });
  graph.name = "counter";
  return { builder, graph, RECURSION_LIMIT: 7 };
}

/** What LangGraph keeps on a compiled graph, read for the checks below. */
type Compiled = { checkpointer?: unknown; store?: unknown; name?: string; config?: object };

describe("graphFromModule", () => {
  it("gives the exported graph itself when nothing is to be kept", () => {
    const module = counterModule();
    expect(graphFromModule(module)).toBe(module.graph);
  });

  it("compiles the builder with the checkpointer and store, the name and the step limit", async () => {
    const module = counterModule();
    const checkpointer = new MemorySaver();
    const store = new InMemoryStore();
    const graph = graphFromModule(module, { checkpointer, store });
    const compiled = graph as unknown as Compiled;
    expect(compiled.checkpointer).toBe(checkpointer);
    expect(compiled.store).toBe(store);
    expect(compiled.name).toBe("counter");
    expect(compiled.config).toMatchObject({ recursionLimit: 7 });
    // The exported graph is left as it was.
    expect((module.graph as unknown as Compiled).checkpointer).toBeUndefined();

    const config = { configurable: { thread_id: "t" } };
    expect(await graph.invoke({ n: 1 }, config)).toEqual({ n: 2 });
    expect((await graph.getState(config)).values).toEqual({ n: 2 });
  });

  it("says in one line what a module lacks", () => {
    const { graph } = counterModule();
    const store = new InMemoryStore();
    const where = { where: "./graphs/counter.ts" };
    expect(() => graphFromModule({ graph, RECURSION_LIMIT: 7 }, { store }, where)).toThrow(
      /^\.\/graphs\/counter\.ts does not export "builder" \(its uncompiled StateGraph\), so it cannot run with a checkpointer or store$/,
    );
    const { builder } = counterModule();
    expect(() => graphFromModule({ graph, builder }, { store }, where)).toThrow(
      /^\.\/graphs\/counter\.ts does not export "RECURSION_LIMIT"/,
    );
    expect(() => graphFromModule({ builder }, {}, where)).toThrow(
      './graphs/counter.ts does not export a compiled graph named "graph"',
    );
  });
});

describe("loadGraph", () => {
  it("loads a graph of langgraph.json and refuses an unknown name with the known ones", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "tableminds-registry-"));
    mkdirSync(path.join(root, "graphs"));
    writeFileSync(
      path.join(root, "langgraph.json"),
      JSON.stringify({ graphs: { plain: "./graphs/plain.mjs:compiled" } }),
    );
    writeFileSync(
      path.join(root, "graphs/plain.mjs"),
      "export const compiled = { stream() {}, invoke() {}, getState() {} };\n",
    );
    const graph = await loadGraph("plain", { root });
    expect(typeof graph.invoke).toBe("function");
    await expect(
      loadGraph("plain", { root, persistence: { store: new InMemoryStore() } }),
    ).rejects.toThrow('langgraph.json: ./graphs/plain.mjs does not export "builder"');
    await expect(loadGraph("nope", { root })).rejects.toThrow(
      'unknown graph "nope"; langgraph.json has: plain',
    );
  });
});
