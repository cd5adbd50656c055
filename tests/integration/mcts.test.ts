import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Configuration } from "../../blackboard/configuration.js";
import type { MctsStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/mcts.js";
import { closeSandboxes } from "../../tools/sandbox/index.js";
import { branchTeam } from "../support/branch-team.js";
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

  it("grows Mixture-of-Minds' fixed-width rollouts for the coder stage", async () => {
    const state = await search([203], { searchMode: "coder", searchBudget: 64 });
    const codes = state.branches.filter((b) => b.stage === "code").map((b) => b.id);
    expect(codes.sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((c) => `p1.c${c}`).sort());
    // 1 plan, 8 codes, 8 answers; each answer backed up through its code and the plan.
    expect(stub?.requests).toHaveLength(17);
    expect(visits(state, "p1")).toBe(8);
  });
});
