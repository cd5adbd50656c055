import { END } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { routeAfterVote } from "../../graphs/mom/graph.js";
import { routeAfterCheck, routeAfterFinalizer } from "../../graphs/table_qa/graph.js";
import { presentation, routeToPresenter } from "../../nodes/presenter.js";
import type { NodeRuntime } from "../../nodes/runtime.js";
import { enterServedMode, isServed } from "../../settings/operator.js";
import { verdict } from "../support/verdicts.js";

/*
 * A run goes through the presenter only when a client draws its answer: a run an API server
 * runs (it has a run id, in a served process). Every other run ends as it did without the step.
 * Served mode cannot be left, so this file has its own process.
 */

const runtime = (runId?: string) =>
  ({
    context: { memory: false },
    ...(runId ? { metadata: { run_id: runId } } : {}),
  }) as NodeRuntime;

describe("the presenter's route", () => {
  it("ends a run no client draws, in and out of served mode", () => {
    expect(isServed()).toBe(false);
    expect(presentation(runtime("r1"))).toBe(END);
    expect(presentation(undefined)).toBe(END);
    enterServedMode();
    // Served, but invoked directly (the MCP server): no run id, no one to draw it.
    expect(presentation(runtime())).toBe(END);
    expect(routeToPresenter({}, runtime())).toBe(END);
  });

  it("presents a run of an API server, from every graph's last router", () => {
    enterServedMode();
    const served = runtime("r1");
    expect(routeToPresenter({}, served)).toBe("presenter");
    expect(routeAfterFinalizer({}, served)).toBe("presenter");
    expect(routeAfterCheck({ verdict: verdict("203"), reflections: [] }, served)).toBe("presenter");
    const ballot = { tally: [], matches: [], winner: null, answer: null, method: "vote" };
    expect(
      routeAfterVote(
        { question: "How many?", ballot } as Parameters<typeof routeAfterVote>[0],
        served,
      ),
    ).toBe("presenter");
  });
});
