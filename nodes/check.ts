import { actualAnswerType, expectedAnswerType, typeScore } from "../blackboard/answer-type.js";
import type { Verdict } from "../blackboard/schemas.js";
import type { TableQAStateValue } from "../blackboard/state.js";
import {
  asksForOrder,
  claimsFrom,
  groundingScore,
  type ItemCheck,
  verifyGrounding,
} from "../blackboard/verify.js";
import { ask, askOrFallBack, ReplyParseError } from "./llm.js";
import { configurationOf, type TableQANode } from "./runtime.js";

/*
 * Scores, 0-2 each as in MAPLE's checker:
 * - type: does the answer's kind fit the question (answer-type.ts)?
 * - format: 2 a bare answer; 1 parseable but wordy (over 12 words, a sentence, a trailing
 *   explanation); 0 empty, a refusal, or a leftover "Final Answer" marker.
 * - grounding: 2 every item traced to evidence; 1 some items untraced, none contradicted;
 *   0 any contradiction, or nothing traced.
 * An answer passes when no score is 0 and the three add up to at least 5.
 */
export const PASS_TOTAL = 5;

const REFUSAL =
  /\b(cannot|can't|unable|not (?:enough|possible|available|determinable)|no (?:data|information)|unknown|n\/a|insufficient)\b/i;

export function formatScore(answer: string): { score: 0 | 1 | 2; issue?: string } {
  const text = answer.trim();
  if (!text) return { score: 0, issue: "the answer is empty" };
  if (/final\s+answer/i.test(text)) {
    return { score: 0, issue: 'the answer still contains the "Final Answer" marker' };
  }
  if (REFUSAL.test(text))
    return { score: 0, issue: `the answer is a refusal: ${JSON.stringify(text)}` };
  const words = text.split(/\s+/).length;
  if (
    words > 12 ||
    /[.!?]\s+\S/.test(text) ||
    /\b(because|since|which means|therefore)\b/i.test(text)
  ) {
    return {
      score: 1,
      issue: `the answer carries explanation; give only the value (${words} words)`,
    };
  }
  return { score: 2 };
}

function article(type: string): string {
  const noun = type === "yesno" ? "yes/no" : type;
  return `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`;
}

export function passes(scores: Verdict["scores"]): boolean {
  const { type, format, grounding } = scores;
  return Math.min(type, format, grounding) > 0 && type + format + grounding >= PASS_TOTAL;
}

function groundingIssues(checks: ItemCheck[], hasEvidence: boolean): string[] {
  return checks.flatMap((check) => {
    if (check.status === "conflicted")
      return [
        check.note ??
          `${JSON.stringify(check.item)} is contradicted by ${check.conflicts.join(", ")}`,
      ];
    if (check.status === "unsupported") {
      return [
        hasEvidence
          ? `nothing the code printed or produced carries ${JSON.stringify(check.item)}`
          : `${JSON.stringify(check.item)} has no evidence: no code ran successfully`,
      ];
    }
    return [];
  });
}

/** The deterministic verdict: format, type against the question, grounding in the evidence. */
export async function ruleVerdict(
  state: TableQAStateValue,
): Promise<{ verdict: Verdict; checks: ItemCheck[] }> {
  const expectedType = expectedAnswerType(state.question);
  const final = state.answer?.final ?? "";
  if (!state.answer) {
    return {
      verdict: {
        answer: "",
        expectedType,
        scores: { type: 0, format: 0, grounding: 0 },
        issues: ["no answer was produced"],
        pass: false,
        by: "rules",
        claims: [],
      },
      checks: [],
    };
  }
  const checks = await verifyGrounding({
    answer: final,
    evidence: state.evidence,
    attempts: state.attempts,
    ordered: asksForOrder(state.question),
  });
  const format = formatScore(final);
  const actual = actualAnswerType(final);
  const type = typeScore(expectedType, actual);
  const scores = { type, format: format.score, grounding: groundingScore(checks) };
  const issues = [
    ...(format.issue ? [format.issue] : []),
    ...(type < 2
      ? [`the question asks for ${article(expectedType)}, the answer is ${article(actual)}`]
      : []),
    ...groundingIssues(
      checks,
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
    checks,
  };
}

export const CHECKER_SYSTEM = `# tableminds checker
You judge an answer to a question about tables, given the code that was run and what it
printed. Score three things from 0 to 2:
- type: is it the kind of answer the question asks for (a number, a yes/no, a name, a list, a date)?
- format: is it only the answer, short, without explanation?
- grounding: is every value in it shown by the output or the table (2), partly (1), or contradicted or nowhere (0)?

Reply with one JSON object and nothing else:
{"type": 0-2, "format": 0-2, "grounding": 0-2, "issues": ["what is wrong, concretely"]}`;

export function checkerPrompt(state: TableQAStateValue, rules: Verdict): string {
  const good = state.attempts.findLast((a) => a.result?.ok);
  const sections = [`Question: ${state.question}`, `Answer: ${state.answer?.final ?? ""}`];
  if (good?.result) {
    sections.push(`Code:\n\`\`\`python\n${good.code}\n\`\`\``);
    sections.push(`Output:\n${good.result.stdout.trim().slice(0, 4000) || "(nothing printed)"}`);
  } else {
    sections.push("No code ran successfully.");
  }
  if (rules.issues.length > 0)
    sections.push(`Automatic checks found:\n${rules.issues.map((i) => `- ${i}`).join("\n")}`);
  return sections.join("\n\n");
}

export interface ModelScores {
  scores: Verdict["scores"];
  issues: string[];
}

function score(value: unknown): 0 | 1 | 2 | null {
  const n = typeof value === "string" ? Number(value.trim()) : value;
  return n === 0 || n === 1 || n === 2 ? n : null;
}

/** The scores of a checker reply: a JSON object (fenced or not), else `type: 2` lines. */
export function parseCheck(reply: string): ModelScores {
  const json = /\{[\s\S]*\}/.exec(reply)?.[0];
  if (json) {
    try {
      const parsed = JSON.parse(json) as Record<string, unknown>;
      const [type, format, grounding] = [
        score(parsed.type),
        score(parsed.format),
        score(parsed.grounding),
      ];
      if (type !== null && format !== null && grounding !== null) {
        const issues = Array.isArray(parsed.issues) ? parsed.issues.map(String) : [];
        return { scores: { type, format, grounding }, issues };
      }
    } catch {
      // Not JSON after all: try the line form below.
    }
  }
  const line = (name: string) =>
    score(new RegExp(`\\b${name}\\W*[:=]\\s*\\W*([0-2])\\b`, "i").exec(reply)?.[1]);
  const [type, format, grounding] = [line("type"), line("format"), line("grounding")];
  if (type !== null && format !== null && grounding !== null) {
    return { scores: { type, format, grounding }, issues: [] };
  }
  throw new ReplyParseError("checker", "scores for type, format and grounding (0-2 each)", reply);
}

/**
 * The model refines the rules but cannot overrule a hard finding: where the rules gave 0
 * (a contradiction, an empty or refused answer, a wrong kind of answer) the 0 stands.
 */
export function combine(rules: Verdict, model: ModelScores): Verdict {
  const pick = (key: keyof Verdict["scores"]) => (rules.scores[key] === 0 ? 0 : model.scores[key]);
  const scores = { type: pick("type"), format: pick("format"), grounding: pick("grounding") };
  const issues = [...new Set([...rules.issues, ...model.issues.map((i) => `checker: ${i}`)])];
  return { ...rules, scores, issues, pass: passes(scores), by: "rules+llm" };
}

/** Checks the answer: rules first, then (with llmChecker) a model; the verdict goes on the blackboard. */
export const checkNode: TableQANode = async (state, runtime) => {
  const config = configurationOf(runtime);
  const { verdict: rules, checks } = await ruleVerdict(state);
  const { claims, edges } = claimsFrom(rules.answer, checks);
  let verdict: Verdict = { ...rules, claims: claims.map((c) => c.id) };
  let budget = {};
  if (config.llmChecker && state.answer) {
    const reply = await askOrFallBack(() =>
      ask("checker", CHECKER_SYSTEM, checkerPrompt(state, rules), config, runtime?.signal),
    );
    if (reply) {
      verdict = combine(verdict, parseCheck(reply.text));
      budget = reply.budget;
    } else {
      const note = "the LLM checker could not be reached; the rules alone judged";
      verdict = { ...verdict, issues: [...verdict.issues, note] };
    }
  }
  const id = `c${state.checked.length + 1}`;
  const checked = state.answer ? [{ id, answer: state.answer, verdict }] : [];
  return { verdict, checked, claims, edges, budget };
};
