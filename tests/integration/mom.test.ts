import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MomStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/mom.js";
import { closeSandboxes } from "../../tools/sandbox/index.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const input = {
  question: MEDALS_QUESTION,
  sources: [{ path: `${EXAMPLES}/olympics_2020_medals.csv` }],
};

describe("mom against the stub model", () => {
  let stub: StubServer;

  beforeAll(async () => {
    useTempHome();
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  it("solves eight branches and returns the majority's answer with its own evidence", async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    useStubEndpoint(stub.url);
    const state = (await graph.invoke(input, { context: { plans: 8 } })) as MomStateValue;
    const answered = state.branches.filter((b) => b.stage === "answer").map((b) => b.id);
    expect(answered.sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `p${i}.c1.a1`).sort());
    // Each stage a branch went through is a branch of its own, for a search to grow again.
    expect(state.branches).toHaveLength(24);
    expect(state.answer?.final).toBe("203");
    expect(state.ballot?.tally).toEqual([
      { normalized: "203", weight: 48, branches: expect.any(Array) },
    ]);
    expect(state.evidence.some((e) => e.id === "a1:out2")).toBe(true);
    expect(state.budget.llmCalls).toBe(24);
  });
});
