import { StateSchema } from "@langchain/langgraph";
import { BallotSchema } from "../../blackboard/schemas.js";
import { searchKeys } from "../../blackboard/state.js";

/** How the branches' answers were settled; null until the vote. */
const ballot = BallotSchema.nullable().default(null);
/**
 * mom: branches of solve run side by side and vote. The winner's trajectory is the run's
 * (plan, attempts, evidence, claims, edges, answer, verdict); every branch stays in `branches`.
 */
export const MomState = new StateSchema({ ...searchKeys, ballot });

export type MomStateValue = typeof MomState.State;
