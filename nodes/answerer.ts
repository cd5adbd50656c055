import type { GraphNode } from "@langchain/langgraph";
import { lastSuccessful } from "../blackboard/attempts.js";
import type { Attempt } from "../blackboard/schemas.js";
import type { SolveState, SolveStateValue } from "../blackboard/state.js";
import { resultOrigin } from "../grounding/derivation.js";
import { claimsFrom, verifyGrounding } from "../grounding/verify.js";
import { OPEN_PRIVACY } from "../tables/privacy.js";
import { parseAnswer } from "./final-answer.js";
import { ask } from "./llm.js";
import {
  numberLines,
  promptPrivacy,
  renderEvidenceList,
  renderPlan,
  renderTables,
} from "./prompts.js";
import { configurationOf, type NodeContext } from "./runtime.js";

export { type ParsedAnswer, parseAnswer } from "./final-answer.js";

export const ANSWERER_SYSTEM = `# tableminds answerer
You state the answer to a question about tables from the results of code that was run
over them. Each result has an id in square brackets. When the code computed a result (the
one marked "the code's result"), the answer is that result, written as the question wants it;
do not pick a different value from the output or the table.

Reply with two lines:
Final Answer: <the answer>
Evidence: <ids of the results the answer rests on, comma separated>

The answer is as short as possible: a number (no units or thousands separators unless the
question asks for them), a name, a date, Yes or No, or several of these separated by commas.
If the results do not answer the question, say what is missing in the answer line.`;

export function answererPrompt(
  state: Pick<SolveStateValue, "question" | "plan" | "attempts" | "evidence">,
  tableSummary: string,
  privacy = OPEN_PRIVACY,
): string {
  const sections = [`Question: ${state.question}`];
  if (state.plan.length > 0) sections.push(`Plan:\n${renderPlan(state.plan)}`);
  const good = lastSuccessful(state.attempts);
  if (good?.result) {
    sections.push(`Code (${good.id}):\n\`\`\`python\n${numberLines(good.code)}\n\`\`\``);
    sections.push(`Output:\n${privacy.output(good.result)}`);
    const result = good.result.result;
    if (result) {
      sections.push(
        `The code's result [${good.id}:result] (${resultOrigin(result)}):\n${privacy.result(result)}`,
      );
      if (!privacy.showsResult(result)) sections.push(privacy.citeKept(`${good.id}:result`));
    }
    const own = state.evidence.filter((e) => e.provenance.attempt === good.id);
    if (own.length > 0) sections.push(`Results:\n${renderEvidenceList(own, privacy)}`);
  } else {
    sections.push(
      `No code attempt succeeded (${state.attempts.length} tried). Answer from the table below if you can.`,
    );
    sections.push(tableSummary);
  }
  return sections.join("\n\n");
}

/** Floats as an answer gives them: at most two decimals (TableBench's and most questions' way). */
function answerValue(value: unknown): string {
  if (typeof value === "number" && !Number.isInteger(value))
    return String(Number(value.toFixed(2)));
  return String(value);
}

/**
 * The answer of a query's attempt, with no model call: its result is the answer (a small model
 * asked to restate it only rewrites it in prose). Only a value or a short list of values.
 */
export function queryAnswer(attempt: Attempt): string | undefined {
  const result = attempt.result?.result;
  if (!attempt.query || !result || (result.kind !== "scalar" && result.kind !== "list"))
    return undefined;
  if (result.values.length === 0 || result.values.length > 20) return undefined;
  if (result.values.some((v) => v === null || v === undefined)) return undefined;
  return `Final Answer: ${result.values.map(answerValue).join(", ")}\nEvidence: ${attempt.id}:result`;
}

/**
 * Answers from the last successful attempt. The answer cites what the model named and what
 * grounding traces its items to: the same engine the checker uses, so the cells cited here are
 * the ones the checker counts as support, under the same claim ids.
 */
export const answerer = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const privacy = await promptPrivacy(state, config);
  const good = lastSuccessful(state.attempts);
  const summary = good
    ? ""
    : (await renderTables(state.tables, state.question, config)).join("\n\n");
  const direct = good ? queryAnswer(good) : undefined;
  const reply = direct
    ? { text: direct, budget: {} }
    : await ask(
        "answerer",
        ANSWERER_SYSTEM,
        answererPrompt(state, summary, privacy),
        config,
        runtime?.signal,
        { privacy },
      );
  const said = parseAnswer(reply.text);
  // A value the model could not see and named by its id is filled in here.
  const parsed = { ...said, final: privacy.fillAnswer(said.final, state.evidence) };
  const grounding = await verifyGrounding({
    answer: parsed.final,
    evidence: state.evidence,
    attempts: state.attempts,
    tables: state.tables,
    question: state.question,
    source: "answerer",
  });
  const { claims, edges } = claimsFrom(parsed.final, grounding.checks);
  const known = new Set(state.evidence.map((e) => e.id));
  const cited = parsed.cited.filter((id) => known.has(id));
  const traced = grounding.checks.flatMap((check) => check.supports);
  return {
    answer: { raw: reply.text, final: parsed.final, evidence: [...new Set([...cited, ...traced])] },
    evidence: grounding.cells,
    claims,
    edges,
    budget: reply.budget,
  };
}) satisfies GraphNode<typeof SolveState, NodeContext>;
