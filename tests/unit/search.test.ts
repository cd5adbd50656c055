import { END } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { nextBranches, seedOf } from "../../blackboard/branches.js";
import { ensureConfiguration } from "../../blackboard/configuration.js";
import { EMPTY_BUDGET } from "../../blackboard/reducers.js";
import type { Branch, Stage, TreeNode } from "../../blackboard/schemas.js";
import { backup, ROOT, selectExpansions, uct } from "../../blackboard/tree.js";
import { nextSearch, worstCalls } from "../../graphs/mcts.js";
import { routeAfterVote, routeBranches } from "../../graphs/mom.js";
import { sameAnswer, searchReward } from "../../grounding/agreement.js";
import { branchOrder, majorityVote } from "../../grounding/tally.js";
import { branchContext, stagesOf } from "../../nodes/branch.js";
import { parseJudgement } from "../../nodes/judge.js";
import { verdict } from "../support/verdicts.js";

function branch(id: string, stage: Stage, final?: string, over: Partial<Branch> = {}): Branch {
  const parent = id.includes(".") ? id.slice(0, id.lastIndexOf(".")) : null;
  return {
    id,
    parent,
    stage,
    plan: [],
    attempts: [],
    evidence: [],
    claims: [],
    edges: [],
    answer: final === undefined ? null : { raw: final, final, evidence: [] },
    verdict: null,
    budget: EMPTY_BUDGET,
    ...over,
  };
}

describe("the vote", () => {
  it("orders branches as they were made", () => {
    expect(["p10.c1.a1", "p2.c1.a1", "p1.c2.a1", "p1.c1.a2"].sort(branchOrder)).toEqual([
      "p1.c1.a2",
      "p1.c2.a1",
      "p2.c1.a1",
      "p10.c1.a1",
    ]);
  });

  it("takes the weighted majority of normalized answers, ties to the first seen", () => {
    const ballot = majorityVote([
      branch("p2.c1.a1", "answer", "The 203"),
      branch("p1.c1.a1", "answer", "150"),
      branch("p3.c1.a1", "answer", "203."),
      branch("p4.c1.a1", "answer", "150"),
      branch("p5.c1", "code"),
    ]);
    expect(ballot.tally).toEqual([
      { normalized: "150", weight: 12, branches: ["p1.c1.a1", "p4.c1.a1"] },
      { normalized: "203", weight: 12, branches: ["p2.c1.a1", "p3.c1.a1"] },
    ]);
    expect(ballot).toMatchObject({ winner: "p1.c1.a1", answer: "150", method: "majority" });
  });

  it("weighs each answer by its verdict, so ungrounded ones barely vote against a derived one", () => {
    const ungrounded = verdict("150", { grounding: 0 });
    const ballot = majorityVote([
      branch("p1.c1.a1", "answer", "150", { verdict: ungrounded }),
      branch("p2.c1.a1", "answer", "150", { verdict: ungrounded }),
      branch("p3.c1.a1", "answer", "203", { verdict: verdict("203") }),
    ]);
    // Before the check was honest, two well-worded ungrounded answers (4 + 4) beat a sound one (6).
    expect(ballot.tally.map((t) => t.weight)).toEqual([2, 6]);
    expect(ballot.answer).toBe("203");
    const partly = verdict("150", { grounding: 1 });
    const tied = majorityVote([
      branch("p1.c1.a1", "answer", "150", { verdict: partly }),
      branch("p2.c1.a1", "answer", "150", { verdict: partly }),
      branch("p3.c1.a1", "answer", "203", { verdict: verdict("203") }),
    ]);
    expect(tied.tally.map((t) => t.weight)).toEqual([6, 6]);
  });

  it("has no winner when no branch answered", () => {
    expect(majorityVote([branch("p1.c1.a1", "answer", "  ")])).toMatchObject({
      winner: null,
      answer: null,
    });
  });

  it("reads the judge's pick, and refuses a reply that names neither", () => {
    expect(parseJudgement("Winner: B")).toBe("B");
    expect(parseJudgement("**Winner:** answer A, because...")).toBe("A");
    expect(parseJudgement("b")).toBe("B");
    expect(() => parseJudgement("Both are fine.")).toThrow(/Winner: A/);
  });

  it("calls the judge only when asked for and when answers differ", () => {
    const two = { tally: [{}, {}] } as never;
    const one = { tally: [{}] } as never;
    const run = (judge: string) => ({ context: { judge } as never });
    const prose = "Describe the trend of gold medals.";
    expect(routeAfterVote({ question: prose, ballot: two }, run("off"))).toBe(END);
    expect(routeAfterVote({ question: prose, ballot: two }, run("text"))).toBe("judge");
    expect(routeAfterVote({ question: "How many?", ballot: two }, run("text"))).toBe(END);
    expect(routeAfterVote({ question: "How many?", ballot: two }, run("always"))).toBe("judge");
    expect(routeAfterVote({ question: prose, ballot: one }, run("always"))).toBe(END);
  });
});

