import { ruleVerdict } from "../../../../grounding/verdict.js";
import { renderPlan } from "../../../../nodes/prompts.js";
import { defineWorker, TaskInput, taskWithInputs } from "../contract.js";

/** The solve subgraph as a worker: plan, pandas code run with retries, an answer from its output. */
export default defineWorker({
  name: "pandas",
  description:
    "Plans, writes and runs pandas code over the tables (retrying on errors) and answers from " +
    "what the code printed. Good for filtering, grouping, counting, ranking, joining tables and " +
    "anything that needs many rows read.",
  input: TaskInput,
  async run({ task }, kit) {
    const question = taskWithInputs(task, kit.inputs);
    const solved = await kit.solve(question);
    const { verdict } = await ruleVerdict({
      question: task,
      answer: solved.answer,
      evidence: solved.evidence,
      attempts: solved.attempts,
      tables: kit.tables,
      minConfidence: kit.config.minConfidence,
    });
    const runs = solved.attempts.map(
      (a) =>
        `${a.id}: ${a.result?.ok ? "ran" : `failed (${a.result?.error?.type ?? a.parseError})`}`,
    );
    return {
      answer: solved.answer?.final ?? null,
      evidence: solved.evidence,
      cited: solved.answer?.evidence,
      attempts: solved.attempts,
      trajectory: [`plan:\n${renderPlan(solved.plan)}`, ...runs],
      score: solved.answer ? verdict.confidence : 0,
    };
  },
});
