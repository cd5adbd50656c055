import { type GraphNode, interrupt } from "@langchain/langgraph";
import { z } from "zod";
import type { Attempt, ExecResult } from "../blackboard/schemas.js";
import type { Review, SolveGraphState, SolveGraphStateValue } from "../blackboard/state.js";
import { failedResult } from "../sandbox/results.js";
import type { Configuration } from "../settings/configuration.js";
import { type EventSink, emit } from "./events.js";
import type { NodeContext } from "./runtime.js";

/*
 * The human review step (`review`): the run pauses with LangGraph's `interrupt`, showing the
 * code about to run or the answer about to be final, and goes on with the person's decision,
 * sent as `Command({ resume })` by the SDK, Studio or the CLI.
 */

/** What the pause shows: the code before it runs, or the answer before it is final. */
export const ReviewRequestSchema = z.object({
  kind: z.enum(["code", "answer"]),
  question: z.string(),
  /** The attempt whose code is shown. */
  attempt: z.string().optional(),
  code: z.string().optional(),
  answer: z.string().optional(),
  /** The evidence the answer cites. */
  evidence: z.array(z.string()).optional(),
  /** Why the last resume value was not a decision, when it was not. */
  problem: z.string().optional(),
  /** How to answer. */
  resume: z.string(),
});
export type ReviewRequest = z.infer<typeof ReviewRequestSchema>;

/** A decision, as `Command({ resume })` carries it; a bare "approve" or "reject" will do. */
export const ReviewDecisionSchema = z.preprocess(
  (raw) => (raw === "approve" || raw === "reject" ? { action: raw } : raw),
  z.discriminatedUnion("action", [
    z.object({ action: z.literal("approve") }),
    z.object({ action: z.literal("edit"), value: z.string().trim().min(1) }),
    z.object({ action: z.literal("reject"), reason: z.string().default("") }),
  ]),
);
export type ReviewDecision = z.infer<typeof ReviewDecisionSchema>;

const HOW =
  '"approve", {"action": "edit", "value": "<the new text>"} or {"action": "reject", "reason": "..."}';

/** Whether the configuration pauses for this kind of review. */
export function reviewing(kind: "code" | "answer", config: Pick<Configuration, "review">): boolean {
  return config.review === kind || config.review === "both";
}

/** Pauses until the resume value is a decision; a value that is not one asks again, saying why. */
function decide(request: Omit<ReviewRequest, "resume" | "problem">): ReviewDecision {
  let problem: string | undefined;
  for (;;) {
    const shown: ReviewRequest = { ...request, resume: HOW, ...(problem ? { problem } : {}) };
    const parsed = ReviewDecisionSchema.safeParse(interrupt(shown));
    if (parsed.success) return parsed.data;
    problem = `that was not a decision: ${z.prettifyError(parsed.error)}`;
  }
}

function recorded(id: string, kind: Review["kind"], decision: ReviewDecision): Review {
  return {
    id,
    kind,
    action: decision.action,
    edited: decision.action === "edit" ? decision.value : null,
    reason: decision.action === "reject" ? decision.reason || null : null,
  };
}

/** A rejected attempt counts as a failed run whose error is the reviewer's reason. */
function rejectedRun(reason: string): ExecResult {
  const message = reason
    ? `a reviewer rejected this code: ${reason}`
    : "a reviewer rejected this code";
  return failedResult({ type: "Rejected", message, line: null }, 0);
}

function reviewCode(state: SolveGraphStateValue, attempt: Attempt, runtime: EventSink | undefined) {
  const decision = decide({
    kind: "code",
    question: state.question,
    attempt: attempt.id,
    code: attempt.code,
  });
  emit(runtime, { event: "review", kind: "code", action: decision.action });
  const reviews = [recorded(`review:${attempt.id}`, "code", decision)];
  if (decision.action === "approve") return { reviews };
  if (decision.action === "edit")
    return { attempts: [{ ...attempt, code: decision.value }], reviews };
  const result = rejectedRun(decision.reason);
  emit(runtime, {
    event: "attempt-failed",
    attempt: attempt.id,
    error: result.error?.message ?? "",
  });
  return { attempts: [{ ...attempt, result }], reviews };
}

function reviewAnswer(state: SolveGraphStateValue, runtime: EventSink | undefined) {
  const answer = state.answer;
  if (!answer) return {};
  const decision = decide({
    kind: "answer",
    question: state.question,
    answer: answer.final,
    evidence: answer.evidence,
  });
  emit(runtime, { event: "review", kind: "answer", action: decision.action });
  const reviews = [recorded("review:answer", "answer", decision)];
  if (decision.action === "approve") return { reviews };
  if (decision.action === "edit") return { answer: { ...answer, final: decision.value }, reviews };
  return { answer: null, reviews };
}

/**
 * Shows what comes next to a person: an attempt's code that has not run yet, else the answer.
 * Approve goes on; edit replaces the code or the answer; reject fails the attempt with the
 * reason (so the coder sees it), or withdraws the answer. Every decision is kept in `reviews`.
 */
export const reviewer = (async (state, runtime) => {
  const pending = state.attempts.at(-1);
  if (pending && pending.result === null) return reviewCode(state, pending, runtime);
  return reviewAnswer(state, runtime);
}) satisfies GraphNode<typeof SolveGraphState, NodeContext>;
