import type { GraphNode } from "@langchain/langgraph";
import { lastSuccessful } from "../blackboard/attempts.js";
import type { Verdict } from "../blackboard/schemas.js";
import type { ReviewState, ReviewStateValue } from "../blackboard/state.js";
import { resultOf, resultOrigin } from "../grounding/derivation.js";
import { describeFigure } from "../grounding/figure-text.js";
import { asksForChart, chartAttempt } from "../grounding/figures.js";
import { combine, type ModelScores, ruleVerdict } from "../grounding/verdict.js";
import { claimsFrom, type ItemCheck } from "../grounding/verify.js";
import { OPEN_PRIVACY, type PromptPrivacy } from "../tables/privacy.js";
import { ask, askOrFallBack, ReplyParseError } from "./llm.js";
import { numberLines, promptPrivacy, renderTables } from "./prompts.js";
import { configurationOf, type NodeContext } from "./runtime.js";

/*
 * The checker node: the rules of grounding/verdict.ts judge the answer, then, with
 * `llmChecker`, a model refines the scores (see `combine`).
 */

export const CHECKER_SYSTEM = `# tableminds checker
You review one answer to a question about tables before it is given to the user. Automatic
checks already traced the answer to the code's result and held the computation against the
question (the alignment, in words). Your one question: does this computation answer this
question? Look at the columns it reads, the rows it keeps (filters, totals rows), the
operation it performs (total, mean, median, extreme, count, share) and how many items it
gives, against what the question asks. Give three scores from 0 to 2:

- type: 2 if the answer is the kind of thing the question asks for (a number, yes or no, a
  name, a date, a list of them), 1 if it is close, 0 if it is the wrong kind.
- format: 2 if it is only the answer, short and without explanation; 1 if it is usable but
  wordy or decorated; 0 if it is empty, a refusal, or not an answer.
- grounding: 2 only if the computation answers the question asked: the right column, the
  rows the question names, the operation it asks for, the number of items it asks for, the
  scale it uses. 1 if you doubt any of these; 0 if the computation answers another question,
  the result contradicts the answer, or nothing computes it. A value that merely appears in
  the table or the output is not support. A chart is judged by what its figure plots: values
  typed into the code are not grounded.

Your scores can only lower the automatic ones. Reply with one JSON object and nothing else:
{"type": <0-2>, "format": <0-2>, "grounding": <0-2>, "issues": ["<each problem, concretely>"]}`;

function describeCheck(check: ItemCheck, privacy: PromptPrivacy): string {
  const item = privacy.mode === "off" ? JSON.stringify(check.item) : privacy.answer(check.item);
  if (check.status === "supported") {
    return `- ${item}: ${check.support} (${check.supports.join(", ")})`;
  }
  const note = (fallback: string) =>
    privacy.notes([check.note ?? fallback])[0] ?? "a note kept here";
  if (check.status === "conflicted") return `- ${item}: contradicted (${note("")})`;
  return `- ${item}: not supported (${note("nothing holds it")})`;
}

export function checkerPrompt(
  state: Pick<ReviewStateValue, "question" | "answer" | "attempts">,
  rules: Verdict,
  checks: ItemCheck[],
  tableContext = "",
  privacy = OPEN_PRIVACY,
): string {
  // The run the rules judged the answer against: the one whose result (or, for a chart, whose
  // figure) it cites, else the last.
  const cited = state.answer?.evidence;
  const good = asksForChart(state.question)
    ? chartAttempt(state.attempts, cited)
    : (resultOf(state.attempts, cited)?.attempt ?? lastSuccessful(state.attempts));
  const sections = [`Question: ${state.question}`];
  if (tableContext) sections.push(tableContext);
  sections.push(
    `Expected answer type: ${rules.expectedType}`,
    `Answer: ${privacy.mode === "off" ? (state.answer?.final ?? "") : privacy.answer(state.answer?.final)}`,
  );
  if (good?.result) {
    const language = /^\s*(?:select|with)\b/i.test(good.code) ? "sql" : "python";
    sections.push(`Code (${good.id}):\n\`\`\`${language}\n${numberLines(good.code)}\n\`\`\``);
    sections.push(`Output:\n${privacy.output(good.result).slice(0, 4000)}`);
    const result = good.result.result;
    sections.push(
      result
        ? `Result [${good.id}:result] (${resultOrigin(result)}; derived from the table: ${result.derived}, ${result.derivation}):\n${privacy.result(result)}`
        : "The code computed no result.",
    );
    // What a figure plots is cell values: shown only when the prompt may hold them.
    const figures = privacy.mode === "off" ? (good.result.figures ?? []) : [];
    const drawn = figures.map(
      (f) => `- [${good.id}:${f.id}] ${describeFigure(f)}; derived: ${f.derived}, ${f.derivation}`,
    );
    if (drawn.length > 0) sections.push(`Figures it drew (what each plots):\n${drawn.join("\n")}`);
  } else {
    sections.push("No code ran successfully.");
  }
  if (checks.length > 0) {
    sections.push(`Items traced:\n${checks.map((c) => describeCheck(c, privacy)).join("\n")}`);
  }
  if (rules.alignment) {
    const [words] = privacy.notes([rules.alignment.summary]);
    sections.push(`Alignment with the question (${rules.alignment.status}): ${words ?? ""}`);
  }
  const issues = privacy.notes(rules.issues);
  if (issues.length > 0) {
    sections.push(`Automatic checks found:\n${issues.map((i) => `- ${i}`).join("\n")}`);
  }
  return sections.join("\n\n");
}

