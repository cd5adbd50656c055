import { describe, expect, it } from "vitest";
import { describeEvent, describePause } from "../../cli/events.js";
import { insideBranch, progressLine } from "../../nodes/progress.js";
import { ranAttempt } from "../support/evidence.js";

describe("progress lines", () => {
  it("are labelled with the node's name, and say the executor's time is the code's own", () => {
    const { attempt } = ranAttempt("a1", "print(1)", "1\n");
    const line = progressLine("executor", { attempts: [attempt] });
    expect(line).toBe("executor   a1 ok, the code ran 5 ms: 1 output line, 0 tables");
  });

  it("say nothing for a subgraph's own update; its nodes speak for themselves", () => {
    const { attempt } = ranAttempt("a1", "print(1)", "1\n");
    expect(progressLine("solve", { attempts: [attempt], plan: ["x"] })).toBeNull();
  });

  it("tell the orchestrator's split, rounds, packets and choice, and nothing from inside a worker", () => {
    const packet = {
      id: "s1.sql",
      subtask: "s1",
      worker: "sql",
      answer: "750",
      evidence: [],
      trajectory: [],
      score: 0.9,
      cost: { llmCalls: 1, ms: 5 },
      error: null,
    };
    const subtasks = [
      { id: "s1", task: "t", workers: ["sql", "pandas"], dependsOn: [], args: {} },
      { id: "s2", task: "u", workers: ["calc"], dependsOn: ["s1"], args: {} },
    ];
    expect(progressLine("decomposer", { subtasks } as never)).toBe(
      "decomposer 2 subtasks: s1 [sql, pandas]; s2 [calc] after s1",
    );
    expect(
      progressLine("dispatcher", {
        round: 1,
        dispatching: [{ subtask: "s1", worker: "sql" }],
        packets: [{ ...packet, id: "s3.calc", answer: null, error: "not run: s1 found no answer" }],
      } as never),
    ).toBe("dispatcher s3.calc: not run: s1 found no answer\ndispatcher round 1: s1.sql");
    expect(progressLine("worker", { packets: [packet] } as never)).toBe(
      "worker     s1.sql answered 750 (score 0.90)",
    );
    const selection = {
      packets: ["s1.sql"],
      coverage: 0.5,
      conflict: 0,
      cost: 0.1,
      objective: 0.4,
      uncovered: ["s2"],
      conflicts: [
        {
          subtask: "s1",
          packets: ["s1.sql", "s1.pandas"],
          answers: ["750", "430"],
          kept: "s1.sql",
        },
      ],
    };
    expect(progressLine("selector", { selection } as never)).toBe(
      "selector   kept s1.sql (50% covered; s1 disputed (750 vs 430), kept s1.sql)",
    );
    expect(insideBranch(["worker:abc"])).toBe(true);
    expect(insideBranch(["solve:abc"])).toBe(false);
  });

  it("tell the custom events under the node that sent them, the live ones only when asked", () => {
    const code = { event: "code", attempt: "a2", lines: 4 };
    expect(describeEvent(code)).toBe("executor   a2 running 4 lines of python");
    const ids = ["a2:out1", "a2:out2", "a2:t1", "a2:t2", "a2:t3", "a2:t4", "a2:t5"];
    expect(describeEvent({ event: "evidence", ids })).toBe(
      "executor   evidence a2:out1, a2:out2, a2:t1, a2:t2, a2:t3, a2:t4 and 1 more",
    );
    const failed = { event: "attempt-failed", attempt: "a1", error: "KeyError: 'golds'" };
    expect(describeEvent(failed)).toBe("executor   a1 failed: KeyError: 'golds'");
    const plan = { event: "plan", steps: ["a", "b"] };
    expect(describeEvent(plan)).toBe("planner    plan of 2 steps");
    expect(describeEvent(plan, { live: true })).toBeNull();
    const vote = { event: "vote", answer: "203", winner: "p2.c1.a1", votes: 3, of: 4 };
    expect(describeEvent(vote)).toBe("vote       203: 3 of 4 branches (p2.c1.a1)");
    const review = { event: "review", kind: "code", action: "reject" };
    expect(describeEvent(review, { live: true })).toBe("reviewer   code rejected");
    expect(describeEvent({ event: "review", kind: "answer", action: "edit" })).toBe(
      "reviewer   answer edited",
    );
    expect(describeEvent({ event: "something else" })).toBeNull();
    expect(describeEvent("text")).toBeNull();
  });

  it("show a review pause: the code line by line, or the answer and what it cites", () => {
    const base = { question: "q", resume: "approve" };
    expect(describePause({ ...base, kind: "code", attempt: "a1", code: "x = 1\nprint(x)" })).toBe(
      "review the code of a1 before it runs:\n  | x = 1\n  | print(x)",
    );
    expect(
      describePause({
        ...base,
        kind: "answer",
        answer: "203",
        evidence: ["a1:out2"],
        problem: "p",
      }),
    ).toBe("(p)\nreview the answer before it is final: 203\n  citing a1:out2");
  });
});
