import { z } from "zod";
import type { Ballot } from "../blackboard/schemas.js";

/*
 * Custom stream events: what a node tells a watcher while it works, beside its state update.
 * They reach a client that streams with mode "custom" (the CLI, Studio, the SDK); without
 * that mode LangGraph drops them.
 */

export const RunEventSchema = z.discriminatedUnion("event", [
  /** The planner produced a plan. */
  z.object({ event: z.literal("plan"), steps: z.array(z.string()) }),
  /** An attempt's code starts running in the sandbox. */
  z.object({ event: z.literal("code"), attempt: z.string(), lines: z.number().int() }),
  /** An attempt's code failed (or there was none, or a reviewer rejected it). */
  z.object({ event: z.literal("attempt-failed"), attempt: z.string(), error: z.string() }),
  /** Evidence posted to the blackboard, by id. */
  z.object({ event: z.literal("evidence"), ids: z.array(z.string()) }),
  /** mom's vote: the answer chosen, its branch, its votes out of all answering branches. */
  z.object({
    event: z.literal("vote"),
    answer: z.string().nullable(),
    winner: z.string().nullable(),
    votes: z.number().int(),
    of: z.number().int(),
  }),
  /** A node finished: its progress line, if its update makes one (nodes/progress.ts). */
  z.object({ event: z.literal("progress"), node: z.string(), line: z.string().nullable() }),
  /** A person's decision at a review pause. */
  z.object({
    event: z.literal("review"),
    kind: z.enum(["code", "answer"]),
    action: z.enum(["approve", "edit", "reject"]),
  }),
]);
export type RunEvent = z.infer<typeof RunEventSchema>;

/** The part of a node's runtime that carries LangGraph's custom stream writer. */
export interface EventSink {
  writer?: (chunk: unknown) => void;
}

/** Sends `event` to the custom stream of the run, if anyone listens. */
export function emit(runtime: EventSink | undefined, event: RunEvent): void {
  runtime?.writer?.(event);
}

/** The vote event of a ballot: the chosen answer's branches against all that answered. */
export function voteEvent(ballot: Ballot): RunEvent {
  const top = ballot.tally.find((t) => t.branches.includes(ballot.winner ?? ""));
  const of = ballot.tally.reduce((n, t) => n + t.branches.length, 0);
  const { answer, winner } = ballot;
  return { event: "vote", answer, winner, votes: top?.branches.length ?? 0, of };
}
