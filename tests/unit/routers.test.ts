import { END } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { Attempt, ExecResult, Reflection } from "../../blackboard/schemas.js";
import {
  routeAfterExecutor,
  routeAfterPlanner,
  routeSolveStart,
} from "../../graphs/solve/graph.js";
import {
  RECURSION_LIMIT,
  routeAfterCheck,
  routeAfterFinalizer,
  routeAfterIngest,
  routeAfterSolve,
  stepBound,
} from "../../graphs/table_qa/graph.js";
import type { Configuration } from "../../settings/configuration.js";
import { verdict } from "../support/verdicts.js";

/** What a router receives beside the state: the run's context. */
function run(context: Partial<Configuration>) {
  return { context };
}

function attempts(maxCodeAttempts: number) {
  return run({ maxCodeAttempts });
}

function result(ok: boolean): ExecResult {
  return {
    ok,
    stdout: "",
    stderr: "",
    error: ok ? null : { type: "KeyError", message: "'x'", line: 1 },
    tables: [],
    spans: [],
    truncated: false,
    durationMs: 1,
    result: null,
  };
}

function attempt(id: string, ok: boolean): Attempt {
  return { id, code: "print(1)", raw: "", result: result(ok), parseError: null };
}

describe("routeAfterExecute", () => {
  it("answers after a successful run", () => {
    expect(
      routeAfterExecutor({ reflections: [], attempts: [attempt("a1", true)] }, attempts(3)),
    ).toBe("answerer");
  });

  it("codes again after a failure while attempts remain", () => {
    expect(
      routeAfterExecutor({ reflections: [], attempts: [attempt("a1", false)] }, attempts(3)),
    ).toBe("coder");
    expect(
      routeAfterExecutor(
        { reflections: [], attempts: [attempt("a1", false), attempt("a2", false)] },
        attempts(3),
      ),
    ).toBe("coder");
  });

  it("answers anyway when the attempts are used up", () => {
    const three = [attempt("a1", false), attempt("a2", false), attempt("a3", false)];
    expect(routeAfterExecutor({ reflections: [], attempts: three }, attempts(3))).toBe("answerer");
    expect(
      routeAfterExecutor({ reflections: [], attempts: [attempt("a1", false)] }, attempts(1)),
    ).toBe("answerer");
  });

  it("answers when a retry succeeded", () => {
    expect(
      routeAfterExecutor(
        { reflections: [], attempts: [attempt("a1", false), attempt("a2", true)] },
        attempts(3),
      ),
    ).toBe("answerer");
  });
});

