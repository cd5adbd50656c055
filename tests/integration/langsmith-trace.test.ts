import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { Client } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { traceOf } from "../../evals/runner.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { type CaptureServer, startLangSmithCapture } from "../support/langsmith-capture.js";
import { medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

interface TracedRun {
  id: string;
  name: string;
  run_type: string;
  tags?: string[];
  extra?: { metadata?: Record<string, unknown> };
}

describe("a traced table_qa run, as LangSmith receives it", () => {
  let capture: CaptureServer;
  let stub: StubServer;
  let runs: TracedRun[];

  beforeAll(async () => {
    useTempHome();
    capture = await startLangSmithCapture();
    stub = await startStubOpenAI({ respond: medalsTeam() });
    useStubEndpoint(stub.url);
    const client = new Client({ apiUrl: capture.url, apiKey: "test", autoBatchTracing: false });
    const tracer = new LangChainTracer({ client, projectName: "tableminds-test" });
    const example = { id: "medals-1", dataset: "examples" };
    await graph.invoke(MEDALS_INPUT, {
      context: { memory: false },
      callbacks: [tracer],
      ...traceOf("table_qa", example),
    } as never);
    await awaitAllCallbacks();
    runs = capture.requests
      .filter((r) => r.method === "POST" && r.path === "/runs")
      .map((r) => r.body as TracedRun);
  }, 60_000);

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
    await capture?.close();
  });

  it("names each model call by its role, never by the client class", () => {
    const models = runs.filter((r) => r.run_type === "llm");
    expect(models.map((r) => r.name)).toEqual(["planner", "coder", "answerer"]);
    expect(runs.some((r) => r.name === "ChatOpenAI")).toBe(false);
    expect(models.every((r) => r.tags?.includes("model"))).toBe(true);
  });

  it("tags every run with the graph and dataset, and gives it the question's metadata", () => {
    const planner = runs.find((r) => r.run_type === "llm" && r.name === "planner");
    expect(planner?.tags).toEqual(expect.arrayContaining(["table_qa", "examples", "model"]));
    expect(planner?.extra?.metadata).toMatchObject({
      graph: "table_qa",
      dataset: "examples",
      question_id: "medals-1",
      try: 1,
      role: "planner",
      langgraph_node: "planner",
    });
    const coder = runs.find((r) => r.run_type === "llm" && r.name === "coder");
    expect(coder?.extra?.metadata).toMatchObject({ attempt: "a1", question_id: "medals-1" });
    const node = runs.find((r) => r.run_type !== "llm" && r.name === "executor");
    expect(node?.extra?.metadata).toMatchObject({ graph: "table_qa", question_id: "medals-1" });
  });

  it("ends the graph's run with the answer and the evidence ids it cites", () => {
    const root = runs.find((r) => r.name === "table_qa");
    const end = capture.requests.find(
      (r) => r.method === "PATCH" && r.path === `/runs/${root?.id}`,
    );
    const outputs = (end?.body as { outputs?: { answer?: { final: string; evidence: string[] } } })
      ?.outputs;
    expect(outputs?.answer?.final).toBe("203");
    expect(outputs?.answer?.evidence).toContain("a1:out2");
  });
});

describe("a traced mom run", () => {
  it("gives each branch's model calls the branch's id as metadata", async () => {
    useTempHome();
    const capture = await startLangSmithCapture();
    const stub = await startStubOpenAI({ respond: medalsTeam() });
    try {
      useStubEndpoint(stub.url);
      const { graph: mom } = await import("../../graphs/mom/graph.js");
      const client = new Client({ apiUrl: capture.url, apiKey: "test", autoBatchTracing: false });
      const tracer = new LangChainTracer({ client, projectName: "tableminds-test" });
      await mom.invoke(MEDALS_INPUT, {
        context: { plans: 2, maxCodeAttempts: 2 },
        callbacks: [tracer],
        ...traceOf("mom", { id: "medals-1", dataset: "examples" }),
      } as never);
      await awaitAllCallbacks();
      const models = capture.requests
        .filter((r) => r.method === "POST" && r.path === "/runs")
        .map((r) => r.body as TracedRun)
        .filter((r) => r.run_type === "llm");
      const branchesOf = (role: string) =>
        models
          .filter((r) => r.name === role)
          .map((r) => r.extra?.metadata?.branch)
          .sort();
      // A stage's calls carry the id of the branch that stage grows.
      expect(branchesOf("planner")).toEqual(["p1", "p2"]);
      expect(branchesOf("coder")).toEqual(["p1.c1", "p2.c1"]);
      expect(branchesOf("answerer")).toEqual(["p1.c1.a1", "p2.c1.a1"]);
      expect(models.every((r) => r.extra?.metadata?.graph === "mom")).toBe(true);
    } finally {
      await closeSandboxes();
      await stub.close();
      await capture.close();
    }
  }, 60_000);
});
