import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { upsertById } from "../../blackboard/reducers.js";
import { TreeNodeSchema } from "../../blackboard/schemas.js";
import { keys, searchKeys } from "../../blackboard/state.js";

/** The search tree over `branches` (mcts), upserted by id; the root is `root`. */
const tree = new ReducedValue(
  z.array(TreeNodeSchema).default(() => []),
  { inputSchema: z.array(TreeNodeSchema), reducer: upsertById },
);

/**
 * mcts: a Monte-Carlo tree search over plans, codes and answers. Its rewards come from `gold`
 * when the caller knows the answer, else from the checker and agreement between answers. The
 * best answer's trajectory is the run's; the whole tree stays in `tree` and `branches`.
 */
export const MctsState = new StateSchema({ ...searchKeys, gold: keys.gold, tree });

export type MctsStateValue = typeof MctsState.State;