describe("the check/reflect routers", () => {
  const passing = verdict("203");
  const failing = verdict("250", { grounding: 0 });
  const reflection = (afterAttempts: number, route: "planner" | "coder" = "coder"): Reflection => ({
    id: "r1",
    diagnosis: "d",
    improvement: [],
    route,
    verdict: failing,
    afterAttempts,
    byModel: true,
  });

  it("gives each round after a reflection its own code attempts", () => {
    const twoFailed = [attempt("a1", false), attempt("a2", false)];
    expect(routeAfterExecutor({ attempts: twoFailed, reflections: [] }, attempts(2))).toBe(
      "answerer",
    );
    const roundTwo = [...twoFailed, attempt("a3", false)];
    expect(
      routeAfterExecutor({ attempts: roundTwo, reflections: [reflection(2)] }, attempts(2)),
    ).toBe("coder");
    const roundTwoDone = [...roundTwo, attempt("a4", false)];
    expect(
      routeAfterExecutor({ attempts: roundTwoDone, reflections: [reflection(2)] }, attempts(2)),
    ).toBe("answerer");
  });

  it("checks only when checking is on", () => {
    expect(routeAfterSolve({}, run({ check: true }))).toBe("checker");
    expect(routeAfterSolve({}, run({ check: false }))).toBe("archiver");
  });

  it("recalls and archives only with memory on; without it a settled run ends", () => {
    const off = run({ memory: false });
    expect(routeAfterIngest({}, run({ memory: true }))).toBe("recall");
    expect(routeAfterIngest({}, off)).toBe("solve");
    expect(routeAfterSolve({}, run({ check: true, memory: false }))).toBe("checker");
    expect(routeAfterSolve({}, run({ check: false, memory: false }))).toBe(END);
    expect(routeAfterCheck({ verdict: passing, reflections: [] }, off)).toBe(END);
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, off)).toBe("reflector");
    expect(
      routeAfterCheck(
        { verdict: failing, reflections: [] },
        run({ maxReflections: 0, memory: false }),
      ),
    ).toBe("finalizer");
    expect(routeAfterFinalizer({}, run({ memory: true }))).toBe("archiver");
    expect(routeAfterFinalizer({}, off)).toBe(END);
  });

  it("settles an unchecked answer (prose with no claim to check) without reflecting on it", () => {
    const two = run({ maxReflections: 2 });
    const unchecked = { ...failing, unchecked: true };
    expect(routeAfterCheck({ verdict: unchecked, reflections: [] }, two)).toBe("archiver");
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, two)).toBe("reflector");
  });

  it("archives a pass, reflects on a fail while reflections remain, then settles", () => {
    const two = run({ maxReflections: 2 });
    expect(routeAfterCheck({ verdict: passing, reflections: [] }, two)).toBe("archiver");
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, two)).toBe("reflector");
    expect(routeAfterCheck({ verdict: failing, reflections: [reflection(1)] }, two)).toBe(
      "reflector",
    );
    expect(
      routeAfterCheck({ verdict: failing, reflections: [reflection(1), reflection(2)] }, two),
    ).toBe("finalizer");
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, run({ maxReflections: 0 }))).toBe(
      "finalizer",
    );
  });

  it("starts a solve where the reflector said, or at the coder when a plan is given", () => {
    expect(routeSolveStart({ plan: [], reflections: [] })).toBe("planner");
    expect(routeSolveStart({ plan: ["step"], reflections: [] })).toBe("coder");
    expect(routeSolveStart({ plan: ["step"], reflections: [reflection(1, "planner")] })).toBe(
      "planner",
    );
    expect(routeSolveStart({ plan: ["step"], reflections: [reflection(1, "coder")] })).toBe(
      "coder",
    );
  });

  it("bounds the steps of the largest run, in table_qa and in one solve", () => {
    // turn, ingest, recall, a solve, check and reflection per round, finalizer, archiver, presenter
    expect(stepBound({ maxCodeAttempts: 1, maxReflections: 0 })).toBe(9);
    expect(stepBound({ maxCodeAttempts: 3, maxReflections: 2 })).toBe(15);
    // plan, then code and run ten times, then answer: more than table_qa's own steps
    expect(stepBound({ maxCodeAttempts: 10, maxReflections: 0 })).toBe(23);
    expect(RECURSION_LIMIT).toBe(stepBound({ maxCodeAttempts: 10, maxReflections: 5 }));
  });
});

describe("a solve asked for one stage", () => {
  it("starts where the caller says and stops after the stage asked for", () => {
    expect(routeSolveStart({ plan: [], reflections: [], startAt: "answerer" })).toBe("answerer");
    expect(routeSolveStart({ plan: ["s"], reflections: [], startAt: "planner" })).toBe("planner");
    expect(routeAfterPlanner({ stopAfter: "planner" })).toBe(END);
    expect(routeAfterPlanner({ stopAfter: null })).toBe("coder");
    const ran = [attempt("a1", true)];
    expect(routeAfterExecutor({ reflections: [], attempts: ran, stopAfter: "executor" })).toBe(END);
    // A failing run is still retried before the solve stops.
    const failed = [attempt("a1", false)];
    expect(
      routeAfterExecutor({ reflections: [], attempts: failed, stopAfter: "executor" }, attempts(2)),
    ).toBe("coder");
  });
});