describe("mom's branches", () => {
  const shape = (plan: number, code: number, answer: number) => ({ plan, code, answer });

  it("runs every stage that does not branch again inside one branch", () => {
    const roots = nextBranches([], shape(3, 1, 1));
    expect(roots.map((r) => [r.id, r.until, r.sampled])).toEqual([
      ["p1.c1.a1", "answer", ["plan"]],
      ["p2.c1.a1", "answer", ["plan"]],
      ["p3.c1.a1", "answer", ["plan"]],
    ]);
    expect(new Set(roots.map((r) => r.seed)).size).toBe(3);
    expect(roots[0]?.seed).toBe(seedOf("p1.c1.a1"));
  });

  it("waits for a stage before it branches again, and then grows each parent", () => {
    const plans = nextBranches([], shape(2, 3, 1));
    expect(plans.map((p) => [p.id, p.until])).toEqual([
      ["p1", "plan"],
      ["p2", "plan"],
    ]);
    const grown = [branch("p1", "plan"), branch("p2", "plan")];
    const codes = nextBranches(grown, shape(2, 3, 1));
    expect(codes.map((c) => [c.id, c.parent?.id, c.until, c.sampled])).toEqual([
      ["p1.c1.a1", "p1", "answer", ["code"]],
      ["p1.c2.a1", "p1", "answer", ["code"]],
      ["p1.c3.a1", "p1", "answer", ["code"]],
      ["p2.c1.a1", "p2", "answer", ["code"]],
      ["p2.c2.a1", "p2", "answer", ["code"]],
      ["p2.c3.a1", "p2", "answer", ["code"]],
    ]);
    const done = [
      ...grown,
      ...codes.flatMap((c) => [
        branch(c.id.replace(/\.a1$/, ""), "code"),
        branch(c.id, "answer", "1"),
      ]),
    ];
    expect(nextBranches(done, shape(2, 3, 1))).toEqual([]);
  });

  it("sends the branches, then the vote", () => {
    const state = { question: "q", tables: [], memories: [], branches: [] };
    const sends = routeBranches(state, { context: { plans: 2 } });
    expect(Array.isArray(sends) && sends.map((s) => [s.node, s.args.id])).toEqual([
      ["branch", "p1.c1.a1"],
      ["branch", "p2.c1.a1"],
    ]);
    const answered = [branch("p1.c1.a1", "answer", "1"), branch("p2.c1.a1", "answer", "2")];
    expect(routeBranches({ ...state, branches: answered }, { context: { plans: 2 } })).toBe("vote");
  });

  it("names the branch each stage leaves, and samples the branching stage at 1.0", () => {
    expect(stagesOf({ id: "p3.c1.a1", parent: null, until: "answer" })).toEqual([
      { stage: "plan", id: "p3" },
      { stage: "code", id: "p3.c1" },
      { stage: "answer", id: "p3.c1.a1" },
    ]);
    const parent = branch("p3", "plan");
    expect(stagesOf({ id: "p3.c2.a1", parent, until: "answer" })).toEqual([
      { stage: "code", id: "p3.c2" },
      { stage: "answer", id: "p3.c2.a1" },
    ]);
    const config = ensureConfiguration({ temperature: 0.2, coderTemperature: 0.7, seed: 10 });
    expect(branchContext({ seed: 5, sampled: ["plan", "code"] }, config)).toMatchObject({
      plannerTemperature: 1,
      coderTemperature: 0.7,
      temperature: 0.2,
      seed: 15,
    });
  });
});

