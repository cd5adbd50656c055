import { createInterface } from "node:readline/promises";
import { RunEventSchema } from "../nodes/events.js";
import { LABEL_WIDTH } from "../nodes/progress.js";
import type { ReviewDecision, ReviewRequest } from "../nodes/reviewer.js";

/*
 * What the CLI shows of a run's custom stream events (nodes/events.ts) and of its review pauses.
 */

const label = (node: string) => node.padEnd(LABEL_WIDTH);

const DONE = { approve: "approved", edit: "edited", reject: "rejected" } as const;

/**
 * What a run's progress shows: each node's line, code starting, evidence, reviews (the plan
 * and the vote are in their nodes' lines already).
 */
const LIVE = new Set(["progress", "code", "evidence", "review"]);

/**
 * One progress line for a custom stream event, under the node that sent it; null for what is
 * not one of ours, and for a node whose update makes no line. With `live`, only what a run's
 * progress shows.
 */
export function describeEvent(payload: unknown, options: { live?: boolean } = {}): string | null {
  const parsed = RunEventSchema.safeParse(payload);
  if (!parsed.success) return null;
  const event = parsed.data;
  if (options.live && !LIVE.has(event.event)) return null;
  switch (event.event) {
    case "progress":
      return event.line;
    case "plan":
      return `${label("planner")} plan of ${event.steps.length} steps`;
    case "code":
      return `${label("executor")} ${event.attempt} running ${event.lines} lines of python`;
    case "attempt-failed":
      return `${label("executor")} ${event.attempt} failed: ${event.error}`;
    case "evidence": {
      const shown = event.ids.slice(0, 6).join(", ");
      const more = event.ids.length > 6 ? ` and ${event.ids.length - 6} more` : "";
      return `${label("executor")} evidence ${shown}${more}`;
    }
    case "vote":
      return `${label("vote")} ${event.answer ?? "no answer"}: ${event.votes} of ${event.of} branches (${event.winner ?? "none"})`;
    case "review":
      return `${label("reviewer")} ${event.kind} ${DONE[event.action]}`;
  }
}

/** What a review pause shows, as the terminal prints it before asking. */
export function describePause(request: ReviewRequest): string {
  const lines = [request.problem ? `(${request.problem})` : ""];
  if (request.kind === "code") {
    lines.push(`review the code of ${request.attempt ?? "this attempt"} before it runs:`);
    lines.push(...(request.code ?? "").split("\n").map((line) => `  | ${line}`));
  } else {
    lines.push(`review the answer before it is final: ${request.answer ?? ""}`);
    if (request.evidence?.length) lines.push(`  citing ${request.evidence.join(", ")}`);
  }
  return lines.filter(Boolean).join("\n");
}

/** Reads a decision on a terminal: approve, edit (new code ends with a lone "."), or reject. */
export async function askOnTerminal(request: ReviewRequest): Promise<ReviewDecision> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    process.stderr.write(`${describePause(request)}\n`);
    for (;;) {
      const choice = (await rl.question("approve, edit or reject? [a/e/r] ")).trim().toLowerCase();
      if (choice === "a" || choice === "approve") return { action: "approve" };
      if (choice === "r" || choice === "reject") {
        return { action: "reject", reason: (await rl.question("why? ")).trim() };
      }
      if (choice !== "e" && choice !== "edit") continue;
      if (request.kind === "answer") {
        const value = (await rl.question("the answer: ")).trim();
        if (value) return { action: "edit", value };
        continue;
      }
      process.stderr.write('the new code, ended by a line with a lone ".":\n');
      const lines: string[] = [];
      for (;;) {
        const line = await rl.question("");
        if (line === ".") break;
        lines.push(line);
      }
      if (lines.join("").trim()) return { action: "edit", value: lines.join("\n") };
    }
  } finally {
    rl.close();
  }
}
