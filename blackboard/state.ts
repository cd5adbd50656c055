import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { addBudget, appendUniqueById, EMPTY_BUDGET, upsertById, upsertEdges } from "./reducers.js";
import {
  AnswerSchema,
  AttemptSchema,
  BallotSchema,
  BranchSchema,
  BudgetSchema,
  CheckedAnswerSchema,
  ClaimSchema,
  EdgeSchema,
  EvidenceSchema,
  MemorySchema,
  PacketSchema,
  ReflectionSchema,
  SelectionSchema,
  StageSchema,
  SubtaskSchema,
  TableRefSchema,
  TableSourceSchema,
  TreeNodeSchema,
  VerdictSchema,
} from "./schemas.js";
import { TurnSchema } from "./turns.js";

/*
 * The blackboard. Every key is declared once here; each graph's state, and each node's, is a
 * selection of these keys. Tables are references; evidence, claims and edges only grow
 * (deduplicated), so parallel branches and subgraphs can write to them safely.
 */

const question = z.string();
/** Files or inline tables to ingest; `ingest` turns them into `tables`. */
const sources = z.array(TableSourceSchema).default(() => []);
const tables = z.array(TableRefSchema).default(() => []);
/** Numbered plan steps; empty until the planner ran. */
const plan = z.array(z.string()).default(() => []);
const attempts = new ReducedValue(
  z.array(AttemptSchema).default(() => []),
  { inputSchema: z.array(AttemptSchema), reducer: upsertById },
);
const evidence = new ReducedValue(
  z.array(EvidenceSchema).default(() => []),
  { inputSchema: z.array(EvidenceSchema), reducer: appendUniqueById },
);
const claims = new ReducedValue(
  z.array(ClaimSchema).default(() => []),
  { inputSchema: z.array(ClaimSchema), reducer: upsertById },
);
const edges = new ReducedValue(
  z.array(EdgeSchema).default(() => []),
  { inputSchema: z.array(EdgeSchema), reducer: upsertEdges },
);
const answer = AnswerSchema.nullable().default(null);
/** The checker's judgement of `answer`; null until checked. */
const verdict = VerdictSchema.nullable().default(null);
/** Every answer checked so far, so the best one survives when reflections run out. */
const checked = new ReducedValue(
  z.array(CheckedAnswerSchema).default(() => []),
  { inputSchema: z.array(CheckedAnswerSchema), reducer: upsertById },
);
const reflections = new ReducedValue(
  z.array(ReflectionSchema).default(() => []),
  { inputSchema: z.array(ReflectionSchema), reducer: upsertById },
);
/** Lessons recalled from past episodes for the planner. */
const memories = z.array(MemorySchema).default(() => []);
/**
 * The expected answer, when the caller knows it (an evaluation or mining over a dataset with
 * gold answers); null otherwise. Given to table_qa, its archiver learns from the run by it: a
 * match is verified, a mismatch a known failure (see nodes/archiver.ts).
 */
const gold = z.string().nullable().default(null);
const budget = new ReducedValue(
  BudgetSchema.default(() => EMPTY_BUDGET),
  { inputSchema: BudgetSchema.partial(), reducer: addBudget },
);

/** A person's decision at a review pause (`review`): what was shown, and what they chose. */
export const ReviewSchema = z.object({
  /** `review:<attempt id>` for code, `review:answer` for the answer. */
  id: z.string(),
  kind: z.enum(["code", "answer"]),
  action: z.enum(["approve", "edit", "reject"]),
  /** The code or answer as edited. */
  edited: z.string().nullable(),
  /** Why it was rejected. */
  reason: z.string().nullable(),
});
export type Review = z.infer<typeof ReviewSchema>;
const reviews = new ReducedValue(
  z.array(ReviewSchema).default(() => []),
  { inputSchema: z.array(ReviewSchema), reducer: upsertById },
);

/** The earlier turns of the thread's conversation, oldest first (blackboard/turns.ts). */
const turns = new ReducedValue(
  z.array(TurnSchema).default(() => []),
  { inputSchema: z.array(TurnSchema), reducer: upsertById },
);
/**
 * The question the per-question keys (plan, attempts, evidence, answer, ...) belong to, set as
 * a turn opens; a run with another question opens a new turn. Null before the first.
 */
const asked = z.string().nullable().default(null);

