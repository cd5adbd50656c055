import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph, stepBound } from "../../graphs/mcts/graph.js";
import type { MctsStateValue } from "../../graphs/mcts/state.js";
import { closeSandboxes } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { branchOf, branchTeam } from "../support/branch-team.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const input = MEDALS_INPUT;

describe("mcts against the stub model", () => {
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

  async function search(values: (number | null)[], context: Partial<Configuration>, gold?: string) {
    stub = await startStubOpenAI({ respond: branchTeam(values), latencyMs: 20 });
    useStubEndpoint(stub.url);
    const config = { maxCodeAttempts: 1, llmMaxRetries: 0, ...context };
    return (await graph.invoke(
      { ...input, gold: gold ?? null },
      { context: config, maxConcurrency: config.maxConcurrency },
    )) as MctsStateValue;
  }

  const visits = (state: MctsStateValue, id: string) =>
    state.tree.find((node) => node.id === id)?.visits ?? 0;

  it("with a gold answer, concentrates its visits on the plan that reaches it", async () => {
    const state = await search(
      [150, 203, 999],
      {
        searchBudget: 30,
        searchWidth: 3,
        maxConcurrency: 3,
        exploration: 0.5,
      },
      "203",
    );
    expect(state.answer?.final).toBe("203");
    expect(state.plan).toEqual(["Use variant 2 of the sum."]);
    expect(visits(state, "p2")).toBeGreaterThan(visits(state, "p1"));
    expect(visits(state, "p2")).toBeGreaterThan(visits(state, "p3"));
    const root = state.tree.find((node) => node.id === "root");
    expect(root?.children).toEqual(["p1", "p2", "p3"]);
    // Every answer found was backed up once through the root.
    const answers = state.tree.filter((node) => node.stage === "answer");
    expect(root?.visits).toBe(answers.length);
    expect(root?.value).toBe(answers.filter((a) => a.reward === 1).length);
  });

  it("never exceeds its budget of model calls or its concurrency", async () => {
    const state = await search([203, 150, 203, 150], {
      searchBudget: 17,
      searchWidth: 4,
      maxConcurrency: 2,
    });
    expect(stub?.requests.length).toBeLessThanOrEqual(17);
    expect(state.budget.llmCalls).toBe(stub?.requests.length);
    expect(stub?.inFlight().most).toBeLessThanOrEqual(2);
    // Without gold the reward is the check and the agreement between answers.
    const rewards = state.tree.filter((n) => n.stage === "answer").map((n) => n.reward);
    expect(rewards.every((r) => r !== null && r > 0 && r <= 1)).toBe(true);
  });

  it("starts a new branch as soon as a slot frees, while a slow branch still runs", async () => {
    const team = branchTeam([203, 203, 203]);
    let release: (why: string) => void = () => {};
    const released = new Promise<string>((resolve) => {
      release = resolve;
    });
    // Only a safety net: without slots refilled, p1 would wait for p3, which waits for p1.
    const fallback = setTimeout(() => release("gave up waiting for p3"), 15_000);
    const seen: string[] = [];
    stub = await startStubOpenAI({
      latencyMs: 20,
      respond: (req) => {
        const rollout = branchOf(req);
        seen.push(`${req.role} ${rollout}`);
        if (rollout === "p3.c1.a1") release("p3 started");
        const reply = team(req);
        // p1's plan comes back only once p3 has started.
        if (rollout === "p1.c1.a1" && req.role === "planner" && typeof reply === "string") {
          return { content: reply, until: released };
        }
        return reply;
      },
    });
    useStubEndpoint(stub.url);
    const context = {
      maxCodeAttempts: 1,
      llmMaxRetries: 0,
      searchBudget: 9,
      searchWidth: 3,
      maxConcurrency: 2,
    };
    const state = (await graph.invoke(
      { ...input, gold: "203" },
      // The whole search is one step: the limit is the longest of the graph and a branch's solve.
      { context, maxConcurrency: 2, recursionLimit: stepBound(context) },
    )) as MctsStateValue;
    clearTimeout(fallback);
    expect(await released).toBe("p3 started");
    // p2 ran its whole rollout and p3 took its slot, all while p1 waited for its plan.
    expect(seen.indexOf("planner p3.c1.a1")).toBeGreaterThan(seen.indexOf("answerer p2.c1.a1"));
    expect(seen.indexOf("planner p3.c1.a1")).toBeLessThan(seen.indexOf("coder p1.c1.a1"));
    expect(stub?.inFlight().most).toBeLessThanOrEqual(2);
    expect(state.budget.llmCalls).toBe(9);
    expect(state.tree.find((n) => n.id === "root")?.children).toEqual(["p1", "p2", "p3"]);
  });

  it("grows Mixture-of-Minds' fixed-width rollouts for the coder stage", async () => {
    const state = await search([203], { searchMode: "coder", searchBudget: 64 });
    const codes = state.branches.filter((b) => b.stage === "code").map((b) => b.id);
    expect(codes.sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((c) => `p1.c${c}`).sort());
    // 1 plan, 8 codes, 8 answers; each answer backed up through its code and the plan.
    expect(stub?.requests).toHaveLength(17);
    expect(visits(state, "p1")).toBe(8);
  });
});
