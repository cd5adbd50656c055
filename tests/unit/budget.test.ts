import { describe, expect, it } from "vitest";
import type { Attempt, Verdict } from "../../blackboard/schemas.js";
import { outOfBudget } from "../../cli/budget.js";

const question = "How many gold medals in total?";

function ran(text: string): Attempt {
  return {
    id: "a1",
    code: "result = 1",
    raw: "",
    parseError: null,
    result: {
      ok: true,
      stdout: "",
      stderr: "",
      error: null,
      tables: [],
      durationMs: 1,
      result: {
        from: "declared",
        kind: "scalar",
        values: [Number(text)],
        labels: [],
        text,
        line: 1,
        derived: "yes",
        derivation: "",
      },
    } as unknown as Attempt["result"],
  };
}

describe("a run stopped by its local budget", () => {
  it("offers the answer it had, not sure, keeping the verdict given on it", () => {
    const verdict = { answer: "203", pass: true, sure: true, issues: [] } as unknown as Verdict;
    const out = outOfBudget(
      { question, answer: { raw: "", final: "203", evidence: ["a1:result"] }, verdict },
      30_000,
    );
    expect(out.answer?.final).toBe("203");
    expect(out.verdict).toMatchObject({ pass: true, sure: false });
    expect(out.verdict?.issues).toEqual(["the run's budget of 30 s (localBudgetMs) ran out"]);
  });

  it("offers the code's last result when no answer was given, unchecked and not sure", () => {
    const out = outOfBudget({ question, attempts: [ran("203")] }, 1500);
    expect(out.answer).toEqual({ raw: "203", final: "203", evidence: [] });
    expect(out.verdict).toMatchObject({
      pass: false,
      sure: false,
      support: "none",
      expectedType: "number",
    });
    expect(out.verdict?.issues[0]).toBe(
      "the run's budget of 1.5 s (localBudgetMs) ran out before this answer was checked",
    );
  });

  it("says there was no answer at all when nothing ran, and drops a verdict on another answer", () => {
    const stale = { answer: "14", pass: false, sure: false, issues: ["x"] } as unknown as Verdict;
    const out = outOfBudget({ question, attempts: [], verdict: stale }, 1000);
    expect(out.answer?.final).toBe("");
    expect(out.verdict?.issues).toEqual([
      "the run's budget of 1 s (localBudgetMs) ran out before any answer",
    ]);
  });
});
