import { describe, expect, it } from "vitest";
import { EMPTY_BUDGET, upsertEdges } from "../../blackboard/reducers.js";
import type {
  Attempt,
  CheckedAnswer,
  Claim,
  Edge,
  Evidence,
  TableRef,
} from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { combine, passes, ruleVerdict } from "../../grounding/verdict.js";
import { CHECKER_SYSTEM, checker, checkerPrompt, parseCheck } from "../../nodes/checker.js";
import { ReplyParseError } from "../../nodes/llm.js";
import { useTempHome } from "../support/env.js";
import { codeResult, ranAttempt } from "../support/evidence.js";
import { medalsRef } from "../support/table-fixtures.js";
import { answer } from "../support/verdicts.js";

useTempHome();

const Q = "How many gold medals did these ten nations win in total?";
const CODE = 'print("nations:", n)\nprint(total)';
const runtime = { context: { llmChecker: false } } as never;

function stateWith(
  question: string,
  final: string | null,
  run: { attempt: Attempt; evidence: Evidence[] } = ranAttempt(
    "a1",
    CODE,
    "nations: 10\n203\n",
    [],
    codeResult([203], { from: "printed", line: 2 }),
  ),
  tables: TableRef[] = [],
): TableQAStateValue {
  return {
    question,
    sources: [],
    tables,
    turns: [],
    plan: ["Sum the gold column."],
    attempts: [run.attempt],
    evidence: run.evidence,
    claims: [],
    edges: [],
    answer: final === null ? null : answer(final),
    verdict: null,
    checked: [],
    reflections: [],
    memories: [],
    startAt: null,
    stopAfter: null,
    budget: { ...EMPTY_BUDGET },
  };
}

