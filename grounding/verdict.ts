import type {
  Answer,
  AnswerType,
  Attempt,
  Evidence,
  TableRef,
  Verdict,
} from "../blackboard/schemas.js";
import { expectedAnswerType, judgeType } from "./answer-type.js";
import { confidenceOf, rated, scoreFactor, supportOf } from "./confidence.js";
import { asksForChart, chartIssues, verifyChart } from "./figures.js";
import { isProse } from "./items.js";
import { type Grounding, groundingScore, type ItemCheck, verifyGrounding } from "./verify.js";

/** What the rules look at. */
export interface VerdictInput {
  question: string;
  answer: Answer | null;
  evidence: Evidence[];
  attempts: Attempt[];
  tables: TableRef[];
  /** Reflections the run went through before this answer (they lower the confidence). */
  reflected?: number;
  /** Below this confidence the run is not sure of its answer (configuration `minConfidence`). */
  minConfidence?: number;
}

/*
 * The checking rules: an answer gets three scores, 0-2 each, as MAPLE's checker gives them:
 * - type (answer-type.ts): 2 the answer is the kind the question asks for; 1 a
 *   plausible kind (a list where one value was asked, a number where a name was); 0 a misfit
 *   (a name for "how many", anything but yes/no for a yes/no question).
 * - format: 2 a bare answer (for a question that wants an explanation, prose of reasonable
 *   length); 1 usable but wrapped in markdown or quotes, or carrying an explanation; 0 empty,
 *   a refusal ("I cannot ...", "unknown"), or a leftover "Final Answer" marker.
 * - grounding (verify.ts): 2 every item of the answer is derived from the code's result or
 *   looked up in a source cell the question identifies; 1 some items are untraced but none is
 *   contradicted (also a sentence with no value to trace); 0 any item contradicted by the
 *   code's result, or no item supported at all. A value that merely occurs somewhere is no
 *   support.
 * Pass rule: grounding is 2, no score is 0 and the three add up to at least 5.
 *
 * With `llmChecker`, a model scores the same three things. It can lower a score, never raise
 * one, and a grounding score below 2 from it keeps the answer from passing.
 *
 * The verdict also carries a confidence (confidence.ts) and whether the run is sure of its
 * answer (the confidence reaches the run's `minConfidence`).
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
  return grounding === 2 && Math.min(type, format) > 0 && type + format + grounding >= PASS_TOTAL;
}

function groundingIssues(checks: ItemCheck[]): string[] {
  return checks.flatMap((check) =>
    check.status === "supported"
      ? []
      : [check.note ?? `${JSON.stringify(check.item)} has no support in the evidence`],
  );
}

/** The deterministic verdict: format, type against the question, grounding in the evidence. */
/** A verdict on an answer nothing was found to support, for the one reason given. */
export function unsupported(answer: string, question: string, issue: string): Verdict {
  return {
    answer,
    expectedType: expectedAnswerType(question),
    scores: { type: 0, format: 0, grounding: 0 },
    issues: [issue],
    pass: false,
    by: "rules",
    claims: [],
    support: "none",
    confidence: 0,
    sure: false,
    unchecked: false,
  };
}

export async function ruleVerdict(
  state: VerdictInput,
): Promise<{ verdict: Verdict; grounding: Grounding }> {
  const expectedType = expectedAnswerType(state.question);
  if (!state.answer) {
    const issue = "no answer was produced: the answerer never ran or its reply was unusable";
    return {
      verdict: unsupported("", state.question, issue),
      grounding: { checks: [], cells: [] },
    };
  }
  const final = state.answer.final;
  if (asksForChart(state.question)) return chartVerdict(state, final);
  const grounding = await verifyGrounding({
    answer: final,
    evidence: state.evidence,
    attempts: state.attempts,
    tables: state.tables,
    question: state.question,
    cited: state.answer.evidence,
    source: "checker",
  });
  const format = formatScore(final, expectedType);
  const { actual, score: type } = judgeType(state.question, final);
  const scores = {
    type,
    format: format.score,
    grounding: groundingScore(grounding.checks, grounding.alignment),
  };
  const counted = (grounding.alignment?.findings ?? []).filter(
    (f) => f.conflict && f.aspect === "cardinality",
  );
  const issues = [
    ...(format.issue ? [format.issue] : []),
    ...counted.map((f) => f.text),
    ...(type < 2
      ? [
          `the question asks for ${named(expectedType)}, the answer ${JSON.stringify(final)} is ${named(actual)}`,
        ]
      : []),
    ...groundingIssues(grounding.checks),
  ];
  return {
    verdict: rulesVerdict(state, final, expectedType, scores, issues, grounding),
    grounding,
  };
}

