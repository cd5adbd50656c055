import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { medalsTeam } from "../support/scripts.js";
import { type StubReply, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const input = MEDALS_INPUT;
const fast = { llmMaxRetries: 1, llmTimeoutMs: 3_000, maxCodeAttempts: 2 };

describe("table_qa under model faults", () => {
  let stub: StubServer | undefined;

  beforeAll(() => {
    useTempHome();
  });

  afterEach(async () => {
    await stub?.close();
  });

  afterAll(async () => {
    await closeSandboxes();
  });

  async function run(planner: (n: number) => StubReply) {
    const team = medalsTeam();
    let plannerCalls = 0;
    stub = await startStubOpenAI({
      respond: (req) => (req.role === "planner" ? planner(plannerCalls++) : team(req)),
    });
    useStubEndpoint(stub.url);
    return graph.invoke(input, withContext(fast)) as Promise<TableQAStateValue>;
  }

  it("retries a 500 and then succeeds", async () => {
    const state = await run((n) =>
      n === 0 ? { status: 500, content: "overloaded" } : "<plan>\n1. Sum gold.\n</plan>",
    );
    expect(state.answer?.final).toBe("203");
    expect(stub?.requests.filter((r) => r.role === "planner")).toHaveLength(2);
  });

  it("fails clearly, without hanging, when the model answers prose with no plan", async () => {
    const started = Date.now();
    await expect(run(() => "I would rather talk about the weather.")).rejects.toThrow(
      /planner reply has no plan/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("fails clearly, without hanging, when the server sends a malformed body", async () => {
    const started = Date.now();
    await expect(run(() => ({ malformed: true }))).rejects.toThrow(/planner model/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("answers from what it has when every code attempt fails", async () => {
    const team = medalsTeam(() => '```python\nraise ValueError("no luck")\n```');
    stub = await startStubOpenAI({
      respond: (req) => (req.role === "answerer" ? "Final Answer: cannot be computed" : team(req)),
    });
    useStubEndpoint(stub.url);
    const state = (await graph.invoke(input, withContext(fast))) as TableQAStateValue;
    // Each of the three rounds (the first and two reflections) gets its own two attempts.
    expect(state.attempts).toHaveLength(6);
    expect(state.attempts.every((a) => a.result?.error?.type === "ValueError")).toBe(true);
    expect(state.answer?.final).toBe("cannot be computed");
    expect(state.answer?.evidence).toEqual([]);
    // The reflector has no script (the stub answers 500): its diagnosis comes from the verdict.
    expect(state.reflections.map((r) => r.byModel)).toEqual([false, false]);
    expect(state.verdict?.pass).toBe(false);
    expect(state.verdict?.issues.join("\n")).toMatch(/refusal/);
  });

  it("refuses an empty question before asking any model anything", async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    useStubEndpoint(stub.url);
    await expect(graph.invoke({ ...input, question: " \n " }, withContext(fast))).rejects.toThrow(
      "the question is empty: ask something about the table",
    );
    expect(stub.requests).toEqual([]);
  });

  it("says in one line what is wrong with a run configuration", async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    useStubEndpoint(stub.url);
    const bad = { ...fast, temperature: 7, maxCodeAttempts: 0 };
    await expect(graph.invoke(input, withContext(bad))).rejects.toThrow(
      /^invalid run configuration: temperature: Too big: expected number to be <=2; maxCodeAttempts: Too small: expected number to be >=1$/,
    );
    expect(stub.requests).toEqual([]);
  });
});
