import { StateSchema } from "@langchain/langgraph";
import { BallotSchema } from "../../blackboard/schemas.js";
import { chosen, keys } from "../../blackboard/state.js";

const { question, asked, turns, sources, tables, memories, branches, budget } = keys;

/** How the branches' answers were settled; null until the vote. */
const ballot = BallotSchema.nullable().default(null);
/**
 * mom: branches of solve run side by side and vote. The winner's trajectory is the run's
 * (plan, attempts, evidence, claims, edges, answer, verdict); every branch stays in `branches`.
 */
export const MomState = new StateSchema({
  question,
  asked,
  turns,
  sources,
  tables,
  memories,
  branches,
  ballot,
  ...chosen,
  budget,
});

export type MomStateValue = typeof MomState.State;