describe("the search tree", () => {
  const limits = { width: 2, exploration: 1 };

  it("prefers the unvisited, then the best mean with a bonus for the little visited", () => {
    const node = (visits: number, value: number) => ({ visits, value }) as TreeNode;
    expect(uct(node(0, 0), 10, 1)).toBe(Number.POSITIVE_INFINITY);
    expect(uct(node(4, 4), 10, 0)).toBe(1);
    expect(uct(node(1, 0), 10, 1)).toBeGreaterThan(uct(node(9, 0), 10, 1));
  });

  it("fills the root first, then descends to the best plan, spreading a batch", () => {
    expect(selectExpansions([], 3, limits)).toEqual([
      { parent: ROOT, id: "p1", stage: "plan" },
      { parent: ROOT, id: "p2", stage: "plan" },
    ]);
    const grown = [
      branch("p1", "plan"),
      branch("p1.c1", "code"),
      branch("p1.c1.a1", "answer", "9"),
    ];
    const more = [branch("p2", "plan"), branch("p2.c1", "code"), branch("p2.c1.a1", "answer", "8")];
    const tree = backup([], [...grown, ...more], (b) => (b.id.startsWith("p1") ? 1 : 0), 2);
    const nodes = new Map(tree.map((n) => [n.id, n]));
    expect(nodes.get(ROOT)).toMatchObject({ visits: 2, value: 1, children: ["p1", "p2"] });
    expect(nodes.get("p1.c1")).toMatchObject({ visits: 1, value: 1, prior: 0.5 });
    expect(nodes.get("p1.c1.a1")?.reward).toBe(1);
    const picks = selectExpansions(tree, 2, { width: 2, exploration: 0.1 });
    expect(picks[0]).toEqual({ parent: "p1", id: "p1.c2", stage: "code" });
    // The virtual loss of the first pick sends the second elsewhere.
    expect(picks[1]).toEqual({ parent: "p1.c1", id: "p1.c1.a2", stage: "answer" });
  });

  it("stops selecting when every branch is grown to its width", () => {
    const full = backup(
      [],
      [branch("p1", "plan"), branch("p1.c1", "code"), branch("p1.c1.a1", "answer", "1")],
      () => 1,
      1,
    );
    expect(selectExpansions(full, 4, { width: 1, exploration: 1 })).toEqual([]);
  });

  it("grows no more than the budget of model calls allows", () => {
    const config = ensureConfiguration({ searchBudget: 10, maxCodeAttempts: 2, maxConcurrency: 8 });
    expect(worstCalls(["plan", "code", "answer"], config)).toBe(4);
    const state = { branches: [], tree: [], budget: { ...EMPTY_BUDGET, llmCalls: 3 } };
    // 7 calls left: one rollout from the root (4); a second would need 8.
    expect(nextSearch(state, config).map((s) => s.id)).toEqual(["p1.c1.a1"]);
    expect(nextSearch({ ...state, budget: { ...EMPTY_BUDGET, llmCalls: 7 } }, config)).toEqual([]);
  });
});

describe("what an answer is worth", () => {
  it("says when two answers say the same", () => {
    expect(sameAnswer("The 203", "203")).toBe(true);
    expect(sameAnswer("203.0", "203")).toBe(true);
    expect(sameAnswer("45%", "45.0%")).toBe(true);
    expect(sameAnswer("12.09", "12.1")).toBe(true);
    expect(sameAnswer("12.3", "12.1")).toBe(false);
    expect(sameAnswer("Japan", "China")).toBe(false);
  });

  it("is the gold match when gold is known, else the check and the agreement", () => {
    expect(searchReward({ answer: "203", confidence: 0, peers: [], gold: "203.0" })).toBe(1);
    expect(searchReward({ answer: "150", confidence: 1, peers: ["150"], gold: "203" })).toBe(0);
    expect(searchReward({ answer: "150", confidence: 1, peers: ["150", "203"], gold: null })).toBe(
      0.75,
    );
    expect(searchReward({ answer: "150", confidence: null, peers: ["203"], gold: null })).toBe(0);
    // A coincidental answer all branches agree on is still worth little without derivation.
    expect(searchReward({ answer: "150", confidence: 0.15, peers: [], gold: null })).toBe(0.575);
  });
});
