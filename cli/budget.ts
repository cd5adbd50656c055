import type { Answer, Verdict } from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import { unsupported } from "../grounding/verdict.js";
import { ROLES, resolveModel } from "../models/config.js";
import { modelsOf } from "../nodes/llm.js";
import type { Configuration } from "../settings/configuration.js";

/*
 * A run on the embedded model has a wall-clock budget (`localBudgetMs`): when it runs out, the
 * run stops where it is and ends not sure, with the best candidate it had, rather than an error.
 */

/** Whether any role of the run answers on an embedded local model. */
export function runsOnLocalModel(config: Configuration): boolean {
  return ROLES.some((role) => {
    try {
      return resolveModel(role, modelsOf(config)).local !== undefined;
    } catch {
      return false;
    }
  });
}

/** The run's budget as a signal, when it has one. */
export function localBudget(config: Configuration): AbortSignal | undefined {
  return config.localBudgetMs > 0 && runsOnLocalModel(config)
    ? AbortSignal.timeout(config.localBudgetMs)
    : undefined;
}

type Stopped = Pick<TableQAStateValue, "question"> &
  Partial<Pick<TableQAStateValue, "answer" | "verdict" | "attempts">>;

/**
 * The state a run stopped by its budget ends with: its last state, the answer it had (else the
 * last result its code computed) as the best candidate, never sure. A verdict already given on
 * that answer stays, marked not sure; else the verdict says the check did not run.
 */
export function outOfBudget<S extends Stopped>(
  last: S,
  budgetMs: number,
): S & { answer: Answer; verdict: Verdict } {
  const ran = `the run's budget of ${budgetMs / 1000} s (localBudgetMs) ran out`;
  const computed = last.attempts?.findLast((a) => a.result?.ok && a.result.result)?.result?.result;
  const final = last.answer?.final ?? computed?.text ?? "";
  const answer = last.answer ?? { raw: final, final, evidence: [] };
  if (last.verdict && last.verdict.answer === final) {
    const issues = [...last.verdict.issues, ran];
    return { ...last, answer, verdict: { ...last.verdict, issues, sure: false } };
  }
  const issue = final ? `${ran} before this answer was checked` : `${ran} before any answer`;
  const verdict = unsupported(final, last.question, issue);
  return { ...last, answer, verdict };
}
