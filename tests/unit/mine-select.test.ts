import { describe, expect, it } from "vitest";
import type { MinedNode } from "../../training/mining/records.js";
import { compareIds, correctness, selectPseudoGold } from "../../training/mining/select.js";

/** A node of a hand-made tree: plans, codes (with output) and answers (with a score). */
function node(id: string, extra: Partial<MinedNode> = {}): MinedNode {
  const parts = id.split(".");
  const stage = parts.length === 1 ? "plan" : parts.length === 2 ? "code" : "answer";
  return {
    id,
    parent: parts.length > 1 ? parts.slice(0, -1).join(".") : null,
    stage,
    turns: [{ role: "planner", messages: [], output: `out ${id}`, execution: null }],
    text: id,
    execution: stage === "code" ? "42" : "",
    score: null,
    derived: stage === "code" ? "yes" : null,
    ...extra,
  };
}
const answer = (id: string, score: number) => node(id, { score });

describe("pseudo-gold selection", () => {
  it("orders branches by index, p2 before p10", () => {
    expect(["p10", "p2", "p1.c3", "p1"].sort(compareIds)).toEqual(["p1", "p1.c3", "p2", "p10"]);
  });

  it("values a node by the mean of the answers below it", () => {
    const nodes = [node("p1"), node("p1.c1"), answer("p1.c1.a1", 1), answer("p1.c1.a2", 0.5)];
    expect(correctness(nodes)).toEqual(
      new Map([
        ["p1", 0.75],
        ["p1.c1", 0.75],
        ["p1.c1.a1", 1],
        ["p1.c1.a2", 0.5],
      ]),
    );
  });

  it("picks the plan of the best mean above 0.1, the lowest index on ties", () => {
    const nodes = [
      node("p1"),
      node("p1.c1"),
      answer("p1.c1.a1", 0.1),
      node("p2"),
      node("p2.c1"),
      answer("p2.c1.a1", 0.6),
      node("p3"),
      node("p3.c1"),
      answer("p3.c1.a1", 0.6),
    ];
    const gold = selectPseudoGold({ qsubtype: "Counting", nodes });
    expect(gold.plan?.node.id).toBe("p2");
    expect(gold.planPair?.chosen.node.id).toBe("p2");
    expect(gold.planPair?.rejected.node.id).toBe("p1");
    // 0.1 is not above 0.1: no plan, and no pair when the gap is under 0.1.
    const low = selectPseudoGold({ qsubtype: "Counting", nodes: nodes.slice(0, 3) });
    expect(low.plan).toBeNull();
    expect(low.planPair).toBeNull();
  });

  it("pairs plans only when best and worst differ by 0.1 or more", () => {
    const tree = (a: number, b: number) => [
      node("p1"),
      node("p1.c1"),
      answer("p1.c1.a1", a),
      node("p2"),
      node("p2.c1"),
      answer("p2.c1.a1", b),
    ];
    expect(
      selectPseudoGold({ qsubtype: "Counting", nodes: tree(0.6, 0.5) }).planPair,
    ).not.toBeNull();
    expect(selectPseudoGold({ qsubtype: "Counting", nodes: tree(0.6, 0.55) }).planPair).toBeNull();
  });

  it("never takes code whose result does not depend on the table, nor answers read from its run", () => {
    const nodes = [
      node("p1"),
      node("p1.c1", { derived: "no", execution: "203" }),
      answer("p1.c1.a1", 1),
      node("p1.c2"),
      answer("p1.c2.a1", 0.8),
    ];
    const gold = selectPseudoGold({ qsubtype: "Aggregation", nodes });
    expect(gold.code?.node.id).toBe("p1.c2");
    expect(gold.answers.map((a) => a.node.id)).toEqual(["p1.c2"]);
    // Records mined before derivation was known (null) are judged as before.
    const old = nodes.map((n) => (n.stage === "code" ? { ...n, derived: null } : n));
    expect(selectPseudoGold({ qsubtype: "Aggregation", nodes: old }).code?.node.id).toBe("p1.c1");
  });

  it("keeps the best error-free code at 0.5, or 0.3 for open-ended subtypes", () => {
    const nodes = [
      node("p1"),
      node("p1.c1", { execution: "Traceback... KeyError: 'x'" }),
      answer("p1.c1.a1", 1),
      node("p1.c2"),
      answer("p1.c2.a1", 0.4),
      node("p1.c3", { execution: "" }),
      answer("p1.c3.a1", 0.9),
      node("p1.c4"),
      answer("p1.c4.a1", 0.45),
    ];
    // c1 and c3 score best but their output has an error or is empty.
    expect(selectPseudoGold({ qsubtype: "Counting", nodes }).code).toBeNull();
    const open = selectPseudoGold({ qsubtype: "DescriptiveAnalysis", nodes });
    expect(open.code?.node.id).toBe("p1.c4");
    expect(open.code?.correctness).toBe(0.45);
    const exact = [node("p1"), node("p1.c1"), answer("p1.c1.a1", 0.5)];
    expect(selectPseudoGold({ qsubtype: "Counting", nodes: exact }).code?.node.id).toBe("p1.c1");
  });

  it("keeps at most two answer inputs where a rollout reached 0.7 (0.3 open-ended)", () => {
    const nodes = [
      node("p1"),
      node("p1.c1"),
      answer("p1.c1.a1", 0),
      answer("p1.c1.a2", 0.7),
      node("p1.c2"),
      answer("p1.c2.a1", 1),
      node("p1.c3"),
      answer("p1.c3.a1", 0.69),
      node("p1.c4"),
      answer("p1.c4.a1", 0.7),
    ];
    const closed = selectPseudoGold({ qsubtype: "Counting", nodes });
    expect(closed.answers.map((a) => a.node.id)).toEqual(["p1.c2", "p1.c1"]);
    const open = selectPseudoGold({ qsubtype: "AnomalyDetection", nodes: nodes.slice(0, 8) });
    expect(open.answers.map((a) => a.node.id)).toEqual(["p1.c2", "p1.c1"]);
    const none = selectPseudoGold({ qsubtype: "Counting", nodes: nodes.slice(6, 8) });
    expect(none.answers).toEqual([]);
  });
});
