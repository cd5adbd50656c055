import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { addBudget, appendUniqueById, EMPTY_BUDGET, upsertById, upsertEdges } from "./reducers.js";
import {
  AnswerSchema,
  AttemptSchema,
  BudgetSchema,
  CheckedAnswerSchema,
  ClaimSchema,
  EdgeSchema,
  EvidenceSchema,
  MemorySchema,
  ReflectionSchema,
  TableRefSchema,
  TableSourceSchema,
  VerdictSchema,
} from "./schemas.js";

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
const budget = new ReducedValue(
  BudgetSchema.default(() => EMPTY_BUDGET),
  { inputSchema: BudgetSchema.partial(), reducer: addBudget },
);

/** What `solve` reads: the question and tables, and what earlier rounds left. */
const solveInput = { question, tables, plan, attempts, evidence, reflections, memories };
/** What `solve` writes. Its budget starts empty inside, so the caller adds only its cost. */
const solveOutput = { plan, attempts, evidence, claims, edges, answer, budget };

/** The solve subgraph (plan -> code -> execute, retried -> answer) and its nodes. */
export const SolveState = new StateSchema({ ...solveInput, ...solveOutput });
export const SolveInput = new StateSchema(solveInput);
export const SolveOutput = new StateSchema(solveOutput);

/** A solved run under review: the checker, the reflector, the finalizer and memory. */
export const ReviewState = new StateSchema({
  ...solveInput,
  ...solveOutput,
  verdict,
  checked,
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

export type SolveStateValue = typeof SolveState.State;
export type ReviewStateValue = typeof ReviewState.State;
export type TableQAStateValue = typeof TableQAState.State;
export type TableQAUpdate = typeof TableQAState.Update;
