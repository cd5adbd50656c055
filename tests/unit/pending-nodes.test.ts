import { describe, expect, it } from "vitest";
import { pendingNodes } from "../../cli/ask.js";

describe("pendingNodes", () => {
  it("names the step inside the subgraph the run stopped in", () => {
    const inner = { values: {}, next: ["answerer"], tasks: [{ name: "answerer" }] };
    const outer = { values: {}, next: ["solve"], tasks: [{ name: "solve", state: inner }] };
    expect(pendingNodes(outer)).toEqual(["answerer"]);
  });

  it("names a step whose writes landed before the checkpoint after it did", () => {
    // Its writes are saved, so it is a task of the snapshot but not in `next`.
    const inner = { values: {}, next: [], tasks: [{ name: "executor" }] };
    const outer = { values: {}, next: ["solve"], tasks: [{ name: "solve", state: inner }] };
    expect(pendingNodes(outer)).toEqual(["executor"]);
  });

  it("names the outer step when the subgraph saved nothing yet", () => {
    const empty = { values: {}, next: [], tasks: [] };
    const outer = { values: {}, next: ["solve"], tasks: [{ name: "solve", state: empty }] };
    expect(pendingNodes(outer)).toEqual(["solve"]);
  });
});
