import { END } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { Attempt, ExecResult, Reflection } from "../../blackboard/schemas.js";
import {
  RECURSION_LIMIT,
  routeAfterAnswer,
  routeAfterCheck,
  routeAfterExecute,
  routeAfterIngest,
  routeAfterReflect,
  stepBound,
  toMemory,
} from "../../graphs/table_qa.js";
import { verdict } from "../support/verdicts.js";

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
  };
}

function attempt(id: string, ok: boolean): Attempt {
  return { id, code: "print(1)", raw: "", result: result(ok), parseError: null };
}

describe("routeAfterExecute", () => {
  it("answers after a successful run", () => {
    expect(routeAfterExecute({ reflections: [], attempts: [attempt("a1", true)] }, 3)).toBe(
      "answerer",
    );
  });

  it("codes again after a failure while attempts remain", () => {
    expect(routeAfterExecute({ reflections: [], attempts: [attempt("a1", false)] }, 3)).toBe(
      "coder",
    );
    expect(
      routeAfterExecute(
        { reflections: [], attempts: [attempt("a1", false), attempt("a2", false)] },
        3,
      ),
    ).toBe("coder");
  });

  it("answers anyway when the attempts are used up", () => {
    const three = [attempt("a1", false), attempt("a2", false), attempt("a3", false)];
    expect(routeAfterExecute({ reflections: [], attempts: three }, 3)).toBe("answerer");
    expect(routeAfterExecute({ reflections: [], attempts: [attempt("a1", false)] }, 1)).toBe(
      "answerer",
    );
  });

  it("answers when a retry succeeded", () => {
    expect(
      routeAfterExecute(
        { reflections: [], attempts: [attempt("a1", false), attempt("a2", true)] },
        3,
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
    expect(routeAfterExecute({ attempts: twoFailed, reflections: [] }, 2)).toBe("answerer");
    const roundTwo = [...twoFailed, attempt("a3", false)];
    expect(routeAfterExecute({ attempts: roundTwo, reflections: [reflection(2)] }, 2)).toBe(
      "coder",
    );
    const roundTwoDone = [...roundTwo, attempt("a4", false)];
    expect(routeAfterExecute({ attempts: roundTwoDone, reflections: [reflection(2)] }, 2)).toBe(
      "answerer",
    );
  });

  it("checks only when checking is on", () => {
    expect(routeAfterAnswer(true, true)).toBe("checker");
    expect(routeAfterAnswer(false, true)).toBe("archiver");
  });

  it("recalls and archives only with memory on; without it a settled run ends", () => {
    expect(routeAfterIngest(true)).toBe("recall");
    expect(routeAfterIngest(false)).toBe("planner");
    expect(routeAfterAnswer(true, false)).toBe("checker");
    expect(routeAfterAnswer(false, false)).toBe(END);
    expect(routeAfterCheck({ verdict: passing, reflections: [] }, 2, false)).toBe(END);
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, 2, false)).toBe("reflector");
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, 0, false)).toBe("finalizer");
    expect(toMemory(true)).toBe("archiver");
    expect(toMemory(false)).toBe(END);
  });

  it("archives a pass, reflects on a fail while reflections remain, then settles", () => {
    expect(routeAfterCheck({ verdict: passing, reflections: [] }, 2, true)).toBe("archiver");
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, 2, true)).toBe("reflector");
    expect(routeAfterCheck({ verdict: failing, reflections: [reflection(1)] }, 2, true)).toBe(
      "reflector",
    );
    expect(
      routeAfterCheck({ verdict: failing, reflections: [reflection(1), reflection(2)] }, 2, true),
    ).toBe("finalizer");
    expect(routeAfterCheck({ verdict: failing, reflections: [] }, 0, true)).toBe("finalizer");
  });

  it("goes back where the reflector said", () => {
    expect(routeAfterReflect({ reflections: [reflection(1, "planner")] })).toBe("planner");
    expect(routeAfterReflect({ reflections: [reflection(1, "coder")] })).toBe("coder");
  });

  it("bounds the steps of the largest run", () => {
    expect(stepBound({ maxCodeAttempts: 1, maxReflections: 0 })).toBe(10);
    expect(stepBound({ maxCodeAttempts: 3, maxReflections: 2 })).toBe(34);
    expect(RECURSION_LIMIT).toBe(stepBound({ maxCodeAttempts: 10, maxReflections: 5 }));
  });
});