describe("the check node without a model", () => {
  it("passes a grounded answer of the right type, with claims and supports edges", async () => {
    const update = await checker(stateWith(Q, "203"), runtime);
    expect(update.verdict).toMatchObject({
      answer: "203",
      expectedType: "number",
      scores: { type: 2, format: 2, grounding: 2 },
      issues: [],
      pass: true,
      by: "rules",
      support: "derived",
      confidence: 0.9,
      sure: true,
    });
    const claims = update.claims as Claim[];
    expect(claims.map((c) => [c.text, c.status, c.evidence])).toEqual([
      ["203", "supported", ["a1:result"]],
    ]);
    expect(update.verdict?.claims).toEqual(claims.map((c) => c.id));
    expect(update.edges).toEqual([{ from: "a1:result", to: claims[0]?.id, kind: "supports" }]);
    expect((update.checked as CheckedAnswer[]).map((c) => [c.id, c.answer.final])).toEqual([
      ["c1", "203"],
    ]);
    expect(update.budget).toEqual({});
  });

  it("fails an answer the output contradicts and says which output printed what", async () => {
    const update = await checker(stateWith(Q, "205"), runtime);
    expect(update.verdict?.pass).toBe(false);
    expect(update.verdict?.scores).toEqual({ type: 2, format: 2, grounding: 0 });
    expect(update.verdict?.issues).toEqual([
      'the answer "205" differs from a1:result, the code\'s last printed value: 203',
    ]);
    expect(update.verdict?.sure).toBe(false);
    expect((update.edges as Edge[]).map((e) => [e.from, e.kind])).toEqual([
      ["a1:result", "conflicts"],
    ]);
    expect((update.claims as Claim[])[0]?.status).toBe("conflicted");
  });

  it("fails a yes/no answer the printed truth value contradicts", async () => {
    const run = ranAttempt(
      "a1",
      "print(total > 200)",
      "True\n",
      [],
      codeResult(["True"], { from: "printed" }),
    );
    const { verdict } = await ruleVerdict(stateWith("Did they win more than 200 gold?", "No", run));
    expect(verdict.scores).toEqual({ type: 2, format: 2, grounding: 0 });
    expect(verdict.issues).toEqual([
      'the answer "No" differs from a1:result, the code\'s last printed value: True',
    ]);
  });

  it("fails an answer of the wrong type and says what was asked", async () => {
    const run = ranAttempt("a1", "print(best)", "Japan\n");
    const { verdict } = await ruleVerdict(stateWith(Q, "Japan", run));
    expect(verdict.scores.type).toBe(0);
    expect(verdict.pass).toBe(false);
    expect(verdict.issues).toContain(
      'the question asks for a number, the answer "Japan" is an entity',
    );
  });

  it("gives partial grounding for a list with an item nothing computed, and says which", async () => {
    const run = ranAttempt("a1", "result = total", "", [], codeResult([203]));
    const { verdict } = await ruleVerdict(stateWith(Q, "203, Chile", run));
    expect(verdict.scores.grounding).toBe(1);
    expect(verdict.pass).toBe(false);
    expect(verdict.issues).toContain(
      'nothing the code computed and no source cell carries "Chile"',
    );
  });

  it("takes a list item the result does not hold for a contradiction", async () => {
    const run = ranAttempt("a1", "result = [a, b]", "", [], codeResult([203, 39]));
    const { verdict } = await ruleVerdict(stateWith(Q, "205, 203", run));
    expect(verdict.scores.grounding).toBe(0);
    expect(verdict.issues[verdict.issues.length - 1]).toMatch(/"205" differs from a1:result/);
  });

  it("fails a superlative answered by a cell that holds the value: coincidence is no support", async () => {
    const medals = await medalsRef();
    const run = ranAttempt(
      "a1",
      "print(df.columns.tolist())",
      "['nation', 'gold', 'silver']\n",
      [],
      null,
    );
    const state = stateWith("Which nation won the most silver medals?", "United States", run, [
      medals,
    ]);
    const update = await checker(state, runtime);
    expect(update.verdict).toMatchObject({ pass: false, support: "coincidental", sure: false });
    expect(update.verdict?.scores.grounding).toBe(0);
    expect(update.verdict?.issues.join("\n")).toMatch(
      /"United States" merely occurs in medals:r0:nation: the question asks for a computation/,
    );
    expect(update.evidence).toEqual([]);
  });

  it("grounds a lookup in the source cell the question names and posts it", async () => {
    const medals = await medalsRef();
    const run = ranAttempt("a1", "print(df[df.nation == 'Japan'])", "2  Japan  27  14\n");
    const state = stateWith("What is the silver value for Japan?", "14", run, [medals]);
    const update = await checker(state, runtime);
    expect(update.verdict).toMatchObject({ pass: true, support: "looked-up" });
    expect((update.evidence as Evidence[]).map((e) => [e.id, e.value, e.source])).toEqual([
      ["medals:r2:silver", "14", "checker"],
    ]);
    expect((update.edges as Edge[])[0]).toMatchObject({
      from: "medals:r2:silver",
      kind: "supports",
    });
  });

  it("fails a bare number given for a named thing, so the run reflects on it", async () => {
    const run = ranAttempt("a1", "print(total)", "79190\n");
    const state = stateWith("Which nation won the most silver medals?", "79190", run);
    const { verdict } = await ruleVerdict(state);
    expect(verdict.scores.type).toBe(0);
    expect(verdict.pass).toBe(false);
    expect(verdict.issues).toContain(
      'the question asks for an entity, the answer "79190" is a number',
    );
  });

  it("says an answer has no evidence when no code ran", async () => {
    const state = { ...stateWith(Q, "42"), attempts: [], evidence: [] };
    const { verdict } = await ruleVerdict(state);
    expect(verdict.scores.grounding).toBe(0);
    expect(verdict.issues).toEqual([
      '"42" has no evidence: no code attempt succeeded and the question asks for a computation, so only the code\'s result can support it',
    ]);
  });

  it("fails when there is no answer at all", async () => {
    const update = await checker(stateWith(Q, null), runtime);
    expect(update.verdict?.pass).toBe(false);
    expect(update.verdict?.scores).toEqual({ type: 0, format: 0, grounding: 0 });
    expect(update.verdict?.issues).toEqual([
      "no answer was produced: the answerer never ran or its reply was unusable",
    ]);
    expect(update.checked).toEqual([]);
    expect(update.claims).toEqual([]);
  });

  it("numbers checked answers; its edges, posted again, add nothing to the blackboard", async () => {
    const first = stateWith(Q, "203");
    const once = await checker(first, runtime);
    const again = await checker(
      {
        ...first,
        edges: once.edges as Edge[],
        checked: once.checked as CheckedAnswer[],
      },
      runtime,
    );
    expect((again.checked as CheckedAnswer[])[0]?.id).toBe("c2");
    expect(again.claims).toEqual(once.claims);
    const edges = once.edges as Edge[];
    expect(edges.length).toBeGreaterThan(0);
    expect(upsertEdges(edges, again.edges as Edge[])).toEqual(edges);
  });
});

