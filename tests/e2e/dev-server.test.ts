import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../support/dev-server.js";
import { EXAMPLES, MEDALS_INPUT, stubEnv } from "../support/env.js";
import { FOLLOW_UP, followUpTeam, silverTotal } from "../support/follow-up.js";
import { MEDALS_CODE, MEDALS_QUESTION, orchestratedMedalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

describe("langgraph dev server", () => {
  let stub: StubServer;
  let server: DevServer;

  beforeAll(async () => {
    const orchestrated = orchestratedMedalsTeam();
    // The solve roles also answer a follow-up about silver; the orchestrator's own as before.
    const solving = followUpTeam();
    stub = await startStubOpenAI({
      respond: (req) =>
        ["planner", "coder", "answerer"].includes(req.role) ? solving(req) : orchestrated(req),
      idleTimeoutMs: 240_000,
    });
    server = await startDevServer({
      ...stubEnv(stub.url),
      // The operator lets runs read the example tables by path (a server reads none by default).
      TABLEMINDS_TABLE_ROOTS: EXAMPLES,
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

  it.each(["table_qa", "mom", "mcts", "orchestrator"])(
    "gives Studio %s's configuration form: every field with its default and description",
    async (graphId) => {
      const client = new Client({ apiUrl: server.url });
      const [assistant] = await client.assistants.search({ graphId });
      const schemas = await client.assistants.getSchemas(assistant?.assistant_id ?? "");
      const context = schemas.context_schema as { properties: Record<string, object> };
      expect(context?.properties?.temperature).toMatchObject({
        default: 0,
        description: "Sampling temperature",
      });
      expect(context.properties.review).toMatchObject({
        enum: ["off", "code", "answer", "both"],
        default: "off",
      });
      // Each graph's form: its own groups, not the other graphs' (nor the CLI's deadline).
      const own = {
        table_qa: "memoryK",
        mom: "plans",
        mcts: "searchBudget",
        orchestrator: "maxSubtasks",
      };
      for (const [graph, field] of Object.entries(own)) {
        if (graph === graphId) expect(context.properties).toHaveProperty(field);
        else expect(context.properties).not.toHaveProperty(field);
      }
      expect(context.properties).not.toHaveProperty("runTimeoutMs");
      expect(schemas.config_schema).toEqual(schemas.context_schema);
      expect(schemas.input_schema).toMatchObject({ properties: { question: {} } });
    },
    60_000,
  );

  it("draws table_qa with solve's nodes inside, the reviewers included", async () => {
    const client = new Client({ apiUrl: server.url });
    const [assistant] = await client.assistants.search({ graphId: "table_qa" });
    const drawn = await client.assistants.getGraph(assistant?.assistant_id ?? "", { xray: true });
    const ids = drawn.nodes.map((n) => String(n.id));
    expect(ids).toEqual(
      expect.arrayContaining(["ingest", "checker", "reviewer", "solve:planner", "solve:reviewer"]),
    );
  }, 60_000);

  it("pauses a run with review on and resumes it with approve, edit and reject", async () => {
    const client = new Client({ apiUrl: server.url });
    const context = { review: "both", memory: false, maxCodeAttempts: 2 };
    const thread = await client.threads.create();
    const pauseOf = async () => {
      const state = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
      return state.tasks.flatMap((t) => [
        ...t.interrupts,
        ...((t.state as { tasks?: typeof state.tasks } | null)?.tasks ?? []).flatMap(
          (inner) => inner.interrupts,
        ),
      ])[0]?.value as Record<string, unknown> | undefined;
    };
    const go = (body: object) =>
      client.runs.wait(thread.thread_id, "table_qa", { context, ...body });
    await go({ input: MEDALS_INPUT });
    expect(await pauseOf()).toMatchObject({ kind: "code", attempt: "a1" });
    await go({ command: { resume: { action: "reject", reason: "print less" } } });
    expect(await pauseOf()).toMatchObject({ kind: "code", attempt: "a2" });
    const edited = MEDALS_CODE.split("\n").slice(1, -1).join("\n");
    await go({ command: { resume: { action: "edit", value: edited } } });
    expect(await pauseOf()).toMatchObject({ kind: "answer", answer: "203" });
    const values = (await go({ command: { resume: "approve" } })) as {
      answer?: { final: string };
      attempts?: { id: string; result: { error: { type: string } | null } | null }[];
      reviews?: { id: string; action: string }[];
    };
    expect(await pauseOf()).toBeUndefined();
    expect(values.answer?.final, server.log().slice(-2000)).toBe("203");
    expect(values.attempts?.[0]?.result?.error?.type).toBe("Rejected");
    expect(values.reviews?.map((r) => [r.id, r.action])).toEqual([
      ["review:a1", "reject"],
      ["review:a2", "edit"],
      ["review:answer", "approve"],
    ]);
  }, 120_000);

  it("takes a new question on a finished thread as a follow-up, as Studio sends it", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const context = { memory: false, maxCodeAttempts: 2 };
    const ask = (input: Record<string, unknown>) =>
      client.runs.wait(thread.thread_id, "table_qa", { input, context }) as Promise<{
        answer?: { final: string };
        turns?: { question: string; answer: string; tables: { name: string }[] }[];
        attempts?: { id: string }[];
      }>;
    const first = await ask(MEDALS_INPUT);
    expect(first.answer?.final, server.log().slice(-2000)).toBe("203");
    const second = await ask({ question: FOLLOW_UP });
    expect(second.answer?.final, server.log().slice(-2000)).toBe(silverTotal());
    expect(second.turns?.map((t) => [t.question, t.answer])).toEqual([[MEDALS_QUESTION, "203"]]);
    expect(second.turns?.[0]?.tables.map((t) => t.name)).toEqual(["by_nation"]);
    expect(second.attempts?.map((a) => a.id)).toEqual(["a1"]);
  }, 120_000);

  it("pushes the table and answer views, and serves their components to Studio", async () => {
    const client = new Client({ apiUrl: server.url });
    const values = (await client.runs.wait(null, "table_qa", {
      input: MEDALS_INPUT,
      context: { memory: false },
    })) as { ui?: { name: string; props: { answer?: string; table?: string } }[] };
    const views = values.ui ?? [];
    expect(views.map((m) => m.name)).toEqual(["table", "answer"]);
    expect(views[0]?.props.table).toBe("olympics_2020_medals");
    expect(views[1]?.props.answer).toBe("203");
    // Studio asks for a component by the graph and its name, and loads the script it names.
    for (const graphId of ["table_qa", "mom", "mcts", "orchestrator"]) {
      const tags = await fetch(`${server.url}/ui/${graphId}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "answer" }),
      });
      expect(tags.status).toBe(200);
      const script = /<script src="([^"]+)"/.exec(await tags.text())?.[1];
      expect(script).toBeDefined();
      const code = await (await fetch(String(script))).text();
      expect(code).toContain("tm-grid");
    }
  }, 120_000);

  it("streams the custom events of a run", async () => {
    const client = new Client({ apiUrl: server.url });
    const events: unknown[] = [];
    for await (const part of client.runs.stream(null, "table_qa", {
      input: MEDALS_INPUT,
      context: { memory: false, check: false },
      streamMode: ["custom"],
      streamSubgraphs: true,
    })) {
      if (part.event.startsWith("custom")) events.push(part.data);
    }
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event: "plan" }),
        { event: "code", attempt: "a1", lines: 4 },
        expect.objectContaining({ event: "evidence" }),
      ]),
    );
  }, 120_000);
});
