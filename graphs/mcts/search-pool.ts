import {
  type BranchSpec,
  idSegment,
  nextBranches,
  type Shape,
  seedOf,
  stageAfter,
  stagesThrough,
} from "../../blackboard/branches.js";
import { addBudget, EMPTY_BUDGET, upsertById } from "../../blackboard/reducers.js";
import type { Branch, Budget, Stage, TreeNode } from "../../blackboard/schemas.js";
import { searchReward } from "../../grounding/agreement.js";
import { stagesOf } from "../../nodes/branch.js";
import type { Configuration } from "../../settings/configuration.js";
import { backup, type Expansion, ROOT, selectExpansions } from "./search-tree.js";
import type { MctsStateValue } from "./state.js";

/*
 * The slots of mcts's search: which branches start whenever a slot is free, within the budget of
 * model calls, and each finished branch put in the tree. A branch reserves the most calls it can
 * make when it starts and gives back what it did not use when it finishes, so the budget is never
 * exceeded and what a branch left unused can start another.
 */

/** Mixture-of-Minds' fixed-width rollouts per stage mined: plans x codes x answers. */
export const PRESETS: Record<Exclude<Configuration["searchMode"], "uct">, Shape> = {
  planner: { plan: 8, code: 4, answer: 1 },
  coder: { plan: 1, code: 8, answer: 1 },
  answerer: { plan: 1, code: 4, answer: 8 },
};

/** The most model calls growing a branch through `stages` can take. */
export function worstCalls(stages: Stage[], config: Pick<Configuration, "maxCodeAttempts">) {
  return stages.reduce((sum, stage) => sum + (stage === "code" ? config.maxCodeAttempts : 1), 0);
}

/** The most model calls one branch to start can take. */
function costOf(spec: BranchSpec, config: Pick<Configuration, "maxCodeAttempts">): number {
  const first = stageAfter(spec.parent?.stage ?? null) ?? "answer";
  return worstCalls(stagesThrough(first, spec.until), config);
}

/** The reward of one answer branch among all answers of the search. */
export function rewardIn(state: Pick<MctsStateValue, "branches" | "gold">) {
  const answers = state.branches.filter((b) => b.stage === "answer" && b.answer);
  return (branch: Branch): number =>
    searchReward({
      answer: branch.answer?.final ?? "",
      confidence: branch.verdict?.confidence ?? null,
      peers: answers.filter((b) => b.id !== branch.id).map((b) => b.answer?.final ?? ""),
      gold: state.gold,
    });
}

/** What growing one branch left: a branch per stage it ran, and its cost. */
export interface Grown {
  branches: Branch[];
  budget: Budget;
}

/** What a search starts from, and what it adds to the run's state. */
export type SearchState = Pick<MctsStateValue, "branches" | "tree" | "budget" | "gold">;

/** Which branches to start while slots are free, and what each brought back. */
export interface SearchSchedule {
  /** Up to `free` branches to start now (none: wait for one to finish, or, when none runs, done). */
  next(free: number): BranchSpec[];
  /** A branch that started has finished. */
  finish(spec: BranchSpec, grown: Grown): void;
  /** What the search adds to the state: its branches, its tree, what it cost. */
  result(): Pick<MctsStateValue, "branches" | "tree" | "budget">;
}

/** The search for the configuration's mode: UCT, or a fixed-width preset. */
export function searchSchedule(state: SearchState, config: Configuration): SearchSchedule {
  return config.searchMode === "uct"
    ? new UctSchedule(state, config)
    : new PresetSchedule(state, config, PRESETS[config.searchMode]);
}

/** The model calls of the budget: spent, and reserved by the branches still growing. */
class Ledger {
  reserved = 0;
  cost = EMPTY_BUDGET;
  constructor(
    private readonly limit: number,
    private spent: number,
  ) {}
  left(): number {
    return this.limit - this.spent - this.reserved;
  }
  reserve(calls: number): void {
    this.reserved += calls;
  }
  settle(reserved: number, budget: Budget): void {
    this.reserved -= reserved;
    this.spent += budget.llmCalls;
    this.cost = addBudget(this.cost, budget);
  }
}

/** The tree with a batch of grown branches in it, their answers' rewards backed up. */
function treeWith(tree: TreeNode[], grown: Branch[], all: SearchState, width: number) {
  return upsertById(tree, backup(tree, grown, rewardIn(all), width));
}

/**
 * UCT: whenever slots are free, picks as many places to grow (the branches still growing count
 * as virtual losses), and backs each branch up as soon as it finishes, before the next pick.
 */
class UctSchedule implements SearchSchedule {
  private branches: Branch[];
  private tree: TreeNode[];
  private readonly ledger: Ledger;
  private readonly growing = new Map<string, { pick: Expansion; calls: number }>();
  private readonly grown: Branch[] = [];

