import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MctsStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/mcts.js";
import { closeSandboxes } from "../../tools/sandbox/index.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const input = {
  question: MEDALS_QUESTION,
  sources: [{ path: `${EXAMPLES}/olympics_2020_medals.csv` }],
};

describe("mcts against the stub model", () => {
  let stub: StubServer;

  beforeAll(() => {
    useTempHome();
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  it("searches within its budget and returns the best answer with the tree", async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    useStubEndpoint(stub.url);
    const state = (await graph.invoke(
      { ...input, gold: "203" },
      { context: { searchBudget: 20, maxConcurrency: 4, maxCodeAttempts: 2 } },
    )) as MctsStateValue;
    expect(state.answer?.final).toBe("203");
    expect(stub.requests.length).toBeLessThanOrEqual(20);
    const root = state.tree.find((n) => n.id === "root");
    expect(root?.visits).toBeGreaterThan(0);
    console.log(
      JSON.stringify(state.tree.map((n) => [n.id, n.visits, n.value, n.children.length])),
    );
  });
});
