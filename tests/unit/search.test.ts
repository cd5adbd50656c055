import { END } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import {
  type BranchSpec,
  nextBranches,
  type Shape,
  seedOf,
  stageAfter,
  stagesThrough,
} from "../../blackboard/branches.js";
import { EMPTY_BUDGET, upsertById } from "../../blackboard/reducers.js";
import type { Branch, Stage, TreeNode } from "../../blackboard/schemas.js";
import {
  type Grown,
  PRESETS,
  rewardIn,
  runPool,
  type SearchSchedule,
  searchSchedule,
  worstCalls,
} from "../../graphs/mcts/search-pool.js";
import { backup, ROOT, selectExpansions, uct } from "../../graphs/mcts/search-tree.js";
import { routeAfterVote, routeBranches } from "../../graphs/mom/graph.js";
import { parseJudgement } from "../../graphs/mom/judge.js";
import { sameAnswer, searchReward } from "../../grounding/agreement.js";
import { branchOrder, majorityVote } from "../../grounding/tally.js";
import { branchContext, stagesOf } from "../../nodes/branch.js";
import { type Configuration, ensureConfiguration } from "../../settings/configuration.js";
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
    const state = { branches: [], tree: [], gold: null, budget: { ...EMPTY_BUDGET, llmCalls: 3 } };
    // 7 calls left: one rollout from the root (4); a second would need 8.
    expect(
      searchSchedule(state, config)
        .next(8)
        .map((s) => s.id),
    ).toEqual(["p1.c1.a1"]);
    const spent = { ...state, budget: { ...EMPTY_BUDGET, llmCalls: 7 } };
    expect(searchSchedule(spent, config).next(8)).toEqual([]);
  });
});

