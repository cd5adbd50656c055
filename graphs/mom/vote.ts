import type { GraphNode } from "@langchain/langgraph";
import { winnerTrajectory } from "../../blackboard/branches.js";
import { withAgreement } from "../../grounding/confidence.js";
import { majorityVote, winnerShare } from "../../grounding/tally.js";
import { emit, voteEvent } from "../../nodes/events.js";
import { configurationOf, type NodeContext } from "../../nodes/runtime.js";
import type { MomState } from "./state.js";

/**
 * Settles the branches' answers by a weighted majority (grounding/tally.ts). The winner's
 * trajectory becomes the run's, with its own evidence; every branch stays in `branches`.
 */
export const vote = (async (state, runtime) => {
  const ballot = majorityVote(state.branches);
  emit(runtime, voteEvent(ballot));
  const trajectory = winnerTrajectory(state, ballot.winner);
  const { minConfidence } = configurationOf(runtime);
  const verdict =
    trajectory.verdict && withAgreement(trajectory.verdict, winnerShare(ballot), minConfidence);
  return { ballot, ...trajectory, ...(verdict ? { verdict } : {}) };
}) satisfies GraphNode<typeof MomState, NodeContext>;
