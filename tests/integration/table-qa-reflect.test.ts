import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Edge } from "../../blackboard/schemas.js";
import type { TableQAStateValue } from "../../blackboard/state.js";
import { graph } from "../../graphs/table_qa/graph.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { MEDALS_INPUT, useStubEndpoint, useTempHome, withContext } from "../support/env.js";
import { answerFromOutput, lastMessage, medalsTeam } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

const input = MEDALS_INPUT;

const REFLECTION = [
  "Diagnosis: The answer does not match the total the code printed.",
  "Route: code",
  "Improvement:",
  "1. Answer with the printed total of the gold column.",
].join("\n");

/** What the stub's checker says; a status object makes it fail. */
let checkerReply: StubReply = '{"type": 2, "format": 2, "grounding": 2, "issues": []}';

/** The medals team, with the answerer's replies given in order (a function reads the output). */
function team(answers: ((req: StubRequest) => string)[]) {
  const base = medalsTeam();
  let answered = 0;
  return (req: StubRequest): StubReply => {
    if (req.role === "answerer") {
      const reply = answers[Math.min(answered++, answers.length - 1)];
      return reply ? reply(req) : "Final Answer: nothing";
    }
    if (req.role === "reflector") return REFLECTION;
    if (req.role === "checker") return checkerReply;
    return base(req);
  };
}

describe("table_qa's check and reflect loop", () => {
  let stub: StubServer | undefined;
  useTempHome();

  afterEach(async () => {
    await stub?.close();
  });
  afterAll(async () => {
    await closeSandboxes();
  });

  async function run(answers: ((req: StubRequest) => string)[], context = {}) {
    stub = await startStubOpenAI({ respond: team(answers) });
    useStubEndpoint(stub.url);
    return (await graph.invoke(
      input,
      withContext({ memory: false, ...context }),
    )) as TableQAStateValue;
  }

  it("rejects an answer the output contradicts, reflects, and corrects it", async () => {
    const state = await run([() => "Final Answer: 250\nEvidence: a1:out2", answerFromOutput]);
    expect(state.answer?.final).toBe("203");
    expect(state.verdict?.pass).toBe(true);
    expect(state.checked.map((c) => [c.answer.final, c.verdict.pass])).toEqual([
      ["250", false],
      ["203", true],
    ]);
    const first = state.checked[0]?.verdict;
    expect(first?.scores.grounding).toBe(0);
    expect(first?.issues.join("\n")).toMatch(/"250" differs from a1:result.*: 203/);
    // The rejected answer stays in the evidence graph as a conflicted claim.
    const conflicted = state.claims.find((c) => c.text === "250");
    expect(conflicted?.status).toBe("conflicted");
    const edge: Edge = { from: "a1:result", to: conflicted?.id ?? "", kind: "conflicts" };
    expect(state.edges).toContainEqual(edge);
    expect(state.reflections).toHaveLength(1);
    expect(state.reflections[0]).toMatchObject({ route: "coder", byModel: true, afterAttempts: 1 });
    // The coder's second prompt carries the diagnosis; the plan was not redone.
    const coderPrompts = stub?.requests.filter((r) => r.role === "coder").map(lastMessage) ?? [];
    expect(coderPrompts).toHaveLength(2);
    expect(coderPrompts[1]).toContain(
      "Diagnosis: The answer does not match the total the code printed.",
    );
    expect(stub?.requests.filter((r) => r.role === "planner")).toHaveLength(1);
    expect(state.attempts.map((a) => a.id)).toEqual(["a1", "a2"]);
  });

  it("returns the best checked answer with its verdict when reflections run out", async () => {
    const state = await run([() => "Final Answer: 203, Chile", () => "Final Answer: 250"], {
      maxReflections: 1,
    });
    expect(state.reflections).toHaveLength(1);
    expect(state.checked.map((c) => [c.answer.final, c.verdict.pass])).toEqual([
      ["203, Chile", false],
      ["250", false],
    ]);
    // Half grounded (203 was computed, Chile nowhere) beats contradicted: the earlier answer wins.
    expect(state.answer?.final).toBe("203, Chile");
    expect(state.verdict?.answer).toBe("203, Chile");
    expect(state.verdict?.pass).toBe(false);
    expect(state.verdict?.scores).toEqual({ type: 1, format: 2, grounding: 1 });
  });

  it("skips checking when check is off", async () => {
    const state = await run([() => "Final Answer: 250"], { check: false });
    expect(state.answer?.final).toBe("250");
    expect(state.verdict).toBeNull();
    expect(stub?.requests.some((r) => r.role === "reflector")).toBe(false);
  });

  it("asks the model checker when configured, and goes on without it when it fails", async () => {
    checkerReply =
      '```json\n{"type": 2, "format": 1, "grounding": 2, "issues": ["add no unit"]}\n```';
    const judged = await run([answerFromOutput], { llmChecker: true });
    expect(judged.verdict).toMatchObject({ by: "rules+llm", pass: true });
    expect(judged.verdict?.scores).toEqual({ type: 2, format: 1, grounding: 2 });
    expect(judged.verdict?.issues).toContain("checker: add no unit");
    expect(judged.budget.llmCalls).toBe(4);
    await stub?.close();

    checkerReply = { status: 500, content: "checker down" };
    const alone = await run([answerFromOutput], { llmChecker: true, llmMaxRetries: 0 });
    expect(alone.answer?.final).toBe("203");
    expect(alone.verdict).toMatchObject({ by: "rules", pass: true });
    expect(alone.verdict?.issues.join("\n")).toMatch(/could not be reached/);
  });
});
