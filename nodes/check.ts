import type { AnswerType, Edge, Verdict } from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import {
  actualAnswerType,
  expectedAnswerType,
  isProse,
  typeScore,
} from "../grounding/answer-type.js";
import {
  claimsFrom,
  type Grounding,
  groundingScore,
  type ItemCheck,
  verifyGrounding,
} from "../grounding/verify.js";
import { ask, askOrFallBack, ReplyParseError } from "./llm.js";
import { numberLines } from "./prompts.js";
import { configurationOf, type TableQANode } from "./runtime.js";

/*
 * The check node judges `answer` with three scores, 0-2 each, as MAPLE's checker does:
 * - type (blackboard/answer-type.ts): 2 the answer is the kind the question asks for; 1 a
 *   plausible kind (a list where one value was asked, a number where a name was); 0 a misfit
 *   (a name for "how many", anything but yes/no for a yes/no question).
 * - format: 2 a bare answer (for a question that wants an explanation, prose of reasonable
 *   length); 1 usable but wrapped in markdown or quotes, or carrying an explanation; 0 empty,
 *   a refusal ("I cannot ...", "unknown"), or a leftover "Final Answer" marker.
 * - grounding (blackboard/verify.ts): 2 every item of the answer is traced to evidence; 1 some
 *   items are untraced but none is contradicted (also a sentence with no value to trace);
 *   0 any item contradicted by the evidence, or no item traced at all.
 * Pass rule: no score is 0 and the three add up to at least 5, so at most one may be 1.
 *
 * With `llmChecker`, a model scores the same three things. Its scores replace the rules'
 * except where the rules gave 0: a contradiction, an empty or refused answer or a misfit type
 * found by the rules stands whatever the model says. The model may lower any other score.
 */
export const PASS_TOTAL = 5;

