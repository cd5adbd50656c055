import type {
  Answer,
  AnswerType,
  Attempt,
  Evidence,
  TableRef,
  Verdict,
} from "../blackboard/schemas.js";
import { expectedAnswerType, judgeType } from "./answer-type.js";
import { isProse } from "./items.js";
import { type Grounding, groundingScore, type ItemCheck, verifyGrounding } from "./verify.js";

/** What the rules look at. */
export interface VerdictInput {
  question: string;
  answer: Answer | null;
  evidence: Evidence[];
  attempts: Attempt[];
  tables: TableRef[];
}

/*
 * The checking rules: an answer gets three scores, 0-2 each, as MAPLE's checker gives them:
 * - type (answer-type.ts): 2 the answer is the kind the question asks for; 1 a
 *   plausible kind (a list where one value was asked, a number where a name was); 0 a misfit
 *   (a name for "how many", anything but yes/no for a yes/no question).
 * - format: 2 a bare answer (for a question that wants an explanation, prose of reasonable
 *   length); 1 usable but wrapped in markdown or quotes, or carrying an explanation; 0 empty,
 *   a refusal ("I cannot ...", "unknown"), or a leftover "Final Answer" marker.
 * - grounding (verify.ts): 2 every item of the answer is traced to evidence; 1 some
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
  state: VerdictInput,
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
        support: "none",
        confidence: 0,
        sure: false,
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
    source: "checker",
  });
  const format = formatScore(final, expectedType);
  const { actual, score: type } = judgeType(state.question, final);
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
      support: "none",
      confidence: 0,
      sure: false,
    },
    grounding,
  };
}

export interface ModelScores {
  scores: Verdict["scores"];
  issues: string[];
}

/** The model refines the rules but cannot overrule a hard finding: a 0 from the rules stands. */
export function combine(rules: Verdict, model: ModelScores): Verdict {
  const pick = (key: keyof Verdict["scores"]) => (rules.scores[key] === 0 ? 0 : model.scores[key]);
  const scores = { type: pick("type"), format: pick("format"), grounding: pick("grounding") };
  const issues = [...new Set([...rules.issues, ...model.issues.map((i) => `checker: ${i}`)])];
  return { ...rules, scores, issues, pass: passes(scores), by: "rules+llm" };
}