/** The rules' verdict of scores and issues, with its support and confidence from `grounding`. */
function rulesVerdict(
  state: VerdictInput,
  final: string,
  expectedType: Verdict["expectedType"],
  scores: Verdict["scores"],
  issues: string[],
  grounding: Grounding,
): Verdict {
  const confidence = confidenceOf({
    checks: grounding.checks,
    scores,
    failedAttempts: failedBefore(state.attempts),
    reflections: state.reflected ?? 0,
    misaligned: grounding.alignment?.status === "conflicted",
  });
  const unchecked = isUnchecked(grounding.checks, scores);
  return {
    answer: final,
    expectedType,
    scores,
    issues: unchecked ? issues.filter((i) => !grounding.checks.some((c) => c.note === i)) : issues,
    pass: passes(scores),
    by: "rules",
    claims: [],
    support: supportOf(grounding.checks),
    ...rated(confidence, state.minConfidence),
    unchecked,
    ...(grounding.alignment ? { alignment: grounding.alignment } : {}),
  };
}

/**
 * An answer with no claim to check: every item is prose without a value in it, and it is a
 * usable answer (not empty, not a refusal). It is given as answered but unchecked.
 */
export function isUnchecked(checks: ItemCheck[], scores: Verdict["scores"]): boolean {
  return checks.length > 0 && checks.every((c) => c.kind === "prose") && scores.format > 0;
}

/** Code attempts that failed before the one the answer rests on. */
function failedBefore(attempts: Attempt[]): number {
  const answered = attempts.findLastIndex((a) => a.result?.ok);
  return attempts.slice(0, answered < 0 ? attempts.length : answered).filter((a) => !a.result?.ok)
    .length;
}

/**
 * A chart answer is judged by what its figures plot (figures.ts), not by its words: type 2
 * when the code drew a figure with values (0 when it drew none), format as a caption, and
 * grounding over the plotted points.
 */
async function chartVerdict(
  state: VerdictInput,
  final: string,
): Promise<{ verdict: Verdict; grounding: Grounding }> {
  const chart = await verifyChart({
    question: state.question,
    attempts: state.attempts,
    tables: state.tables,
    cited: state.answer?.evidence ?? [],
    source: "checker",
  });
  const format = formatScore(final, "text");
  const type = chart.figures.length > 0 ? 2 : 0;
  const scores = { type, format: format.score, grounding: groundingScore(chart.checks) };
  const issues = [...(format.issue ? [format.issue] : []), ...chartIssues(chart.checks)];
  const grounding = { checks: chart.checks, cells: chart.cells };
  return { verdict: rulesVerdict(state, final, "text", scores, issues, grounding), grounding };
}

export interface ModelScores {
  scores: Verdict["scores"];
  issues: string[];
}

/**
 * The model refines the rules: it can lower a score, never raise one, and any grounding concern
 * it raises (a grounding score below 2) keeps the answer from passing. The confidence follows
 * the lowered scores.
 */
export function combine(rules: Verdict, model: ModelScores, minConfidence?: number): Verdict {
  const pick = (key: keyof Verdict["scores"]) =>
    Math.min(rules.scores[key], model.scores[key]) as 0 | 1 | 2;
  const scores = { type: pick("type"), format: pick("format"), grounding: pick("grounding") };
  const issues = [...new Set([...rules.issues, ...model.issues.map((i) => `checker: ${i}`)])];
  const lowered = (["type", "format", "grounding"] as const).reduce(
    (factor, key) => (factor * scoreFactor(scores[key])) / scoreFactor(rules.scores[key]),
    1,
  );
  return {
    ...rules,
    scores,
    issues,
    pass: passes(scores),
    by: "rules+llm",
    ...rated(rules.confidence * lowered, minConfidence),
  };
}
