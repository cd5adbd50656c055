import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../support/dev-server.js";
import { MEDALS_INPUT, useTempHome } from "../support/env.js";
import { orchestratedMedalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

describe("langgraph dev server", () => {
  let stub: StubServer;
  let server: DevServer;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: orchestratedMedalsTeam(), idleTimeoutMs: 240_000 });
    server = await startDevServer({
      OPENAI_BASE_URL: stub.url,
      OPENAI_API_KEY: "test-key",
      TABLEMINDS_MODEL: "stub-model",
      TABLEMINDS_HOME: useTempHome(),
    });
  }, 150_000);

  afterAll(async () => {
    await server?.stop();
    await stub?.close();
  });

  it("serves table_qa and answers through runs/wait", async () => {
    const client = new Client({ apiUrl: server.url });
    const assistants = await client.assistants.search({ graphId: "table_qa" });
    expect(assistants.length).toBeGreaterThan(0);
    const values = (await client.runs.wait(null, "table_qa", {
      input: MEDALS_INPUT,
      context: { maxCodeAttempts: 2 },
    })) as { answer?: { final: string; evidence: string[] } };
    expect(values.answer?.final, server.log().slice(-2000)).toBe("203");
    expect(values.answer?.evidence).toContain("a1:out2");
  }, 120_000);

  it("says in one line what is wrong with a run's context, before any model call", async () => {
    const client = new Client({ apiUrl: server.url });
    const before = stub.requests.length;
    const values = (await client.runs.wait(null, "table_qa", {
      input: MEDALS_INPUT,
      context: { temperature: 7 },
      raiseError: false,
    })) as { __error__?: { message: string } };
    // runs/wait serializes the already serialized error again: the server's doing, not ours.
    const inner = JSON.parse(values.__error__?.message ?? "{}") as { message?: string };
    expect(inner.message).toBe(
      "invalid run configuration: temperature: Too big: expected number to be <=2",
    );
    expect(stub.requests.length).toBe(before);
  }, 120_000);

  it.each([
    ["mom", { plans: 2 }],
    ["mcts", { searchBudget: 8 }],
  ])(
    "serves %s and answers through runs/wait",
    async (graphId, context) => {
      const client = new Client({ apiUrl: server.url });
      const values = (await client.runs.wait(null, graphId, {
        input: MEDALS_INPUT,
        context,
      })) as { answer?: { final: string }; branches?: { id: string }[] };
      expect(values.answer?.final, server.log().slice(-2000)).toBe("203");
      expect(values.branches?.length).toBeGreaterThan(0);
    },
    120_000,
  );

  it("serves the orchestrator and answers through runs/wait with its workers' packets", async () => {
    const client = new Client({ apiUrl: server.url });
    const values = (await client.runs.wait(null, "orchestrator", {
      input: MEDALS_INPUT,
      context: { maxCodeAttempts: 2 },
    })) as { answer?: { final: string }; packets?: { id: string; answer: string }[] };
    expect(values.answer?.final, server.log().slice(-2000)).toBe("203");
    expect(values.packets?.map((p) => [p.id, p.answer])).toEqual([
      ["s1.pandas", "203"],
      ["s1.sql", "203"],
    ]);
  }, 120_000);
});
