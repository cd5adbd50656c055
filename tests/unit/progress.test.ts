import { describe, expect, it } from "vitest";
import { describeUpdate } from "../../cli/progress.js";
import { ranAttempt } from "../support/evidence.js";

describe("progress lines", () => {
  it("are labelled with the node's name, and say the executor's time is the code's own", () => {
    const { attempt } = ranAttempt("a1", "print(1)", "1\n");
    const line = describeUpdate("executor", { attempts: [attempt] });
    expect(line).toBe("executor  a1 ok, the code ran 5 ms: 1 output line, 0 tables");
  });

  it("say nothing for a subgraph's own update; its nodes speak for themselves", () => {
    const { attempt } = ranAttempt("a1", "print(1)", "1\n");
    expect(describeUpdate("solve", { attempts: [attempt], plan: ["x"] })).toBeNull();
  });
});
