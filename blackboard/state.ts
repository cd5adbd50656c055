import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { addBudget, appendUniqueById, EMPTY_BUDGET, upsertById } from "./reducers.js";
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

/**
 * The blackboard every node of `table_qa` reads and writes. Tables are references;
 * evidence and claims only grow (deduplicated by id), so parallel branches can
 * write to them safely.
 */
export const TableQAState = new StateSchema({
  question: z.string(),
  /** Files or inline tables to ingest; `ingest` turns them into `tables`. */
  sources: z.array(TableSourceSchema).default(() => []),
  tables: z.array(TableRefSchema).default(() => []),
  /** Numbered plan steps; empty until the planner ran. */
  plan: z.array(z.string()).default(() => []),
  attempts: new ReducedValue(
    z.array(AttemptSchema).default(() => []),
    {
      inputSchema: z.array(AttemptSchema),
      reducer: upsertById,
    },
  ),
  evidence: new ReducedValue(
    z.array(EvidenceSchema).default(() => []),
    {
      inputSchema: z.array(EvidenceSchema),
      reducer: appendUniqueById,
    },
  ),
  claims: new ReducedValue(
    z.array(ClaimSchema).default(() => []),
    {
      inputSchema: z.array(ClaimSchema),
      reducer: upsertById,
    },
  ),
  edges: new ReducedValue(
    z.array(EdgeSchema).default(() => []),
    {
      inputSchema: z.array(EdgeSchema),
      reducer: (current, update) => [...current, ...update],
    },
  ),
  answer: AnswerSchema.nullable().default(null),
  /** The checker's judgement of `answer`; null until checked. */
  verdict: VerdictSchema.nullable().default(null),
  /** Every answer checked so far, so the best one survives when reflections run out. */
  checked: new ReducedValue(
    z.array(CheckedAnswerSchema).default(() => []),
    {
      inputSchema: z.array(CheckedAnswerSchema),
      reducer: upsertById,
    },
  ),
  reflections: new ReducedValue(
    z.array(ReflectionSchema).default(() => []),
    {
      inputSchema: z.array(ReflectionSchema),
      reducer: upsertById,
    },
  ),
  /** Lessons recalled from past episodes for the planner. */
  memories: z.array(MemorySchema).default(() => []),
  budget: new ReducedValue(
    BudgetSchema.default(() => EMPTY_BUDGET),
    {
      inputSchema: BudgetSchema.partial(),
      reducer: addBudget,
    },
  ),
});

export type TableQAStateValue = typeof TableQAState.State;
export type TableQAUpdate = typeof TableQAState.Update;
