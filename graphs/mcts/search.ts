import type { GraphNode } from "@langchain/langgraph";
import type { BranchSpec } from "../../blackboard/branches.js";
import { growBranch, type SolveRunnable } from "../../nodes/branch.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import { sideBySideConfig } from "../../nodes/subrun.js";
import { runPool, searchSchedule } from "./search-pool.js";
import type { MctsState } from "./state.js";

/*
 * mcts's search: branches of the solve subgraph grow side by side, up to maxConcurrency at once,
 * and a new one starts as soon as one finishes (graphs/mcts/search-pool.ts decides which), so a slow
 * branch holds its own slot only. The graph hands the compiled solve in.
 */

/**
 * Grows the search's branches while the budget and the tree allow, each backed up as soon as it
 * finishes; returns them, the tree and what they cost.
 */
export function searchNode(solve: SolveRunnable) {
  return (async (state, runtime) => {
    const config = configurationOf(runtime);
    const schedule = searchSchedule(state, config);
    const { question, tables, turns, memories } = state;
    await runPool(
      schedule,
      config.maxConcurrency,
      (spec: BranchSpec, signal) =>
        growBranch(
          solve,
          { question, tables, turns, memories, ...spec },
          sideBySideConfig(runtime, signal),
        ),
      runtime?.signal,
    );
    return schedule.result();
  }) satisfies GraphNode<typeof MctsState, NodeContext>;
}
