import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addBudget,
  appendUniqueById,
  EMPTY_BUDGET,
  upsertById,
} from "../../blackboard/reducers.js";
import type {
  Attempt,
  Budget,
  CheckedAnswer,
  Claim,
  Edge,
  Evidence,
} from "../../blackboard/schemas.js";
import type { TableQAStateValue, TableQAUpdate } from "../../blackboard/state.js";
import { answerer } from "../../nodes/answerer.js";
import { CHECKER_SYSTEM, checker } from "../../nodes/checker.js";
import { coder } from "../../nodes/coder.js";
import { executor } from "../../nodes/executor.js";
import { ingest } from "../../nodes/ingest.js";
import type { NodeRuntime } from "../../nodes/runtime.js";
import { closeSandboxes } from "../../sandbox/index.js";
import type { Configuration } from "../../settings/configuration.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../support/env.js";
import { lastMessage, MEDALS_CODE, MEDALS_QUESTION } from "../support/scripts.js";
import {
  type StubReply,
  type StubRequest,
  type StubServer,
  startStubOpenAI,
} from "../support/stub-openai.js";

/** Update values as these nodes return them: plain arrays (never LangGraph's Overwrite). */
function listOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** The blackboard's reducers, applied by hand: these tests run nodes one by one, not a graph. */
function merge(state: TableQAStateValue, update: TableQAUpdate): TableQAStateValue {
  return {
    ...state,
    ...(update as Partial<TableQAStateValue>),
    attempts: upsertById(state.attempts, listOf<Attempt>(update.attempts)),
    evidence: appendUniqueById(state.evidence, listOf<Evidence>(update.evidence)),
    claims: upsertById(state.claims, listOf<Claim>(update.claims)),
    edges: [...state.edges, ...listOf<Edge>(update.edges)],
    checked: upsertById(state.checked, listOf<CheckedAnswer>(update.checked)),
    reflections: state.reflections,
    budget: addBudget(state.budget, (update.budget ?? {}) as Partial<Budget>),
  };
}

function runtimeWith(context: Partial<Configuration>): NodeRuntime {
  return { context } as NodeRuntime;
}

