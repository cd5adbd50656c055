import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { addBudget, appendUniqueById, EMPTY_BUDGET, upsertById, upsertEdges } from "./reducers.js";
import {
  AnswerSchema,
  AttemptSchema,
  BranchSchema,
  BudgetSchema,
  CheckedAnswerSchema,
  ClaimSchema,
  EdgeSchema,
  EvidenceSchema,
  MemorySchema,
  ReflectionSchema,
  StageSchema,
  TableRefSchema,
  TableSourceSchema,
  VerdictSchema,
} from "./schemas.js";
import { TurnSchema } from "./turns.js";
import { reduceUiMessages, UiMessageSchema, UiUpdatesSchema } from "./ui-messages.js";

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
  // No defaults in an update: a cost left out adds nothing.
  {
    inputSchema: BudgetSchema.extend({ cachedCalls: z.number().int().nonnegative() }).partial(),
    reducer: addBudget,
  },
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

/** Generative UI messages for LangGraph clients: the tables as read, the answers (views/). */
const ui = new ReducedValue(
  z.array(UiMessageSchema).default(() => []),
  { inputSchema: UiUpdatesSchema, reducer: reduceUiMessages },
);

/** Where a solve starts, when the caller says: at the planner, the coder or the answerer. */
const startAt = z.enum(["planner", "coder", "answerer"]).nullable().default(null);
/** Where a solve stops, when the caller says: after the plan, after the code ran, or answered. */
const stopAfter = z.enum(["planner", "executor", "answerer"]).nullable().default(null);

/**
 * What `solve` reads: the question and tables, the conversation's earlier turns, what earlier
 * rounds left, where to start and stop.
 */
export const solveInput = {
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
export const solveOutput = { plan, attempts, evidence, claims, edges, answer, budget };

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
export const TableQAGraphState = new StateSchema({
  ...TableQAState.fields,
  reviews,
  gold,
  asked,
  ui,
});

/** The branches of a search over plans, codes and answers (mom, mcts), upserted by id. */
const branches = new ReducedValue(
  z.array(BranchSchema).default(() => []),
  { inputSchema: z.array(BranchSchema), reducer: upsertById },
);
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

export type SolveStateValue = typeof SolveState.State;
export type SolveInputValue = typeof SolveInput.State;
export type SolveOutputValue = typeof SolveOutput.State;
export type BranchTaskValue = typeof BranchTask.State;
export type ReviewStateValue = typeof ReviewState.State;
export type TableQAStateValue = typeof TableQAState.State;
export type SolveGraphStateValue = typeof SolveGraphState.State;
export type TableQAGraphStateValue = typeof TableQAGraphState.State;
export type TableQAUpdate = typeof TableQAState.Update;

/** The trajectory a search returns as the run's own: its chosen branch's. */
const chosen = { plan, attempts, evidence, claims, edges, answer, verdict };

/**
 * What a search over branches (mom, mcts) runs on: the question, tables and conversation, the
 * memories recalled, its branches and cost, and the chosen branch's trajectory as the run's.
 */
export const searchKeys = {
  question,
  asked,
  turns,
  sources,
  tables,
  memories,
  branches,
  ...chosen,
  budget,
  ui,
};

/** The keys graphs share, for a graph's own state to build on (graphs/<graph>/state.ts). */
export const keys = {
  question,
  sources,
  tables,
  plan,
  attempts,
  evidence,
  claims,
  edges,
  answer,
  verdict,
  checked,
  reflections,
  memories,
  gold,
  budget,
  reviews,
  turns,
  asked,
  branches,
  ui,
};