describe("the LLM checker's prompt, reply and how it combines", () => {
  it("shows the model the code, the output and what the rules traced", async () => {
    const state = stateWith(Q, "205");
    const { verdict, grounding } = await ruleVerdict(state);
    const prompt = checkerPrompt(state, verdict, grounding.checks);
    expect(CHECKER_SYSTEM.split("\n")[0]).toBe("# tableminds checker");
    expect(prompt).toContain(`Question: ${Q}`);
    expect(prompt).toContain("Answer: 205");
    expect(prompt).toContain("2 | print(total)");
    expect(prompt).toContain("Output:\nnations: 10\n203");
    expect(prompt).toContain(
      "Result [a1:result] (the last value printed; derived from the table: yes",
    );
    expect(prompt).toMatch(/- "205": contradicted \(the answer "205" differs from a1:result/);
    expect(CHECKER_SYSTEM).toMatch(
      /Your one question: does this computation answer this\nquestion\?/,
    );
  });

  it("puts the alignment in words beside the code when the rules found one", async () => {
    const state = stateWith(Q, "203");
    const { verdict, grounding } = await ruleVerdict(state);
    const aligned = {
      ...verdict,
      alignment: {
        status: "conflicted" as const,
        summary:
          "the result is the mean of `salary` over all 16 rows; the question asks for the median",
        findings: [],
      },
    };
    const prompt = checkerPrompt(state, aligned, grounding.checks);
    expect(prompt).toContain(
      "Alignment with the question (conflicted): the result is the mean of `salary` over all 16 rows; the question asks for the median",
    );
    expect(
      checkerPrompt(state, { ...verdict, alignment: undefined }, grounding.checks),
    ).not.toContain("Alignment with the question");
  });

  it("parses JSON, fenced or nested JSON, and score lines", () => {
    expect(parseCheck('{"type": 2, "format": 1, "grounding": 2, "issues": ["wordy"]}')).toEqual({
      scores: { type: 2, format: 1, grounding: 2 },
      issues: ["wordy"],
    });
    expect(parseCheck('```json\n{"type":"2","format":"2","grounding":"1"}\n```').scores).toEqual({
      type: 2,
      format: 2,
      grounding: 1,
    });
    expect(
      parseCheck('Here: {"scores": {"answer_type": 1, "format": 2, "evidence": 0}, "issue": "x"}'),
    ).toEqual({ scores: { type: 1, format: 2, grounding: 0 }, issues: ["x"] });
    expect(parseCheck("Type: 2/2\nFormat: 2\n**Grounding**: 0\n- 205 is not printed")).toEqual({
      scores: { type: 2, format: 2, grounding: 0 },
      issues: ["205 is not printed"],
    });
  });

  it("fails clearly on a reply without usable scores", () => {
    expect(() => parseCheck("Looks good to me!")).toThrow(ReplyParseError);
    expect(() => parseCheck('{"type": 7, "format": 2, "grounding": 2}')).toThrow(
      /checker reply has no scores for type, format and grounding/,
    );
    expect(() => parseCheck("type: 2, format: 2")).toThrow(ReplyParseError);
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
    // Any grounding concern of the model keeps the answer from passing, and lowers its confidence.
    expect(harsh.pass).toBe(false);
    expect(harsh.confidence).toBeLessThan(grounded.confidence);
    // It can lower a score, never raise one.
    const { verdict: doubtful } = await ruleVerdict(
      stateWith(Q, "203 gold medals in total, as printed"),
    );
    const raised = combine(doubtful, { scores: { type: 2, format: 2, grounding: 2 }, issues: [] });
    expect(raised.scores.format).toBe(doubtful.scores.format);
    expect(
      combine(grounded, { scores: { type: 2, format: 2, grounding: 0 }, issues: [] }).pass,
    ).toBe(false);
    expect(passes({ type: 1, format: 1, grounding: 2 })).toBe(false);
    expect(passes({ type: 2, format: 2, grounding: 1 })).toBe(false);
    expect(passes({ type: 1, format: 2, grounding: 2 })).toBe(true);
    expect(passes({ type: 2, format: 2, grounding: 0 })).toBe(false);
  });
});
