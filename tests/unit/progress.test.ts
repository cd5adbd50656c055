import { describe, expect, it } from "vitest";
import { describeUpdate } from "../../cli/progress.js";
import { ranAttempt } from "../support/evidence.js";

describe("progress lines", () => {
  it("are labelled with the node's name, and say the executor's time is the code's own", () => {
    const { attempt } = ranAttempt("a1", "print(1)", "1\n");
    const line = describeUpdate("executor", { attempts: [attempt] });
    expect(line).toBe("executor   a1 ok, the code ran 5 ms: 1 output line, 0 tables");
  });

  it("say nothing for a subgraph's own update; its nodes speak for themselves", () => {
    const { attempt } = ranAttempt("a1", "print(1)", "1\n");
    expect(describeUpdate("solve", { attempts: [attempt], plan: ["x"] })).toBeNull();
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
    expect(describeUpdate("decomposer", { subtasks } as never)).toBe(
      "decomposer 2 subtasks: s1 [sql, pandas]; s2 [calc] after s1",
    );
    expect(
      describeUpdate("dispatcher", {
        round: 1,
        dispatching: [{ subtask: "s1", worker: "sql" }],
        packets: [{ ...packet, id: "s3.calc", answer: null, error: "not run: s1 found no answer" }],
      } as never),
    ).toBe("dispatcher s3.calc: not run: s1 found no answer\ndispatcher round 1: s1.sql");
    expect(describeUpdate("worker", { packets: [packet] } as never)).toBe(
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
    expect(describeUpdate("selector", { selection } as never)).toBe(
      "selector   kept s1.sql (50% covered; s1 disputed (750 vs 430), kept s1.sql)",
    );
    expect(describeUpdate("planner", { plan: ["x"] }, ["worker:abc"])).toBeNull();
  });
});