describe("the search's slots", () => {
  /** What a branch grows: a branch per stage, its code taking 1 to maxCodeAttempts calls. */
  function grow(spec: BranchSpec, maxCodeAttempts: number): Grown {
    let parent = spec.parent?.id ?? null;
    const branches = stagesOf(spec).map(({ stage, id }) => {
      const calls = stage === "code" ? 1 + (seedOf(id) % maxCodeAttempts) : 1;
      const final = stage === "answer" ? String(seedOf(id) % 3) : undefined;
      const grown = branch(id, stage, final, {
        parent,
        budget: { ...EMPTY_BUDGET, llmCalls: calls },
      });
      parent = id;
      return grown;
    });
    const llmCalls = branches.reduce((n, b) => n + b.budget.llmCalls, 0);
    return { branches, budget: { ...EMPTY_BUDGET, llmCalls } };
  }

  /** Runs a schedule to its end, finishing a random one of the running branches each time. */
  function drive(schedule: SearchSchedule, slots: number, seed: number, maxCodeAttempts: number) {
    let random = seed;
    const running: BranchSpec[] = [];
    const started: string[] = [];
    let most = 0;
    for (;;) {
      const specs = schedule.next(slots - running.length);
      running.push(...specs);
      started.push(...specs.map((s) => s.id));
      most = Math.max(most, running.length);
      if (running.length === 0) break;
      random = (Math.imul(random, 1103515245) + 12345) >>> 0;
      const [done] = running.splice(random % running.length, 1);
      if (done) schedule.finish(done, grow(done, maxCodeAttempts));
    }
    return { result: schedule.result(), started, most };
  }

  /** What a fixed-width search grew when each round waited for the one before. */
  function inRounds(shape: Shape, config: Configuration) {
    let branches: Branch[] = [];
    let tree: TreeNode[] = [];
    let spent = 0;
    for (;;) {
      let left = config.searchBudget - spent;
      const round = nextBranches(branches, shape).filter((spec) => {
        const first = stageAfter(spec.parent?.stage ?? null) ?? "answer";
        const calls = worstCalls(stagesThrough(first, spec.until), config);
        if (calls > left) return false;
        left -= calls;
        return true;
      });
      if (round.length === 0) return { branches, tree, spent };
      const grown = round.map((spec) => grow(spec, config.maxCodeAttempts));
      const added = grown.flatMap((g) => g.branches);
      branches = [...branches, ...added];
      spent += grown.reduce((n, g) => n + g.budget.llmCalls, 0);
      const changed = backup(tree, added, rewardIn({ branches, gold: null }), config.searchWidth);
      tree = upsertById(tree, changed);
    }
  }

  const fresh = { branches: [], tree: [], gold: null, budget: EMPTY_BUDGET };

  it.each([
    ["planner", 64, 8, 3],
    ["planner", 200, 8, 3],
    ["coder", 20, 3, 2],
    ["answerer", 30, 5, 3],
    ["answerer", 64, 16, 1],
  ] as const)(
    "%s mode (budget %i, %i slots) grows what rounds would, whatever order branches finish in",
    (mode, searchBudget, slots, maxCodeAttempts) => {
      const config = ensureConfiguration({
        searchMode: mode,
        searchBudget,
        maxConcurrency: slots,
        maxCodeAttempts,
      });
      const expected = inRounds(PRESETS[mode], config);
      for (const seed of [1, 2, 3, 4, 5]) {
        const { result, most } = drive(searchSchedule(fresh, config), slots, seed, maxCodeAttempts);
        expect(result.branches.map((b) => b.id)).toEqual(expected.branches.map((b) => b.id));
        expect(result.tree).toEqual(expect.arrayContaining(expected.tree));
        expect(result.tree).toHaveLength(expected.tree.length);
        expect(result.budget.llmCalls).toBe(expected.spent);
        expect(result.budget.llmCalls).toBeLessThanOrEqual(searchBudget);
        expect(most).toBeLessThanOrEqual(slots);
      }
    },
  );

  it("starts a branch of the next round before its round is over, when the round takes it anyway", () => {
    const config = ensureConfiguration({ searchMode: "planner", maxConcurrency: 8 });
    const schedule = searchSchedule(fresh, config);
    const plans = schedule.next(8);
    expect(plans.map((s) => s.id)).toEqual(["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]);
    const [p1] = plans;
    if (!p1) throw new Error("no plan");
    schedule.finish(p1, grow(p1, config.maxCodeAttempts));
    // The seven plans still growing make 7 calls at most: 56 of 64 are left for the next round
    // whatever they cost, enough for p1's first codes (4 calls each at most) to start now.
    expect(schedule.next(1).map((s) => [s.id, s.parent?.id])).toEqual([["p1.c1.a1", "p1"]]);
  });

  it("counts the branches still growing in UCT's picks, and the calls they may make", () => {
    const config = ensureConfiguration({
      searchBudget: 10,
      maxCodeAttempts: 2,
      searchWidth: 2,
      maxConcurrency: 4,
    });
    const schedule = searchSchedule(fresh, config);
    // Two rollouts from the root, 4 calls each at most: the root is full, 2 calls left.
    const first = schedule.next(4);
    expect(first.map((s) => s.id)).toEqual(["p1.c1.a1", "p2.c1.a1"]);
    expect(schedule.next(2)).toEqual([]);
    const [p1] = first;
    if (!p1) throw new Error("no rollout");
    // It made 3 calls (its code ran once): 10 - 3 - 4 reserved = 3 left, a new code of p1 fits.
    schedule.finish(p1, {
      branches: grow(p1, 1).branches,
      budget: { ...EMPTY_BUDGET, llmCalls: 3 },
    });
    expect(schedule.next(2).map((s) => [s.id, s.parent?.id])).toEqual([["p1.c2.a1", "p1"]]);
  });

  it("keeps every slot busy in UCT and stays within its budget", () => {
    const config = ensureConfiguration({ searchBudget: 64, searchWidth: 4, maxConcurrency: 6 });
    for (const seed of [7, 8, 9]) {
      const { result, started, most } = drive(searchSchedule(fresh, config), 6, seed, 3);
      expect(most).toBe(6);
      expect(result.budget.llmCalls).toBeLessThanOrEqual(64);
      expect(new Set(started).size).toBe(started.length);
      const root = result.tree.find((n) => n.id === ROOT);
      // Every answer backed up once through the root.
      expect(root?.visits).toBe(result.branches.filter((b) => b.stage === "answer").length);
    }
  });

  it("stops the other branches when one fails, and throws its error once they have stopped", async () => {
    const stopped: string[] = [];
    const tasks = ["a", "b", "c", "d"];
    const schedule = {
      next: (free: number) => tasks.splice(0, free),
      finish: () => {},
    };
    const run = (task: string, signal: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        if (task === "b") return reject(new Error("b failed"));
        signal.addEventListener("abort", () => {
          stopped.push(task);
          reject(signal.reason);
        });
      });
    await expect(runPool(schedule, 2, run)).rejects.toThrow("b failed");
    // "a" ran beside "b" and was stopped; "c" and "d" never started.
    expect(stopped).toEqual(["a"]);
    expect(tasks).toEqual(["c", "d"]);
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