  constructor(
    private readonly state: SearchState,
    private readonly config: Configuration,
  ) {
    this.branches = state.branches;
    this.tree = state.tree;
    this.ledger = new Ledger(config.searchBudget, state.budget.llmCalls);
  }

  next(free: number): BranchSpec[] {
    if (free <= 0) return [];
    const picks = selectExpansions(
      this.tree,
      free,
      { width: this.config.searchWidth, exploration: this.config.exploration },
      [...this.growing.values()].map((g) => g.pick),
    );
    const specs: BranchSpec[] = [];
    for (const pick of picks) {
      const rollout = stagesThrough(pick.stage, "answer").slice(1);
      const id = [pick.id, ...rollout.map((stage) => idSegment(stage, 1))].join(".");
      const parent =
        pick.parent === ROOT ? null : (this.branches.find((b) => b.id === pick.parent) ?? null);
      const spec = {
        id,
        parent,
        until: "answer" as const,
        seed: seedOf(id),
        sampled: [pick.stage],
      };
      const calls = costOf(spec, this.config);
      if (calls > this.ledger.left()) continue;
      this.ledger.reserve(calls);
      this.growing.set(spec.id, { pick, calls });
      specs.push(spec);
    }
    return specs;
  }

  finish(spec: BranchSpec, grown: Grown): void {
    const growing = this.growing.get(spec.id);
    if (!growing) throw new Error(`branch ${spec.id} finished but was not growing`);
    this.growing.delete(spec.id);
    this.ledger.settle(growing.calls, grown.budget);
    this.branches = upsertById(this.branches, grown.branches);
    this.grown.push(...grown.branches);
    const all = { ...this.state, branches: this.branches };
    this.tree = treeWith(this.tree, grown.branches, all, this.config.searchWidth);
  }

  result() {
    return { branches: this.grown, tree: this.tree, budget: this.ledger.cost };
  }
}

/** One round of a fixed-width search: the branches it could start, and those it does. */
interface Round {
  candidates: BranchSpec[];
  /** Decided once every earlier round has finished, from the calls they really made. */
  chosen: BranchSpec[] | null;
}

/**
 * A fixed-width preset grows the same branches, in the same order and with the same rewards, as
 * rounds would that wait for each other: a round is the children of every branch grown so far
 * that stopped before answering, as many as the calls the earlier rounds left allow. A branch
 * of the next round starts early, as soon as its parent exists and a slot is free, when its
 * round takes it whatever the branches still growing cost: the calls of those before it in its
 * round, each at its most, fit in what is left with every branch still growing at its most.
 */
class PresetSchedule implements SearchSchedule {
  private readonly rounds: Round[];
  /** The last round decided; every round before it has finished and is backed up. */
  private decided = -1;
  private over = false;
  private readonly started = new Set<string>();
  private readonly finished = new Map<string, Grown>();
  /** Every branch by id, the state's and those grown, for the children that start from them. */
  private readonly byId: Map<string, Branch>;
  private branches: Branch[];
  private tree: TreeNode[];
  /** Calls spent by the state and the rounds backed up. */
  private settled: number;
  private readonly ledger: Ledger;
  private readonly grown: Branch[] = [];

  constructor(
    private readonly state: SearchState,
    private readonly config: Configuration,
    private readonly shape: Shape,
  ) {
    this.branches = state.branches;
    this.tree = state.tree;
    this.byId = new Map(state.branches.map((b) => [b.id, b]));
    this.settled = state.budget.llmCalls;
    this.ledger = new Ledger(config.searchBudget, state.budget.llmCalls);
    this.rounds = [{ candidates: nextBranches(state.branches, shape), chosen: null }];
    this.advance();
  }

  private cost(spec: BranchSpec): number {
    return costOf(spec, this.config);
  }

  private complete(round: Round): boolean {
    return round.chosen?.every((spec) => this.finished.has(spec.id)) ?? false;
  }

  /** Backs up each round that has finished, in order, and decides the one after it. */
  private advance(): void {
    while (!this.over) {
      const last = this.rounds[this.decided];
      if (last && !this.complete(last)) return;
      if (last) this.backUp(last);
      const round = this.rounds[this.decided + 1];
      if (!round) return;
      let left = this.config.searchBudget - this.settled;
      round.chosen = round.candidates.filter((spec) => {
        const calls = this.cost(spec);
        if (calls > left) return false;
        left -= calls;
        return true;
      });
      this.decided += 1;
      // Nothing left to grow, or no calls left for it: the search is over.
      this.over = round.chosen.length === 0;
      if (this.over) return;
      this.rounds.push({ candidates: nextBranches(this.planned(), this.shape), chosen: null });
    }
  }

