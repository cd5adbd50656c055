import { z } from "zod";
import type { Attempt, Evidence, ExecResult, TableRef } from "../../../blackboard/schemas.js";
import type { SolveOutputValue } from "../../../blackboard/state.js";
import type { SqlResult } from "../../../sandbox/duckdb.js";
import type { Configuration } from "../../../settings/configuration.js";
import type { Finding } from "./findings.js";

/*
 * The contract of a worker: what a worker file exports and what it gets to do its job. A worker
 * never touches the blackboard itself; the orchestrator's `worker` node turns its result into a
 * packet, with its evidence, attempts and cost.
 */

/** The zod the contract is written in: a worker file needs no other import to declare its input. */
export { z };

/** Every worker reads at least the sub-question. */
export const TaskInput = z.object({ task: z.string().min(1) });

/** The answer of a subtask this one depends on. */
export interface WorkerInput {
  id: string;
  task: string;
  answer: string | null;
  /** Whether that answer is derived from the tables (see Packet.derived); absent: unknown. */
  derived?: "yes" | "no" | "unknown";
}

/** What a worker may call on: each call is counted in the run's budget. */
export interface WorkerKit {
  /** The user's whole question, for context. */
  question: string;
  tables: TableRef[];
  /** The answers of the subtasks this one depends on. */
  inputs: WorkerInput[];
  /** `<subtask>.<worker>`: ids of this worker's attempts and evidence start with it. */
  id: string;
  config: Configuration;
  signal?: AbortSignal;
  /** Plan, code, run (with retries) and answer a question: the solve subgraph. */
  solve(question: string): Promise<SolveOutputValue>;
  /** One exchange with the model of a role; `system` should start with `# tableminds <name>`. */
  ask(role: "planner" | "coder" | "answerer", system: string, user: string): Promise<string>;
  /** Runs Python in the run's sandbox, with the tables loaded as DataFrames. */
  run(code: string): Promise<ExecResult>;
  /**
   * A read-only SQL query over the tables (DuckDB), each table under its name; its
   * `derivation` says whether the result depends on the tables (re-run on perturbed copies).
   * `sqlAttempt` (sandbox/duckdb-result.ts) makes it an attempt the checker can read.
   */
  sql(query: string): Promise<SqlResult>;
  /**
   * `sql`, with what it found ready to return: the query as an attempt (`<id>.q1`, ...) the
   * checker reads, its rows and result as evidence, the answer its rows state.
   * `return { ...(await kit.findBySql(query)), trajectory, score }` is a whole result.
   */
  findBySql(query: string, raw?: string): Promise<Finding<SqlResult>>;
  /** `run`, with what it found ready to return: the attempt (`<id>.a1`, ...), evidence, answer. */
  findByCode(code: string, raw?: string): Promise<Finding<ExecResult>>;
}

/** What a worker returns for its subtask. */
export interface WorkerResult {
  answer: string | null;
  /** Evidence it produced; ids should start with the kit's id (cells keep their own). */
  evidence: Evidence[];
  /** Ids of the evidence the answer rests on (default: all of `evidence`). */
  cited?: string[];
  /** Code it ran, when it ran any, so the checker can read it. */
  attempts?: Attempt[];
  /** What it did, a line a step. */
  trajectory: string[];
  /** Confidence in the answer, 0-1. */
  score: number;
}

export interface Worker<Input extends z.ZodObject = z.ZodObject> {
  /** Lower case, as the planner writes it: `pandas`, `sql`. */
  name: string;
  /** What it is good for, read by the planner when it splits a question. */
  description: string;
  /** Its input: the task, and anything else the planner must fill in. */
  input: Input;
  run(input: z.infer<Input>, kit: WorkerKit): Promise<WorkerResult>;
}

export type { Finding } from "./findings.js";

/** Declares a worker (the identity, typed: the input schema types `run`). */
export function defineWorker<Input extends z.ZodObject<{ task: z.ZodString }>>(
  worker: Worker<Input>,
): Worker<Input> {
  return worker;
}

/** What a worker file must export (as `default` or `worker`), checked when it is loaded. */
export const WorkerDeclarationSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/, "lower-case letters, digits, - or _, starting with a letter"),
  description: z.string().trim().min(1, "say what the worker is good for"),
  input: z.custom<z.ZodObject>((value) => value instanceof z.ZodObject, {
    message: "a zod object schema",
  }),
  run: z.custom<Worker["run"]>((value) => typeof value === "function", {
    message: "a function (input, kit) => result",
  }),
});

/** The sub-question with the answers it builds on, as a worker hands it to a model. */
export function taskWithInputs(task: string, inputs: WorkerInput[]): string {
  if (inputs.length === 0) return task;
  const known = inputs.map((i) => `- ${i.id} (${i.task}): ${i.answer ?? "no answer"}`);
  return `${task}\n\nAlready found by earlier steps:\n${known.join("\n")}`;
}
