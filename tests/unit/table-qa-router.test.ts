import { describe, expect, it } from "vitest";
import type { Attempt, ExecResult } from "../../blackboard/schemas.js";
import { routeAfterExecute } from "../../graphs/table_qa.js";

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