  /** The branches of the state and of the rounds decided, those still growing as they will be. */
  private planned(): Branch[] {
    const planned = [...this.branches];
    const round = this.rounds[this.decided];
    for (const spec of round?.chosen ?? []) {
      let parent = spec.parent?.id ?? null;
      for (const { stage, id } of stagesOf(spec)) {
        planned.push(this.byId.get(id) ?? placeholder(id, parent, stage));
        parent = id;
      }
    }
    return planned;
  }

  private backUp(round: Round): void {
    const grown = (round.chosen ?? []).flatMap(
      (spec) => this.finished.get(spec.id)?.branches ?? [],
    );
    this.branches = upsertById(this.branches, grown);
    this.grown.push(...grown);
    const all = { ...this.state, branches: this.branches };
    this.tree = treeWith(this.tree, grown, all, this.config.searchWidth);
    for (const spec of round.chosen ?? []) {
      this.settled += this.finished.get(spec.id)?.budget.llmCalls ?? 0;
    }
  }

  /** The next round's candidates that it takes whatever the branches still growing cost. */
  private early(): BranchSpec[] {
    const current = this.rounds[this.decided];
    const next = this.rounds[this.decided + 1];
    if (!current?.chosen || !next) return [];
    let left = this.config.searchBudget - this.settled;
    for (const spec of current.chosen) {
      left -= this.finished.get(spec.id)?.budget.llmCalls ?? this.cost(spec);
    }
    const sure: BranchSpec[] = [];
    for (const spec of next.candidates) {
      left -= this.cost(spec);
      if (left < 0) break;
      if (!spec.parent || this.byId.has(spec.parent.id)) sure.push(spec);
    }
    return sure;
  }

  next(free: number): BranchSpec[] {
    const current = this.rounds[this.decided]?.chosen ?? [];
    const ready = [...current, ...this.early()].filter((spec) => !this.started.has(spec.id));
    return ready.slice(0, Math.max(0, free)).map((spec) => {
      this.started.add(spec.id);
      this.ledger.reserve(this.cost(spec));
      const parent = spec.parent ? (this.byId.get(spec.parent.id) ?? spec.parent) : null;
      return { ...spec, parent };
    });
  }

  finish(spec: BranchSpec, grown: Grown): void {
    if (!this.started.has(spec.id) || this.finished.has(spec.id)) {
      throw new Error(`branch ${spec.id} finished but was not growing`);
    }
    this.ledger.settle(this.cost(spec), grown.budget);
    this.finished.set(spec.id, grown);
    for (const branch of grown.branches) this.byId.set(branch.id, branch);
    this.advance();
  }

  result() {
    return { branches: this.grown, tree: this.tree, budget: this.ledger.cost };
  }
}

/** A branch that a round will grow, as far as choosing the next round needs it. */
function placeholder(id: string, parent: string | null, stage: Stage): Branch {
  return {
    id,
    parent,
    stage,
    plan: [],
    attempts: [],
    evidence: [],
    claims: [],
    edges: [],
    answer: null,
    verdict: null,
    budget: EMPTY_BUDGET,
  };
}

/**
 * Keeps up to `slots` tasks running: whenever one finishes, `finish` takes its result (before
 * anything else starts), then `next` is asked for as many as there are free slots. Ends when
 * nothing runs and `next` has nothing. The first failure stops the others (through the signal
 * each task is given), and is thrown once they have stopped.
 */
export async function runPool<T, R>(
  schedule: { next(free: number): T[]; finish(task: T, result: R): void },
  slots: number,
  run: (task: T, signal: AbortSignal) => Promise<R>,
  signal?: AbortSignal,
): Promise<void> {
  const stop = new AbortController();
  const stopped = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  type Outcome = { task: T; ok: true; value: R } | { task: T; ok: false; error: unknown };
  const running = new Map<T, Promise<Outcome>>();
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown) => {
    failure ??= { error };
    stop.abort(error);
  };
  for (;;) {
    try {
      const free = stopped.aborted ? 0 : slots - running.size;
      for (const task of free > 0 ? schedule.next(free) : []) {
        const outcome = Promise.resolve()
          .then(() => run(task, stopped))
          .then(
            (value): Outcome => ({ task, ok: true, value }),
            (error: unknown): Outcome => ({ task, ok: false, error }),
          );
        running.set(task, outcome);
      }
    } catch (error) {
      fail(error);
    }
    if (running.size === 0) break;
    const done = await Promise.race(running.values());
    running.delete(done.task);
    if (stopped.aborted) continue;
    if (!done.ok) {
      fail(done.error);
      continue;
    }
    try {
      schedule.finish(done.task, done.value);
    } catch (error) {
      fail(error);
    }
  }
  if (failure) throw failure.error;
  signal?.throwIfAborted();
}
