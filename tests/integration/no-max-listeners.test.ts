import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph as mcts } from "../../graphs/mcts/graph.js";
import { graph as mom } from "../../graphs/mom/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { branchTeam } from "../support/branch-team.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * A library user runs mom and mcts with graph.invoke and no signal of their own; Node must not
 * print "MaxListenersExceededWarning: Possible EventTarget memory leak detected" for it. The
 * warning is captured as any 'warning' listener sees it (nothing filters it).
 */

const fast = { maxCodeAttempts: 1, llmMaxRetries: 0, llmTimeoutMs: 10_000 };

describe("branches side by side leave no listener pile-up on a shared signal", () => {
  let stub: StubServer | undefined;
  const warnings: Error[] = [];
  const capture = (warning: Error) => warnings.push(warning);
  const piledUp = () =>
    warnings
      .filter((w) => w.name === "MaxListenersExceededWarning")
      .map((w) => w.message)
      .join("\n");

  beforeAll(() => {
    useTempHome();
    process.on("warning", capture);
  });

  afterEach(async () => {
    await stub?.close();
    warnings.length = 0;
  });

  afterAll(async () => {
    process.off("warning", capture);
    await closeSandboxes();
  });

  async function useTeam() {
    stub = await startStubOpenAI({ respond: branchTeam(Array(8).fill(203)) });
    useStubEndpoint(stub.url);
  }

  it("mom with 8 plans running at once", async () => {
    await useTeam();
    const state = await mom.invoke(MEDALS_INPUT, {
      context: { ...fast, plans: 8, maxConcurrency: 8 },
      maxConcurrency: 8,
    });
    expect(state.answer?.final).toBe("203");
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(piledUp()).toBe("");
  });

  it("mcts expanding several branches at once", async () => {
    await useTeam();
    const state = await mcts.invoke(
      { ...MEDALS_INPUT, gold: null },
      {
        context: { ...fast, searchBudget: 36, searchWidth: 6, maxConcurrency: 12 },
        maxConcurrency: 12,
      },
    );
    expect(state.answer?.final).toBe("203");
    await new Promise((resolve) => setImmediate(resolve));
    expect(piledUp()).toBe("");
  });
});
