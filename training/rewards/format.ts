import { parsePrediction } from "../../evals/metrics/tablebench.js";
import { parseCode } from "../../nodes/coder.js";

/*
 * The format checks of the rewards, 1 when a reply has the shape its role asks for, else 0.
 *   plan, strict: a closed <plan>...</plan> block holding at least one numbered step
 *   plan, loose:  at least one numbered step anywhere
 *   code:         exactly one ```python block
 *   answer:       a "Final Answer: ..." line, as TableBench's parser reads it
 */

export type PlanFormat = "strict" | "loose";

/** The planner's step shape (nodes/planner.ts): "1. ...", "2) ...", "Step 3: ...". */
const STEP = /^\s*[*#]*\s*(?:step\s*)?\d+\s*[.):-]\s*\S/im;
const PLAN_BLOCK = /<plan>([\s\S]*?)<\/plan>/i;
const PYTHON_BLOCK = /```python[^\S\n]*\n[\s\S]*?```/g;

/** The text inside the first <plan> block, or the whole reply when there is none. */
export function planBody(reply: string): string {
  return PLAN_BLOCK.exec(reply)?.[1] ?? reply;
}

export function planFormat(reply: string, mode: PlanFormat): number {
  if (mode === "loose") return STEP.test(reply) ? 1 : 0;
  const block = PLAN_BLOCK.exec(reply);
  return block && STEP.test(block[1] ?? "") ? 1 : 0;
}

export function codeFormat(reply: string): number {
  return [...reply.matchAll(PYTHON_BLOCK)].length === 1 ? 1 : 0;
}

/** The code of a well-formed coder reply (its one python block), else null. */
export function codeOf(reply: string): string | null {
  if (codeFormat(reply) === 0) return null;
  try {
    return parseCode(reply);
  } catch {
    return null; // an empty block
  }
}

export function answerFormat(reply: string): number {
  return parsePrediction(reply) === null ? 0 : 1;
}