/** Where a solve starts, when the caller says: at the planner, the coder or the answerer. */
const startAt = z.enum(["planner", "coder", "answerer"]).nullable().default(null);
/** Where a solve stops, when the caller says: after the plan, after the code ran, or answered. */
const stopAfter = z.enum(["planner", "executor", "answerer"]).nullable().default(null);

/**
 * What `solve` reads: the question and tables, the conversation's earlier turns, what earlier
 * rounds left, where to start and stop.
 */
const solveInput = {
  question,
  tables,
  turns,
  plan,
  attempts,
  evidence,
  reflections,
  memories,
  startAt,
  stopAfter,
};
/** What `solve` writes. Its budget starts empty inside, so the caller adds only its cost. */
const solveOutput = { plan, attempts, evidence, claims, edges, answer, budget };

/** The solve subgraph (plan -> code -> execute, retried -> answer) and its nodes. */
export const SolveState = new StateSchema({ ...solveInput, ...solveOutput });
export const SolveInput = new StateSchema(solveInput);
export const SolveOutput = new StateSchema(solveOutput);

/**
 * The states solve and table_qa run on: their nodes' states and the decisions taken at review
 * pauses (`review`), which only the reviewer writes.
 */
export const SolveGraphState = new StateSchema({ ...solveInput, ...solveOutput, reviews });
export const SolveGraphOutput = new StateSchema({ ...solveOutput, reviews });

/** A solved run under review: the checker, the reflector, the finalizer and memory. */
export const ReviewState = new StateSchema({
  ...solveInput,
  ...solveOutput,
  verdict,
  checked,
});

/** Opening a turn of a thread's conversation: what it archives and what it keeps. */
export const TurnState = new StateSchema({
  question,
  asked,
  turns,
  tables,
  answer,
  evidence,
  verdict,
});

/** Turning sources into table references, for a question. */
export const IngestState = new StateSchema({ question, sources, tables });

/** table_qa: one trajectory with checks, reflections and long-term memory. */
export const TableQAState = new StateSchema({
  ...solveInput,
  ...solveOutput,
  sources,
  verdict,
  checked,
});

/**
 * table_qa's graph: its state, the decisions taken at review pauses, the gold answer if known,
 * and the question its per-question keys belong to.
 */
export const TableQAGraphState = new StateSchema({ ...TableQAState.fields, reviews, gold, asked });

/** The branches of a search over plans, codes and answers (mom, mcts), upserted by id. */
const branches = new ReducedValue(
  z.array(BranchSchema).default(() => []),
  { inputSchema: z.array(BranchSchema), reducer: upsertById },
);
/** How the branches' answers were settled; null until the vote. */
const ballot = BallotSchema.nullable().default(null);
/** The trajectory a search returns as the run's own: its chosen branch's. */
const chosen = { plan, attempts, evidence, claims, edges, answer, verdict };

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
export const MctsState = new StateSchema({
  question,
  asked,
  turns,
  sources,
  tables,
  memories,
  /** The expected answer, when known (mining training data); null otherwise. */
  gold: z.string().nullable().default(null),
  branches,
  tree,
  ...chosen,
  budget,
});

/** One branch to grow: from its parent (none: a new plan) through the stages up to `until`. */
export const BranchTask = new StateSchema({
  question,
  tables,
  turns,
  memories,
  id: z.string(),
  parent: BranchSchema.nullable(),
  until: StageSchema,
  /** Seeds the branch's sampling, so that branches differ and a rerun repeats them. */
  seed: z.number().int(),
  /** The stages whose model samples here (a stage that branches), at 1.0 unless configured. */
  sampled: z.array(StageSchema),
});

/** What a branch adds to the search: itself, and its cost. */
export const BranchOutput = new StateSchema({ branches, budget });

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

export type SolveStateValue = typeof SolveState.State;
export type SolveInputValue = typeof SolveInput.State;
export type SolveOutputValue = typeof SolveOutput.State;
export type MomStateValue = typeof MomState.State;
export type MctsStateValue = typeof MctsState.State;
export type BranchTaskValue = typeof BranchTask.State;
export type ReviewStateValue = typeof ReviewState.State;
export type TableQAStateValue = typeof TableQAState.State;
export type SolveGraphStateValue = typeof SolveGraphState.State;
export type TableQAGraphStateValue = typeof TableQAGraphState.State;
export type TableQAUpdate = typeof TableQAState.Update;
export type OrchestratorStateValue = typeof OrchestratorState.State;
export type WorkerTaskValue = typeof WorkerTask.State;
