import type { GraphNode } from "@langchain/langgraph";
import type { BranchSpec } from "../blackboard/branches.js";
import type { MctsState } from "../blackboard/state.js";
import { growBranch, type SolveRunnable } from "./branch.js";
import { configurationOf, type NodeContext, type NodeRuntime } from "./runtime.js";
import { runPool, searchSchedule } from "./search-pool.js";

/*
 * mcts's search: branches of the solve subgraph grow side by side, up to maxConcurrency at once,
 * and a new one starts as soon as one finishes (nodes/search-pool.ts decides which), so a slow
 * branch holds its own slot only. The graph hands the compiled solve in.
 */

/**
 * Where LangGraph lends its checkpointer to the subgraphs a node runs. Their checkpoints are
 * named by the order they start in, which differs from run to run when they run side by side:
 * a search run again (a resumed thread) could start a branch from another branch's state. The
 * branches run without checkpoints; a search that stopped part-way runs again from its start.
 */
const LENT_CHECKPOINTER = "__pregel_checkpointer";

/** The config one branch runs with: the node's, stopped with the pool, without checkpoints. */
function branchRuntime(runtime: NodeRuntime | undefined, signal: AbortSignal): NodeRuntime {
  const configurable: Record<string, unknown> = { ...runtime?.configurable };
  delete configurable[LENT_CHECKPOINTER];
  return { ...runtime, configurable, signal };
}

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
          branchRuntime(runtime, signal),
        ),
      runtime?.signal,
    );
    return schedule.result();
  }) satisfies GraphNode<typeof MctsState, NodeContext>;
}
