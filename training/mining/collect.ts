import type { Attempt, Branch, Memory, TableRef } from "../../blackboard/schemas.js";
import type { EvalExample, Scorer } from "../../evals/types.js";
import { ANSWERER_SYSTEM, answererPrompt } from "../../nodes/answerer.js";
import { CODER_SYSTEM, coderPrompt } from "../../nodes/coder.js";
import { PLANNER_SYSTEM, plannerPrompt } from "../../nodes/planner.js";
import {
  renderErrorHistory,
  renderMemories,
  renderPlan,
  renderTableNames,
  renderTables,
} from "../../nodes/prompts.js";
import { outputText } from "../rewards/execution.js";
import type { ChatMessage, MinedNode, MinedQuestion, MineStage, NodeTurn } from "./records.js";

/*
 * A search's branches as mined nodes. Each turn's input is rebuilt with the prompt builders the
 * nodes use, from what the branch's parent held when the turn ran (mining runs without
 * reflections, so none enter the prompts).
 */

/** What collecting needs of an mcts run's final state. */
export interface SearchResult {
  tables: TableRef[];
  memories: Memory[];
  branches: Branch[];
}

const chat = (system: string, user: string): ChatMessage[] => [
  { role: "system", content: system },
  { role: "user", content: user },
];

/** The planner's reply as the plan it kept: its steps in a <plan> block. */
export const planReply = (plan: string[]) => `<plan>\n${renderPlan(plan)}\n</plan>`;

function attemptOutput(attempt: Attempt): string {
  if (attempt.result) return outputText(attempt.result);
  return `Error: ${attempt.parseError ?? "the code did not run"}`;
}

export async function collectQuestion(
  example: EvalExample,
  stage: MineStage,
  search: SearchResult,
  options: { scorer: Scorer; sampleRows: number; contextTokens: number },
): Promise<MinedQuestion> {
  const { question } = example;
  const profiles = await renderTables(search.tables, question, options);
  const tableNames = renderTableNames(search.tables);
  const byId = new Map(search.branches.map((b) => [b.id, b]));
  const nodes: MinedNode[] = [];
  for (const branch of search.branches) {
    const parent = branch.parent ? byId.get(branch.parent) : undefined;
    const turns: NodeTurn[] = [];
    let text = "";
    let execution = "";
    let score: number | null = null;
    let derived: MinedNode["derived"] = null;
    if (branch.stage === "plan") {
      const user = plannerPrompt(question, profiles, tableNames, {
        memories: renderMemories(search.memories),
      });
      text = renderPlan(branch.plan);
      turns.push({
        role: "planner",
        messages: chat(PLANNER_SYSTEM, user),
        output: planReply(branch.plan),
        execution: null,
      });
    } else if (branch.stage === "code") {
      const before = parent?.attempts.length ?? 0;
      branch.attempts.slice(before).forEach((attempt, i) => {
        const user = coderPrompt({
          question,
          profiles,
          tableNames,
          plan: branch.plan,
          errorHistory: renderErrorHistory(branch.attempts.slice(0, before + i)),
        });
        turns.push({
          role: "coder",
          messages: chat(CODER_SYSTEM, user),
          output: attempt.raw,
          execution: attemptOutput(attempt),
        });
      });
      const last = branch.attempts.at(-1);
      text = last?.code ?? "";
      execution = last ? attemptOutput(last) : "";
      derived = last?.result?.result?.derived ?? "unknown";
    } else {
      const context = parent ?? { plan: [], attempts: [], evidence: [] };
      const ran = context.attempts.some((a) => a.result?.ok);
      const user = answererPrompt(
        { question, plan: context.plan, attempts: context.attempts, evidence: context.evidence },
        ran ? "" : profiles.join("\n\n"),
      );
      text = branch.answer?.final ?? "";
      turns.push({
        role: "answerer",
        messages: chat(ANSWERER_SYSTEM, user),
        output: branch.answer?.raw ?? "",
        execution: null,
      });
      const scored = await options.scorer.score(example, `Final Answer: ${text}`);
      score = branch.answer ? scored.score : 0;
    }
    nodes.push({
      id: branch.id,
      parent: branch.parent,
      stage: branch.stage,
      turns,
      text,
      execution,
      score,
      derived,
    });
  }
  return {
    id: example.id,
    stage,
    question,
    gold: example.gold,
    qtype: example.category ?? null,
    qsubtype: example.subcategory ?? null,
    tables: search.tables,
    nodes,
    finishedAt: new Date().toISOString(),
  };
}