const REFUSAL =
  /\b(?:i (?:cannot|can't|can not|am unable)|cannot be (?:determined|computed|calculated|found|answered)|unable to|not (?:enough|possible|available|determinable)|no (?:data|information)|unknown|n\/a|insufficient)\b/i;
const DECORATED = /^(?:\*\*|__|`|#+\s|>\s|["“])|(?:\*\*|__|`|["”])$/;
/** Words beyond which even an explanation asked for is too long to be an answer. */
const MAX_PROSE_WORDS = 250;

/** The format score of an answer and, when it is not 2, what to change. */
export function formatScore(
  answer: string,
  expected: AnswerType = "number",
): { score: 0 | 1 | 2; issue?: string } {
  const text = answer.trim();
  if (!text) return { score: 0, issue: "the answer is empty" };
  if (/final\s+answer/i.test(text)) {
    return { score: 0, issue: 'the answer still contains the "Final Answer" marker' };
  }
  if (REFUSAL.test(text)) {
    return {
      score: 0,
      issue: `the answer is a refusal (${JSON.stringify(text)}); compute the value from the table instead`,
    };
  }
  if (DECORATED.test(text)) {
    return { score: 1, issue: "the answer is wrapped in markdown or quotes; give the bare value" };
  }
  const words = text.split(/\s+/).length;
  if (expected === "text") {
    return words > MAX_PROSE_WORDS
      ? { score: 1, issue: `the answer is too long (${words} words); state the conclusion` }
      : { score: 2 };
  }
  if (isProse(text)) {
    return {
      score: 1,
      issue: `the answer carries an explanation (${words} words); give only the value`,
    };
  }
  return { score: 2 };
}

function named(type: AnswerType): string {
  const noun = type === "yesno" ? "yes/no" : type === "text" ? "sentence" : type;
  return `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`;
}

export function passes(scores: Verdict["scores"]): boolean {
  const { type, format, grounding } = scores;
  return Math.min(type, format, grounding) > 0 && type + format + grounding >= PASS_TOTAL;
}

function groundingIssues(checks: ItemCheck[], ranCode: boolean): string[] {
  return checks.flatMap((check) => {
    const item = JSON.stringify(check.item);
    if (check.status === "conflicted") {
      return [check.note ?? `${item} is contradicted by ${check.conflicts.join(", ")}`];
    }
    if (check.status === "supported") return [];
    if (check.kind === "prose") {
      return ["the answer is a sentence with no value in it to trace to the evidence"];
    }
    if (check.kind === "yesno") {
      const mixed = check.supports.length > 0 && check.conflicts.length > 0;
      return [
        mixed
          ? `the printed truth values disagree about ${item}: ${check.supports.join(", ")} support it, ${check.conflicts.join(", ")} do not`
          : `nothing printed says whether ${item} holds; print the truth value of the comparison`,
      ];
    }
    return [
      ranCode
        ? `nothing the code printed, no table it produced and no source cell carries ${item}`
        : `${item} has no evidence: no code attempt succeeded and no source cell holds it`,
    ];
  });
}

/** The deterministic verdict: format, type against the question, grounding in the evidence. */
export async function ruleVerdict(
  state: TableQAStateValue,
): Promise<{ verdict: Verdict; grounding: Grounding }> {
  const expectedType = expectedAnswerType(state.question);
  if (!state.answer) {
    return {
      verdict: {
        answer: "",
        expectedType,
        scores: { type: 0, format: 0, grounding: 0 },
        issues: ["no answer was produced: the answerer never ran or its reply was unusable"],
        pass: false,
        by: "rules",
        claims: [],
      },
      grounding: { checks: [], cells: [] },
    };
  }
  const final = state.answer.final;
  const grounding = await verifyGrounding({
    answer: final,
    evidence: state.evidence,
    attempts: state.attempts,
    tables: state.tables,
    question: state.question,
  });
  const format = formatScore(final, expectedType);
  const actual = actualAnswerType(final);
  const type = typeScore(expectedType, actual, final);
  const scores = { type, format: format.score, grounding: groundingScore(grounding.checks) };
  const issues = [
    ...(format.issue ? [format.issue] : []),
    ...(type < 2
      ? [
          `the question asks for ${named(expectedType)}, the answer ${JSON.stringify(final)} is ${named(actual)}`,
        ]
      : []),
    ...groundingIssues(
      grounding.checks,
      state.attempts.some((a) => a.result?.ok),
    ),
  ];
  return {
    verdict: {
      answer: final,
      expectedType,
      scores,
      issues,
      pass: passes(scores),
      by: "rules",
      claims: [],
    },
    grounding,
  };
}

export const CHECKER_SYSTEM = `# tableminds checker
You review one answer to a question about tables before it is given to the user. You see
the question, the answer, the code that computed it with what the code printed, and what
automatic checks already found. Give three scores from 0 to 2:

- type: 2 if the answer is the kind of thing the question asks for (a number, yes or no, a
  name, a date, a list of them), 1 if it is close, 0 if it is the wrong kind.
- format: 2 if it is only the answer, short and without explanation; 1 if it is usable but
  wordy or decorated; 0 if it is empty, a refusal, or not an answer.
- grounding: 2 if every value in the answer appears in the printed output or the table;
  1 if some do; 0 if the output contradicts the answer or nothing supports it.

Reply with one JSON object and nothing else:
{"type": <0-2>, "format": <0-2>, "grounding": <0-2>, "issues": ["<each problem, concretely>"]}`;

function describeCheck(check: ItemCheck): string {
  const item = JSON.stringify(check.item);
  if (check.status === "supported") return `- ${item}: found in ${check.supports.join(", ")}`;
  if (check.status === "conflicted") return `- ${item}: contradicted (${check.note ?? ""})`;
  return `- ${item}: not found in the evidence`;
}

export function checkerPrompt(
  state: TableQAStateValue,
  rules: Verdict,
  checks: ItemCheck[],
): string {
  const good = state.attempts.findLast((a) => a.result?.ok);
  const sections = [
    `Question: ${state.question}`,
    `Expected answer type: ${rules.expectedType}`,
    `Answer: ${state.answer?.final ?? ""}`,
  ];
  if (good?.result) {
    sections.push(`Code (${good.id}):\n\`\`\`python\n${numberLines(good.code)}\n\`\`\``);
    sections.push(`Output:\n${good.result.stdout.trim().slice(0, 4000) || "(nothing printed)"}`);
  } else {
    sections.push("No code ran successfully.");
  }
  if (checks.length > 0) sections.push(`Items traced:\n${checks.map(describeCheck).join("\n")}`);
  if (rules.issues.length > 0) {
    sections.push(`Automatic checks found:\n${rules.issues.map((i) => `- ${i}`).join("\n")}`);
  }
  return sections.join("\n\n");
}

export interface ModelScores {
  scores: Verdict["scores"];
  issues: string[];
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

/** The model refines the rules but cannot overrule a hard finding: a 0 from the rules stands. */
export function combine(rules: Verdict, model: ModelScores): Verdict {
  const pick = (key: keyof Verdict["scores"]) => (rules.scores[key] === 0 ? 0 : model.scores[key]);
  const scores = { type: pick("type"), format: pick("format"), grounding: pick("grounding") };
  const issues = [...new Set([...rules.issues, ...model.issues.map((i) => `checker: ${i}`)])];
  return { ...rules, scores, issues, pass: passes(scores), by: "rules+llm" };
}

function edgeKey(edge: Edge): string {
  return `${edge.kind} ${edge.from} ${edge.to}`;
}

/**
 * Checks the answer: the rules first, then (with llmChecker) a model. The verdict, the claims
 * made from the answer with their supports/conflicts edges, and any source cells the verifier
 * found go on the blackboard; the answer joins `checked` so the best one survives.
 */
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

export const checkNode: TableQANode = async (state, runtime) => {
  const config = configurationOf(runtime);
  const { verdict: rules, grounding } = await ruleVerdict(state);
  const { claims, edges } = claimsFrom(rules.answer, grounding.checks);
  let verdict: Verdict = { ...rules, claims: claims.map((c) => c.id) };
  let budget = {};
  if (config.llmChecker && state.answer) {
    const prompt = checkerPrompt(state, rules, grounding.checks);
    const reply = await askOrFallBack(() =>
      ask("checker", CHECKER_SYSTEM, prompt, config, runtime?.signal),
    );
    if (reply) {
      budget = reply.budget;
      const scores = scoresOrNull(reply.text);
      if (scores) verdict = combine(verdict, scores);
      else {
        const note = "the LLM checker's reply had no usable scores; the rules alone judged";
        verdict = { ...verdict, issues: [...verdict.issues, note] };
      }
    } else {
      const note = "the LLM checker could not be reached; the rules alone judged";
      verdict = { ...verdict, issues: [...verdict.issues, note] };
    }
  }
  const seen = new Set(state.edges.map(edgeKey));
  const checked = state.answer
    ? [{ id: `c${state.checked.length + 1}`, answer: state.answer, verdict }]
    : [];
  return {
    verdict,
    checked,
    claims,
    edges: edges.filter((edge) => !seen.has(edgeKey(edge))),
    evidence: grounding.cells,
    budget,
  };
};
