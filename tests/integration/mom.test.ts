import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph } from "../../graphs/mom/graph.js";
import type { MomStateValue } from "../../graphs/mom/state.js";
import { runLimits } from "../../graphs/registry.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { type Configuration, ensureConfiguration } from "../../settings/configuration.js";
import { branchOf, branchTeam } from "../support/branch-team.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { lastMessage } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

const input = MEDALS_INPUT;
const fast: Partial<Configuration> = { maxCodeAttempts: 2, llmMaxRetries: 0, llmTimeoutMs: 10_000 };

describe("mom against the stub model", () => {
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

  async function run(
    respond: (req: StubRequest) => StubReply,
    context: Partial<Configuration>,
    options: { latencyMs?: number; signal?: AbortSignal } = {},
  ): Promise<MomStateValue> {
    stub = await startStubOpenAI({ respond, latencyMs: options.latencyMs });
    useStubEndpoint(stub.url);
    return (await graph.invoke(input, {
      context: { ...fast, ...context },
      maxConcurrency: context.maxConcurrency,
      signal: options.signal,
    })) as MomStateValue;
  }

  it("returns the majority's answer over the first branch's, with the winner's own evidence", async () => {
    const state = await run(branchTeam([999, 203, 203, 203, 203, 150, 150, 150]), { plans: 8 });
    expect(state.answer?.final).toBe("203");
    expect(state.ballot).toMatchObject({ winner: "p2.c1.a1", method: "majority" });
    expect(state.ballot?.tally.map((t) => [t.normalized, t.branches.length])).toEqual([
      ["999", 1],
      ["203", 4],
      ["150", 3],
    ]);
    // The run's trajectory is the winner's: its plan, its code, its evidence.
    expect(state.plan).toEqual(["Use variant 2 of the sum."]);
    expect(state.attempts.at(-1)?.code).toContain("+ 203");
    expect(state.evidence.find((e) => e.id === "a1:out1")?.value).toBe(203);
    // Every branch stays, attributed: its plan is its own.
    const p1 = state.branches.find((b) => b.id === "p1.c1.a1");
    expect(p1?.plan).toEqual(["Use variant 1 of the sum."]);
    expect(p1?.answer?.final).toBe("999");
    // Sampled: the planners at 1.0 with each branch's own seed; the coder and answerer at 0.
    const planners = stub?.requests.filter((r) => r.role === "planner") ?? [];
    expect(new Set(planners.map((r) => r.body.seed)).size).toBe(8);
    expect(planners.every((r) => r.body.temperature === 1)).toBe(true);
    const coders = stub?.requests.filter((r) => r.role === "coder") ?? [];
    expect(coders.every((r) => r.body.temperature === 0)).toBe(true);
    // Three calls a branch, all counted.
    expect(state.budget.llmCalls).toBe(24);
    expect(stub?.requests).toHaveLength(24);
  });

  it("breaks a tie for the answer seen first", async () => {
    const state = await run(branchTeam([150, 203, 203, 150]), { plans: 4 });
    expect(state.ballot?.tally.map((t) => t.weight)).toEqual([12, 12]);
    expect(state.ballot?.winner).toBe("p1.c1.a1");
    expect(state.answer?.final).toBe("150");
  });

  it("is not held up by a branch whose code keeps failing", async () => {
    const state = await run(branchTeam([null, 203, 203]), { plans: 3 });
    const failing = state.branches.find((b) => b.id === "p1.c1.a1");
    expect(failing?.attempts.map((a) => a.result?.error?.type)).toEqual([
      "ValueError",
      "ValueError",
    ]);
    expect(failing?.verdict?.pass).toBe(false);
    expect(state.answer?.final).toBe("203");
  });

  it("settles different answers by a knockout with a bye when a judge is asked for", async () => {
    const team = branchTeam([999, 203, 150]);
    const judge = (req: StubRequest): StubReply => {
      const prompt = lastMessage(req);
      const a = /Answer A: (.*)/.exec(prompt)?.[1];
      return `Winner: ${a === "203" ? "A" : "B"}`;
    };
    const state = await run((req) => (req.role === "judge" ? judge(req) : team(req)), {
      plans: 3,
      judge: "always",
    });
    expect(state.ballot?.method).toBe("judge");
    expect(state.ballot?.matches).toEqual([
      { a: "p1.c1.a1", b: "p2.c1.a1", winner: "p2.c1.a1" },
      { a: "p2.c1.a1", b: "p3.c1.a1", winner: "p2.c1.a1" },
    ]);
    expect(state.answer?.final).toBe("203");
    expect(stub?.requests.filter((r) => r.role === "judge")).toHaveLength(2);
    expect(state.budget.llmCalls).toBe(11);
  });

  it("grows codes for each plan and answers for each code, plans x codes x answers", async () => {
    const state = await run(branchTeam([203, 150]), {
      plans: 2,
      codesPerPlan: 2,
      answersPerCode: 2,
    });
    const answered = state.branches.filter((b) => b.stage === "answer").map((b) => b.id);
    expect(answered.sort()).toEqual([
      "p1.c1.a1",
      "p1.c1.a2",
      "p1.c2.a1",
      "p1.c2.a2",
      "p2.c1.a1",
      "p2.c1.a2",
      "p2.c2.a1",
      "p2.c2.a2",
    ]);
    // 2 plans, 4 codes, 8 answers.
    expect(stub?.requests).toHaveLength(14);
    const answerers = stub?.requests.filter((r) => r.role === "answerer") ?? [];
    expect(new Set(answerers.map((r) => branchOf(r))).size).toBe(8);
    expect(answerers.every((r) => r.body.temperature === 1)).toBe(true);
    expect(state.ballot?.tally.map((t) => t.branches.length)).toEqual([4, 4]);
  });

  it("runs no more branches at once than maxConcurrency", async () => {
    await run(
      branchTeam([203, 203, 203, 203, 203, 203]),
      { plans: 6, maxConcurrency: 2 },
      {
        latencyMs: 60,
      },
    );
    expect(stub?.inFlight().most).toBe(2);
  });

  it("stops every branch when the run is cancelled", async () => {
    const controller = new AbortController();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const team = branchTeam([203, 203, 203, 203]);
    const pending = run(
      (req) => {
        if (req.role !== "planner") return team(req);
        if (stub?.requests.filter((r) => r.role === "planner").length === 4) controller.abort();
        return { content: String(team(req)), until: held };
      },
      { plans: 4 },
      { signal: controller.signal },
    );
    await expect(pending).rejects.toThrow(/abort/i);
    release();
    const deadline = Date.now() + 10_000;
    while ((stub?.inFlight().now ?? 0) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(stub?.inFlight().now).toBe(0);
    expect(stub?.requests.filter((r) => r.role !== "planner")).toEqual([]);
  });
  it("runs every branch when asked to run one at a time (LangGraph drops a fan-out at 1)", async () => {
    const context = { ...fast, plans: 3, maxConcurrency: 1 };
    const limits = await runLimits("mom", ensureConfiguration(context));
    expect(limits.maxConcurrency).toBe(2);
    stub = await startStubOpenAI({ respond: branchTeam([203, 203, 150]) });
    useStubEndpoint(stub.url);
    const state = (await graph.invoke(input, { context, ...limits })) as MomStateValue;
    expect(state.branches.filter((b) => b.stage === "answer")).toHaveLength(3);
    expect(state.answer?.final).toBe("203");
    expect(stub.inFlight().most).toBeLessThanOrEqual(2);
  });
});