describe("the check node with the LLM checker, against a stub model", () => {
  let stub: StubServer;
  /** The state after ingest, code and a real sandbox run of the medals code. */
  let executed: TableQAStateValue;
  let answererReply = "Final Answer: 203\nEvidence: a1:out2";
  let checkerReply: StubReply = '{"type": 2, "format": 2, "grounding": 2, "issues": []}';

  beforeAll(async () => {
    useTempHome();
    stub = await startStubOpenAI({
      respond: (req: StubRequest) => {
        if (req.role === "coder") return MEDALS_CODE;
        if (req.role === "answerer") return answererReply;
        if (req.role === "checker") return checkerReply;
        return { status: 500, content: `no reply for ${req.role}` };
      },
    });
    useStubEndpoint(stub.url);
    const plain = runtimeWith({});
    let state: TableQAStateValue = {
      question: MEDALS_QUESTION,
      sources: [{ path: `${EXAMPLES}/olympics_2020_medals.csv` }],
      tables: [],
      turns: [],
      plan: ["Keep the nation and gold columns.", "Sum the gold column and print it."],
      attempts: [],
      evidence: [],
      claims: [],
      edges: [],
      answer: null,
      verdict: null,
      checked: [],
      reflections: [],
      memories: [],
      startAt: null,
      stopAfter: null,
      budget: EMPTY_BUDGET,
    };
    for (const node of [ingest, coder, executor]) {
      state = merge(state, await node(state, plain));
    }
    executed = state;
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  /** Answers with `final` through the real answerer node, then checks with `context`. */
  async function check(final: string, context: Partial<Configuration>) {
    answererReply = `Final Answer: ${final}\nEvidence: a1:out2`;
    const answered = merge(executed, await answerer(executed, runtimeWith({})));
    const before = stub.requests.length;
    const update = await checker(answered, runtimeWith(context));
    const checkerRequests = stub.requests.slice(before).filter((r) => r.role === "checker");
    return { update, checkerRequests };
  }

  it("ran the medals code in the sandbox: the evidence the checks rest on is real", () => {
    expect(executed.attempts.map((a) => [a.id, a.result?.ok])).toEqual([["a1", true]]);
    expect(executed.evidence.find((e) => e.id === "a1:out2")?.value).toBe(203);
  });

  it("parses the model's scores and combines them with the rules", async () => {
    checkerReply =
      'Here is my review.\n```json\n{"type": 2, "format": 1, "grounding": 2, "issues": ["give the number without a label"]}\n```';
    const { update, checkerRequests } = await check("203", {
      llmChecker: true,
      checkerModel: "checker-model",
    });
    expect(update.verdict).toMatchObject({
      by: "rules+llm",
      scores: { type: 2, format: 1, grounding: 2 },
      pass: true,
    });
    expect(update.verdict?.issues).toEqual(["checker: give the number without a label"]);
    expect(update.budget).toMatchObject({ llmCalls: 1 });
    expect(checkerRequests).toHaveLength(1);
    const request = checkerRequests[0] as StubRequest;
    expect(request.model).toBe("checker-model");
    expect(request.messages[0]?.content.split("\n")[0]).toBe("# tableminds checker");
    expect(request.messages[0]?.content).toBe(CHECKER_SYSTEM);
    const prompt = lastMessage(request);
    expect(prompt).toContain(`Question: ${MEDALS_QUESTION}`);
    expect(prompt).toContain("Answer: 203");
    expect(prompt).toMatch(/Output:\nnations: 10\n203/);
    // The table context, the code's result and whether it is derived, what the rules traced.
    expect(prompt).toContain("olympics_2020_medals");
    expect(prompt).toMatch(
      /Result \[a1:result\] \(the last value printed; derived from the table: yes/,
    );
    expect(prompt).toContain('- "203": derived (a1:result)');
  });

  it("reads score lines too, also when the reply is streamed; a grounding doubt keeps it from passing", async () => {
    checkerReply = "Type: 2\nFormat: 2\nGrounding: 1\n- the total is printed without a label";
    const { update } = await check("203", { llmChecker: true, streaming: true });
    expect(update.verdict?.scores).toEqual({ type: 2, format: 2, grounding: 1 });
    expect(update.verdict?.pass).toBe(false);
    expect(update.verdict?.issues).toEqual(["checker: the total is printed without a label"]);
  });

  it("lets the model fail an answer the rules passed", async () => {
    checkerReply = '{"type": 2, "format": 2, "grounding": 0, "issues": ["wrong column summed"]}';
    const { update } = await check("203", { llmChecker: true });
    expect(update.verdict?.pass).toBe(false);
    expect(update.verdict?.scores.grounding).toBe(0);
  });

  it("does not let the model overrule a contradiction the rules found", async () => {
    checkerReply = '{"type": 2, "format": 2, "grounding": 2, "issues": []}';
    const { update, checkerRequests } = await check("205", { llmChecker: true });
    expect(checkerRequests).toHaveLength(1);
    expect(lastMessage(checkerRequests[0] as StubRequest)).toContain(
      'the answer "205" differs from a1:result',
    );
    expect(update.verdict).toMatchObject({
      by: "rules+llm",
      scores: { type: 2, format: 2, grounding: 0 },
      pass: false,
    });
    expect(update.verdict?.issues).toEqual([
      'the answer "205" differs from a1:result, the code\'s last printed value: 203',
    ]);
    expect((update.claims as Claim[]).map((c) => [c.text, c.status])).toEqual([
      ["205", "conflicted"],
    ]);
  });

  it("judges by the rules alone, with a warning, when the reply has no scores in it", async () => {
    checkerReply = "The answer looks right to me.";
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const { update } = await check("203", { llmChecker: true });
      expect(update.verdict).toMatchObject({ by: "rules", pass: true });
      expect(update.verdict?.issues).toEqual([
        "the LLM checker's reply had no usable scores; the rules alone judged",
      ]);
      expect(update.budget).toMatchObject({ llmCalls: 1 });
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.join("\n")).toMatch(
      /checker reply has no scores for type, format and grounding \(0-2 each\); it was: "The answer looks right to me."/,
    );
  });

  it("judges by the rules alone when the checker cannot be reached, or is off", async () => {
    checkerReply = { status: 500, content: "checker down" };
    const { update } = await check("203", { llmChecker: true, llmMaxRetries: 0 });
    expect(update.verdict).toMatchObject({ by: "rules", pass: true });
    expect(update.verdict?.issues).toEqual([
      "the LLM checker could not be reached; the rules alone judged",
    ]);
    const off = await check("203", { llmChecker: false });
    expect(off.checkerRequests).toEqual([]);
    expect(off.update.verdict?.by).toBe("rules");
  });
});
