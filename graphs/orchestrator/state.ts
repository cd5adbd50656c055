import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { upsertById } from "../../blackboard/reducers.js";
import { PacketSchema, SelectionSchema, SubtaskSchema } from "../../blackboard/schemas.js";
import { keys, solveInput, solveOutput } from "../../blackboard/state.js";

const {
  question,
  tables,
  turns,
  asked,
  sources,
  verdict,
  checked,
  attempts,
  evidence,
  budget,
  ui,
} = keys;

/** The orchestrator's subtasks, as its planner split the question (capped by maxSubtasks). */
const subtasks = z.array(SubtaskSchema).default(() => []);
/** What the workers returned, one packet per subtask and worker, upserted by id. */
const packets = new ReducedValue(
  z.array(PacketSchema).default(() => []),
  { inputSchema: z.array(PacketSchema), reducer: upsertById },
);
/** Dispatch rounds begun so far. */
const round = z.number().int().nonnegative().default(0);
/** The workers the current round sends out, each for its subtask. */
const dispatching = z
  .array(z.object({ subtask: z.string(), worker: z.string() }))
  .default(() => []);
/** The packets the answer rests on; null until selected. */
const selection = SelectionSchema.nullable().default(null);

/**
 * orchestrator: a planner splits the question into subtasks, registered workers solve them
 * (independent ones side by side, dependent ones after their inputs), and the answer is
 * composed from the evidence selected out of their packets, then checked.
 */
export const OrchestratorState = new StateSchema({
  ...solveInput,
  ...solveOutput,
  asked,
  sources,
  verdict,
  checked,
  subtasks,
  packets,
  round,
  dispatching,
  selection,
  ui,
});

/** One subtask for one worker, with the answers of the subtasks it depends on. */
export const WorkerTask = new StateSchema({
  question,
  tables,
  turns,
  subtask: SubtaskSchema,
  worker: z.string(),
  inputs: z.array(
    z.object({
      id: z.string(),
      task: z.string(),
      answer: z.string().nullable(),
      derived: PacketSchema.shape.derived,
    }),
  ),
});

/** What a worker adds to the blackboard: its packet, its evidence and attempts, its cost. */
export const WorkerOutput = new StateSchema({ packets, attempts, evidence, budget });

export type OrchestratorStateValue = typeof OrchestratorState.State;
export type WorkerTaskValue = typeof WorkerTask.State;
