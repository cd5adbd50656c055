import type {
  Answer,
  Attempt,
  CheckedAnswer,
  ExecResult,
  TableRef,
  Verdict,
} from "../../blackboard/schemas.js";
import { evidenceFromExecution } from "../../grounding/evidence.js";
import { ruleVerdict } from "../../grounding/verdict.js";

/** A verdict with the given scores; it passes when every score is 2 unless told otherwise. */
export function verdict(
  answer: string,
  scores: Partial<Verdict["scores"]> = {},
  issues: string[] = [],
): Verdict {
  const full = { type: 2, format: 2, grounding: 2, ...scores };
  return {
    answer,
    expectedType: "number",
    scores: full,
    issues,
    pass: full.type === 2 && full.format === 2 && full.grounding === 2,
    by: "rules",
    claims: [],
    support: full.grounding === 2 ? "derived" : "none",
    confidence: full.grounding === 2 ? 0.9 : 0.3,
    sure: full.grounding === 2,
    unchecked: false,
  };
}

export function answer(final: string, evidence: string[] = []): Answer {
  return { raw: `Final Answer: ${final}`, final, evidence };
}

export function checked(id: string, final: string, scores: Partial<Verdict["scores"]> = {}) {
  return { id, answer: answer(final), verdict: verdict(final, scores) } satisfies CheckedAnswer;
}

/** What runs code: a sandbox's execute. */
interface Executes {
  execute(request: { code: string; tables: TableRef[] }): Promise<ExecResult>;
}

/**
 * Runs `code` over `tables` in `sandbox` and judges `answer` (by default what the code printed)
 * as the executor and the checker's rules would: the attempt, its evidence, the verdict.
 */
export async function judgeRun(
  sandbox: Executes,
  question: string,
  code: string,
  tables: TableRef[],
  answer?: string,
): Promise<{ result: ExecResult; final: string; verdict: Verdict }> {
  const result = await sandbox.execute({ code, tables });
  const final = answer ?? result.stdout.trim();
  const attempt: Attempt = { id: "a1", code, raw: code, result, parseError: null };
  const evidence = evidenceFromExecution(attempt, result, "executor", "2026-01-01T00:00:00Z");
  const { verdict } = await ruleVerdict({
    question,
    answer: { raw: `Final Answer: ${final}`, final, evidence: [] },
    evidence,
    attempts: [attempt],
    tables,
  });
  return { result, final, verdict };
}