function score(value: unknown): 0 | 1 | 2 | null {
  const n = typeof value === "string" ? Number(value.trim().replace(/\/\s*2$/, "")) : value;
  return n === 0 || n === 1 || n === 2 ? n : null;
}

const KEYS: Record<keyof Verdict["scores"], string[]> = {
  type: ["type", "answer_type", "answerType", "type_score"],
  format: ["format", "format_score", "answer_format"],
  grounding: ["grounding", "evidence", "evidence_grounding", "grounding_score"],
};

function fromJson(text: string): ModelScores | null {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (!json) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const record = parsed as Record<string, unknown>;
  const holder = (
    typeof record.scores === "object" && record.scores !== null ? record.scores : record
  ) as Record<string, unknown>;
  const pick = (key: keyof Verdict["scores"]) =>
    KEYS[key].map((k) => score(holder[k])).find((s) => s !== null) ?? null;
  const [type, format, grounding] = [pick("type"), pick("format"), pick("grounding")];
  if (type === null || format === null || grounding === null) return null;
  const raw = record.issues ?? record.issue ?? [];
  const issues = (Array.isArray(raw) ? raw : [raw]).map(String).filter((i) => i.trim());
  return { scores: { type, format, grounding }, issues };
}

function fromLines(text: string): ModelScores | null {
  const line = (names: string) =>
    score(
      new RegExp(String.raw`\b(?:${names})\b\W*(?:score)?\W*[:=]\s*\W*([0-2])(?:\s*/\s*2)?\b`, "i")
        .exec(text)?.[1]
        ?.trim(),
    );
  const type = line("answer type|type");
  const format = line("format");
  const grounding = line("evidence grounding|grounding|evidence");
  if (type === null || format === null || grounding === null) return null;
  const issues = [...text.matchAll(/^\s*[-*]\s+(.+)$/gm)].map((m) => (m[1] ?? "").trim());
  return { scores: { type, format, grounding }, issues };
}

/**
 * The scores of a checker reply: a JSON object (fenced or not, flat or under "scores"), else
 * lines such as `type: 2`. A reply with neither fails with a ReplyParseError.
 */
export function parseCheck(reply: string): ModelScores {
  const parsed = fromJson(reply) ?? fromLines(reply);
  if (parsed) return parsed;
  throw new ReplyParseError("checker", "scores for type, format and grounding (0-2 each)", reply);
}

/** A reply without usable scores costs the check nothing: the rules' verdict stands. */
function scoresOrNull(reply: string): ReturnType<typeof parseCheck> | null {
  try {
    return parseCheck(reply);
  } catch (error) {
    if (!(error instanceof ReplyParseError)) throw error;
    process.emitWarning(`${error.message}; the rules alone judged`, "TablemindsWarning");
    return null;
  }
}

/**
 * Checks the answer: the rules first, then (with llmChecker) a model. The verdict, the claims
 * made from the answer with their supports/conflicts edges, and any source cells the verifier
 * found go on the blackboard; the answer joins `checked` so the best one survives.
 */
export const checker = (async (state, runtime) => {
  const config = configurationOf(runtime);
  const { verdict: rules, grounding } = await ruleVerdict({
    ...state,
    reflected: state.reflections.length,
    minConfidence: config.minConfidence,
  });
  const { claims, edges } = claimsFrom(rules.answer, grounding.checks);
  let verdict: Verdict = { ...rules, claims: claims.map((c) => c.id) };
  let budget = {};
  if (config.llmChecker && state.answer) {
    const privacy = await promptPrivacy(state, config);
    const context = (await renderTables(state.tables, state.question, config)).join("\n\n");
    const prompt = checkerPrompt(state, rules, grounding.checks, context, privacy);
    const reply = await askOrFallBack(() =>
      ask("checker", CHECKER_SYSTEM, prompt, config, runtime?.signal, { privacy }),
    );
    if (reply) {
      budget = reply.budget;
      const scores = scoresOrNull(reply.text);
      if (scores) verdict = combine(verdict, scores, config.minConfidence);
      else {
        const note = "the LLM checker's reply had no usable scores; the rules alone judged";
        verdict = { ...verdict, issues: [...verdict.issues, note] };
      }
    } else {
      const note = "the LLM checker could not be reached; the rules alone judged";
      verdict = { ...verdict, issues: [...verdict.issues, note] };
    }
  }
  const checked = state.answer
    ? [{ id: `c${state.checked.length + 1}`, answer: state.answer, verdict }]
    : [];
  return {
    verdict,
    checked,
    claims,
    edges,
    evidence: grounding.cells,
    budget,
  };
}) satisfies GraphNode<typeof ReviewState, NodeContext>;
