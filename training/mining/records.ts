import { z } from "zod";
import { TableRefSchema } from "../../blackboard/schemas.js";

/*
 * What mining keeps of one question's search: each branch as a node of the tree, with the
 * model turns that made it (input messages rebuilt with the nodes' own prompt builders), its
 * output and what running it printed. Enough to select pseudo-gold and export every format
 * without the search's full state.
 */

export const MINE_STAGES = ["planner", "coder", "answerer"] as const;
export type MineStage = (typeof MINE_STAGES)[number];

export const ChatMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/** One model call inside a node: a plan, a code attempt, an answer. */
export const NodeTurnSchema = z.object({
  role: z.enum(MINE_STAGES),
  messages: z.array(ChatMessageSchema),
  output: z.string(),
  /** What the code printed, then its error (`Type: message`); null for plans and answers. */
  execution: z.string().nullable(),
});
export type NodeTurn = z.infer<typeof NodeTurnSchema>;

export const MinedNodeSchema = z.object({
  /** The branch id: `p2`, `p2.c1`, `p2.c1.a3`. */
  id: z.string(),
  parent: z.string().nullable(),
  stage: z.enum(["plan", "code", "answer"]),
  turns: z.array(NodeTurnSchema),
  /** Plan: its steps; code: the last attempt's code; answer: the final answer. */
  text: z.string(),
  /** The last code attempt's output (code nodes); "" otherwise. */
  execution: z.string(),
  /** The official TableBench score of an answer against gold; null for other stages. */
  score: z.number().min(0).max(1).nullable(),
  /**
   * Code nodes: whether the last attempt's result depends on the tables (the sandbox's re-run
   * on perturbed tables); null for other stages and for records mined before it was known.
   */
  derived: z.enum(["yes", "no", "unknown"]).nullable().default(null),
});
export type MinedNode = z.infer<typeof MinedNodeSchema>;

/** One mined question: a line of mined.jsonl, keyed by `id`. */
export const MinedQuestionSchema = z.object({
  id: z.string(),
  stage: z.enum(MINE_STAGES),
  question: z.string(),
  gold: z.string(),
  qtype: z.string().nullable(),
  qsubtype: z.string().nullable(),
  tables: z.array(TableRefSchema),
  nodes: z.array(MinedNodeSchema),
  finishedAt: z.string(),
});
export type MinedQuestion = z.infer<typeof MinedQuestionSchema>;

/** A MARTI-style turn record: one turn of one trajectory (root to an answer). */
export const TurnRecordSchema = z.object({
  questionId: z.string(),
  /** The answer branch that ends the trajectory. */
  trajectory: z.string(),
  turn: z.number().int().nonnegative(),
  agent: z.object({ id: z.string(), role: z.enum(MINE_STAGES) }),
  input: z.array(ChatMessageSchema),
  output: z.string(),
  execution: z.string().nullable(),
  /** The node's correctness: its answer's score, or the mean of the answers below it. */
  reward: z.number(),
  /** MARTI's shaping of the trajectory's rewards (quality mode, alpha = beta = 0.5). */
  shapedReward: z.number(),
});
export type TurnRecord = z.infer<typeof TurnRecordSchema>;
