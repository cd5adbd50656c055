import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { builder as mctsBuilder } from "../../graphs/mcts/graph.js";
import type { MctsStateValue } from "../../graphs/mcts/state.js";
import { builder as momBuilder } from "../../graphs/mom/graph.js";
import type { MomStateValue } from "../../graphs/mom/state.js";
import { builder as orchestratorBuilder } from "../../graphs/orchestrator/graph.js";
import type { OrchestratorStateValue } from "../../graphs/orchestrator/state.js";
import { builder as tableQaBuilder } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { FOLLOW_UP, followUpTeam, promptsOf, silverTotal } from "../support/follow-up.js";
import { lastMessage, MEDALS_QUESTION } from "../support/scripts.js";
import { type StubRequest, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The SDK's way to follow up: a second invoke on the same thread with only a new question.
 * LangGraph merges it into the thread's saved state; the graph takes it as the next turn.
 */

const fast: Partial<Configuration> = {
  maxCodeAttempts: 2,
  llmMaxRetries: 0,
  llmTimeoutMs: 10_000,
  memory: false,
};

describe("a follow-up question on a thread, through the graph API", () => {
  let stub: StubServer;

  beforeAll(async () => {
    useTempHome();
    const team = followUpTeam();
    // The orchestrator's decomposer hands the question as it reads it to the pandas worker.
    const decompose = (req: StubRequest) => {
      const task = /^Question: (.*)$/m.exec(lastMessage(req))?.[1];
      return JSON.stringify({ subtasks: [{ id: "s1", task, workers: ["pandas"] }] });
    };
    stub = await startStubOpenAI({
      respond: (req) => (req.role === "decomposer" ? decompose(req) : team(req)),
    });
    useStubEndpoint(stub.url);
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  it("table_qa: answers the follow-up from the earlier turn, its answer and the table it left", async () => {
    const graph = tableQaBuilder.compile({ checkpointer: new MemorySaver() });
    const run = (input: Record<string, unknown>) =>
      graph.invoke(input, {
        context: fast as Configuration,
        configurable: { thread_id: "qa" },
      }) as Promise<TableQAStateValue>;

    const first = await run(MEDALS_INPUT);
    expect(first.answer?.final).toBe("203");
    expect(first.turns).toEqual([]);

    const before = stub.requests.length;
    const second = await run({ question: FOLLOW_UP });
    expect(second.answer?.final).toBe(silverTotal());
    expect(second.verdict?.pass).toBe(true);
    // The earlier turn, archived; this turn's own trajectory only.
    expect(second.turns).toHaveLength(1);
    expect(second.turns[0]).toMatchObject({
      id: "turn1",
      question: MEDALS_QUESTION,
      answer: "203",
      passed: true,
    });
    expect(second.turns[0]?.evidence).toContain("a1:out2");
    expect(second.turns[0]?.tables.map((t) => t.name)).toEqual(["by_nation"]);
    expect(second.attempts.map((a) => a.id)).toEqual(["a1"]);
    expect(second.attempts[0]?.code).toContain("silver");
    expect(second.evidence.find((e) => e.id === "a1:out1")?.value).toBe("nations as before: 10");
    expect(second.tables.map((t) => t.name)).toEqual(["olympics_2020_medals", "by_nation"]);
    expect(second.budget.llmCalls).toBe(3);
    // The planner and the coder were told what was asked and answered before.
    for (const role of ["planner", "coder"]) {
      const [prompt] = promptsOf(stub.requests, role, before);
      expect(prompt, role).toContain("Earlier in this conversation");
      expect(prompt, role).toContain(`1. Question: ${MEDALS_QUESTION}\n   Answer: 203`);
      expect(prompt, role).toContain("`by_nation`");
      expect(prompt, role).toMatch(new RegExp(`^Question: ${FOLLOW_UP.replace("?", "\\?")}$`, "m"));
    }
  });

  it("mom: every branch answers the follow-up with the conversation, and the vote settles it", async () => {
    const graph = momBuilder.compile({ checkpointer: new MemorySaver() });
    const run = (input: Record<string, unknown>) =>
      graph.invoke(input, {
        context: { ...fast, plans: 2 } as Configuration,
        configurable: { thread_id: "mom" },
      }) as Promise<MomStateValue>;

    const first = await run(MEDALS_INPUT);
    expect(first.answer?.final).toBe("203");

    const before = stub.requests.length;
    const second = await run({ question: FOLLOW_UP });
    expect(second.answer?.final).toBe(silverTotal());
    expect(second.turns.map((t) => [t.question, t.answer])).toEqual([[MEDALS_QUESTION, "203"]]);
    // The earlier turn's branches and ballot are gone; the new ones are this question's.
    const answered = second.branches.filter((b) => b.stage === "answer");
    expect(answered.map((b) => b.id)).toEqual(["p1.c1.a1", "p2.c1.a1"]);
    expect(answered.every((b) => b.answer?.final === silverTotal())).toBe(true);
    expect(second.branches).toHaveLength(6);
    expect(second.ballot?.tally).toHaveLength(1);
    expect(second.budget.llmCalls).toBe(6);
    const planners = promptsOf(stub.requests, "planner", before);
    const coders = promptsOf(stub.requests, "coder", before);
    expect(planners).toHaveLength(2);
    expect(coders).toHaveLength(2);
    for (const prompt of [...planners, ...coders]) {
      expect(prompt).toContain(`1. Question: ${MEDALS_QUESTION}\n   Answer: 203`);
    }
  });

  it("orchestrator and mcts: a follow-up starts afresh (subtasks, packets, search budget) with the conversation", async () => {
    const orchestrator = orchestratorBuilder.compile({ checkpointer: new MemorySaver() });
    const asked = { context: fast as Configuration, configurable: { thread_id: "orchestrator" } };
    await orchestrator.invoke(MEDALS_INPUT, asked);
    const before = stub.requests.length;
    const followed = (await orchestrator.invoke(
      { question: FOLLOW_UP },
      asked,
    )) as OrchestratorStateValue;
    expect(followed.answer?.final).toBe(silverTotal());
    expect(followed.turns.map((t) => t.answer)).toEqual(["203"]);
    expect([followed.subtasks.length, followed.packets.length, followed.round]).toEqual([1, 1, 1]);
    const [decomposer] = promptsOf(stub.requests, "decomposer", before);
    expect(decomposer).toContain(`1. Question: ${MEDALS_QUESTION}\n   Answer: 203`);

    const mcts = mctsBuilder.compile({ checkpointer: new MemorySaver() });
    const searched = {
      context: { ...fast, searchBudget: 6 } as Configuration,
      configurable: { thread_id: "mcts" },
    };
    await mcts.invoke(MEDALS_INPUT, searched);
    const next = (await mcts.invoke({ question: FOLLOW_UP }, searched)) as MctsStateValue;
    expect(next.answer?.final).toBe(silverTotal());
    // The search budget is the new question's own: spent afresh, not used up by the first.
    expect(next.budget.llmCalls).toBe(6);
    expect(next.branches.every((b) => !b.answer || b.answer.final === silverTotal())).toBe(true);
  });
});
