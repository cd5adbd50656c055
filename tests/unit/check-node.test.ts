import { describe, expect, it } from "vitest";
import type { CheckedAnswer, Claim, Edge } from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import {
  checkNode,
  combine,
  formatScore,
  parseCheck,
  passes,
  ruleVerdict,
} from "../../nodes/check.js";
import { ReplyParseError } from "../../nodes/llm.js";
import { ranAttempt } from "../support/evidence.js";
import { answer } from "../support/verdicts.js";

function stateWith(
  question: string,
  final: string | null,
  stdout = "nations: 10\n203\n",
): TableQAStateValue {
  const { attempt, evidence } = ranAttempt("a1", 'print("nations:", n)\nprint(total)', stdout);
  return {
    question,
    sources: [],
    tables: [],
    plan: ["Sum the gold column."],
    attempts: [attempt],
    evidence,
    claims: [],
    edges: [],
    answer: final === null ? null : answer(final),
    verdict: null,
    checked: [],
    reflections: [],
    memories: [],
    budget: { llmCalls: 0, promptTokens: 0, completionTokens: 0, llmMs: 0, execMs: 0 },
  };
}

const Q = "How many gold medals did these ten nations win in total?";
const runtime = { context: { llmChecker: false } } as never;

describe("formatScore", () => {
  it("rewards a bare answer and marks prose, refusals and leftovers", () => {
    expect(formatScore("203").score).toBe(2);
    expect(formatScore("Real Betis, Real Madrid B").score).toBe(2);
    expect(formatScore("203. The code summed the gold column of every nation.").score).toBe(1);
    expect(formatScore("I cannot tell from the table").score).toBe(0);
    expect(formatScore("Final Answer: 203").score).toBe(0);
    expect(formatScore("  ").score).toBe(0);
  });
});

describe("the check node without a model", () => {
  it("passes a grounded answer of the right type, with claims and supports edges", async () => {
    const update = await checkNode(stateWith(Q, "203"), runtime);
    expect(update.verdict?.pass).toBe(true);
    expect(update.verdict?.scores).toEqual({ type: 2, format: 2, grounding: 2 });
    expect(update.verdict?.by).toBe("rules");
    expect((update.claims as Claim[]).map((c) => c.status)).toEqual(["supported"]);
    expect(update.edges).toEqual([
      { from: "a1:out2", to: (update.claims as Claim[])[0]?.id, kind: "supports" },
    ]);
    expect((update.checked as CheckedAnswer[]).map((c) => [c.id, c.answer.final])).toEqual([
      ["c1", "203"],
    ]);
  });

  it("fails an answer the output contradicts and says which output", async () => {
    const update = await checkNode(stateWith(Q, "205"), runtime);
    expect(update.verdict?.pass).toBe(false);
    expect(update.verdict?.scores.grounding).toBe(0);
    expect(update.verdict?.issues.join("\n")).toMatch(/"205" differs from a1:out2.*"203"/);
    expect((update.edges as Edge[])[0]?.kind).toBe("conflicts");
  });

  it("fails an answer of the wrong type", async () => {
    const { verdict } = await ruleVerdict(stateWith(Q, "Japan", "Japan\n"));
    expect(verdict.scores.type).toBe(0);
    expect(verdict.pass).toBe(false);
    expect(verdict.issues).toContain("the question asks for a number, the answer is an entity");
  });

  it("fails when there is no answer at all", async () => {
    const update = await checkNode(stateWith(Q, null), runtime);
    expect(update.verdict?.pass).toBe(false);
    expect(update.verdict?.issues).toEqual(["no answer was produced"]);
    expect(update.checked).toEqual([]);
  });
});

describe("the LLM checker's reply and how it combines", () => {
  it("parses JSON, fenced JSON and score lines", () => {
    expect(parseCheck('{"type": 2, "format": 1, "grounding": 2, "issues": ["wordy"]}')).toEqual({
      scores: { type: 2, format: 1, grounding: 2 },
      issues: ["wordy"],
    });
    expect(parseCheck('```json\n{"type":"2","format":"2","grounding":"1"}\n```').scores).toEqual({
      type: 2,
      format: 2,
      grounding: 1,
    });
    expect(parseCheck("Type: 2\nFormat: 2\n**Grounding**: 0").scores.grounding).toBe(0);
  });

  it("fails clearly on a reply without scores", () => {
    expect(() => parseCheck("Looks good to me!")).toThrow(ReplyParseError);
    expect(() => parseCheck('{"type": 7, "format": 2, "grounding": 2}')).toThrow(
      /type, format and grounding/,
    );
  });

  it("lets the model refine but never overrule a hard finding", async () => {
    const { verdict: conflicted } = await ruleVerdict(stateWith(Q, "205"));
    const lenient = { scores: { type: 2, format: 2, grounding: 2 } as const, issues: [] };
    const combined = combine(conflicted, lenient);
    expect(combined.scores.grounding).toBe(0);
    expect(combined.pass).toBe(false);
    expect(combined.by).toBe("rules+llm");
    const { verdict: grounded } = await ruleVerdict(stateWith(Q, "203"));
    const harsh = combine(grounded, {
      scores: { type: 2, format: 2, grounding: 1 },
      issues: ["unsure"],
    });
    expect(harsh.scores.grounding).toBe(1);
    expect(harsh.issues).toContain("checker: unsure");
    expect(passes(harsh.scores)).toBe(true);
    expect(passes({ type: 1, format: 1, grounding: 2 })).toBe(false);
  });
});
