import { Command, END, MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TableQAGraphStateValue } from "../../blackboard/state.js";
import { ask, ReviewNeedsTerminalError } from "../../cli/ask.js";
import { routeAfterCodeReview, routeAfterCoder } from "../../graphs/solve/graph.js";
import { builder, routeAfterAnswerReview, routeAfterSolve } from "../../graphs/table_qa/graph.js";
import { RunEventSchema } from "../../nodes/events.js";
import { ReviewDecisionSchema, ReviewRequestSchema } from "../../nodes/reviewer.js";
import { closeSandboxes } from "../../sandbox/index.js";
import { EXAMPLES, MEDALS_INPUT, useStubEndpoint, useTempHome } from "../support/env.js";
import { lastMessage, MEDALS_CODE, MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const EDITED = 'print("nations:", 10)\nprint(df["gold"].sum() + 1)';
const runtime = (review: string, extra: object = {}) =>
  ({ context: { review, ...extra } }) as never;

describe("review routers", () => {
  const ran = { id: "a1", code: "x", raw: "", parseError: null };
  const result = { ok: false, stdout: "", stderr: "", error: null, tables: [], spans: [] };
  const failed = { ...ran, result: { ...result, truncated: false, durationMs: 0, result: null } };

  it("send code to the reviewer only when code is reviewed, outside a search, and there is code", () => {
    const pending = { attempts: [{ ...ran, result: null }] };
    expect(routeAfterCoder(pending, runtime("off"))).toBe("executor");
    expect(routeAfterCoder(pending, runtime("answer"))).toBe("executor");
    expect(routeAfterCoder(pending, runtime("code"))).toBe("reviewer");
    expect(routeAfterCoder(pending, runtime("both"))).toBe("reviewer");
    expect(routeAfterCoder({ ...pending, stopAfter: "executor" }, runtime("both"))).toBe(
      "executor",
    );
    const noCode = { attempts: [{ ...ran, parseError: "no code", result: null }] };
    expect(routeAfterCoder(noCode, runtime("both"))).toBe("executor");
  });

  it("run approved code, and treat rejected code as a failed run", () => {
    const approved = { attempts: [{ ...ran, result: null }], reflections: [] };
    expect(routeAfterCodeReview(approved, runtime("code"))).toBe("executor");
    const rejected = { attempts: [failed], reflections: [] };
    expect(routeAfterCodeReview(rejected, runtime("code"))).toBe("coder");
    expect(routeAfterCodeReview(rejected, runtime("code", { maxCodeAttempts: 1 }))).toBe(
      "answerer",
    );
  });

  it("review the settled answer when answers are reviewed, and end a rejected one", () => {
    expect(routeAfterSolve({}, runtime("answer", { check: false }))).toBe("reviewer");
    expect(routeAfterSolve({}, runtime("code", { check: false }))).toBe("archiver");
    const reject = { id: "review:answer", kind: "answer", action: "reject" } as const;
    const approve = { ...reject, action: "approve" } as const;
    const decided = (r: typeof reject | typeof approve) => ({
      reviews: [{ ...r, edited: null, reason: null }],
    });
    expect(routeAfterAnswerReview(decided(reject), runtime("answer"))).toBe(END);
    expect(routeAfterAnswerReview(decided(approve), runtime("answer"))).toBe("archiver");
    expect(routeAfterAnswerReview(decided(approve), runtime("answer", { memory: false }))).toBe(
      END,
    );
  });

  it("read decisions as a resume value carries them", () => {
    expect(ReviewDecisionSchema.parse("approve")).toEqual({ action: "approve" });
    expect(ReviewDecisionSchema.parse({ action: "reject" })).toEqual({
      action: "reject",
      reason: "",
    });
    expect(ReviewDecisionSchema.safeParse({ action: "edit", value: " " }).success).toBe(false);
    expect(ReviewDecisionSchema.safeParse("ok").success).toBe(false);
  });
});

describe("table_qa with review, in-process", () => {
  let stub: StubServer;
  const graph = builder.compile({ checkpointer: new MemorySaver() });
  let thread = 0;

  beforeAll(async () => {
    useTempHome();
    stub = await startStubOpenAI({
      respond: medalsTeam((n) =>
        n === 0 ? MEDALS_CODE : MEDALS_CODE.replace("total)", "total)  # again"),
      ),
    });
    useStubEndpoint(stub.url);
  });

  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  /** Runs (or resumes) a thread to its next pause; returns what the pause shows and the events. */
  async function step(id: string, input: unknown, context: object) {
    const events: unknown[] = [];
    let pause: unknown;
    const stream = await graph.stream(input as never, {
      configurable: { thread_id: id },
      context: { memory: false, ...context } as never,
      streamMode: ["custom", "updates"],
      subgraphs: true,
    });
    for await (const [, mode, payload] of stream as AsyncIterable<[string[], string, unknown]>) {
      if (mode === "custom") events.push(RunEventSchema.parse(payload));
      const interrupts = (payload as { __interrupt__?: { value: unknown }[] }).__interrupt__;
      if (mode === "updates" && interrupts?.[0]) pause = interrupts[0].value;
    }
    const snapshot = await graph.getState({ configurable: { thread_id: id } }, { subgraphs: true });
    const state = snapshot.values as TableQAGraphStateValue;
    // While solve is paused, its attempts are in its own state.
    const inner = snapshot.tasks.find((t) => t.name === "solve")?.state;
    const solving = (inner && "values" in inner ? inner.values : state) as TableQAGraphStateValue;
    return {
      pause: pause === undefined ? null : ReviewRequestSchema.parse(pause),
      events,
      state,
      solving,
    };
  }

  const resume = (value: unknown) => new Command({ resume: value });

  it("shows the code before it runs and the answer before it is final; approve goes on", async () => {
    const id = `t${thread++}`;
    const first = await step(id, MEDALS_INPUT, { review: "both" });
    expect(first.pause).toMatchObject({
      kind: "code",
      attempt: "a1",
      code: expect.stringContaining("sum()"),
    });
    expect(first.solving.attempts[0]?.result).toBeNull();
    expect(first.events).toContainEqual(expect.objectContaining({ event: "plan" }));
    const second = await step(id, resume("approve"), { review: "both" });
    expect(second.pause).toMatchObject({ kind: "answer", answer: "203" });
    expect(second.events).toEqual(
      expect.arrayContaining([
        { event: "review", kind: "code", action: "approve" },
        { event: "code", attempt: "a1", lines: 4 },
        expect.objectContaining({ event: "evidence", ids: expect.arrayContaining(["a1:out2"]) }),
      ]),
    );
    const done = await step(id, resume({ action: "approve" }), { review: "both" });
    expect(done.pause).toBeNull();
    expect(done.state.answer?.final).toBe("203");
    expect(done.state.reviews.map((r) => [r.id, r.action])).toEqual([
      ["review:a1", "approve"],
      ["review:answer", "approve"],
    ]);
  });

  it("runs the code as edited, and returns the answer as edited", async () => {
    const id = `t${thread++}`;
    await step(id, MEDALS_INPUT, { review: "both" });
    const answer = await step(id, resume({ action: "edit", value: EDITED }), { review: "both" });
    expect(answer.state.attempts[0]?.code).toBe(EDITED);
    expect(answer.state.attempts[0]?.result?.stdout).toContain("204");
    expect(answer.pause).toMatchObject({ kind: "answer", answer: "204" });
    const done = await step(id, resume({ action: "edit", value: "two hundred and four" }), {
      review: "both",
    });
    expect(done.state.answer?.final).toBe("two hundred and four");
    expect(done.state.reviews.find((r) => r.id === "review:answer")).toMatchObject({
      action: "edit",
      edited: "two hundred and four",
    });
  });

  it("sends rejected code back to the coder with the reason, and ends on a rejected answer", async () => {
    const id = `t${thread++}`;
    const before = stub.requests.filter((r) => r.role === "coder").length;
    await step(id, MEDALS_INPUT, { review: "both" });
    const again = await step(id, resume({ action: "reject", reason: "use the total column" }), {
      review: "both",
    });
    expect(again.pause).toMatchObject({ kind: "code", attempt: "a2" });
    expect(again.solving.attempts[0]?.result?.error).toMatchObject({
      type: "Rejected",
      message: "a reviewer rejected this code: use the total column",
    });
    expect(again.events).toContainEqual({
      event: "attempt-failed",
      attempt: "a1",
      error: "a reviewer rejected this code: use the total column",
    });
    const coder = stub.requests.filter((r) => r.role === "coder").slice(before);
    expect(coder).toHaveLength(2);
    expect(lastMessage(coder[1] as never)).toContain("use the total column");
    await step(id, resume("approve"), { review: "both" });
    const done = await step(id, resume({ action: "reject", reason: "not checked by hand" }), {
      review: "both",
    });
    expect(done.pause).toBeNull();
    expect(done.state.answer).toBeNull();
    expect(done.state.reviews.at(-1)).toMatchObject({
      id: "review:answer",
      action: "reject",
      reason: "not checked by hand",
    });
  });

  it("asks again, saying why, when the resume value is not a decision", async () => {
    const id = `t${thread++}`;
    await step(id, MEDALS_INPUT, { review: "code" });
    const asked = await step(id, resume({ action: "maybe" }), { review: "code" });
    expect(asked.pause).toMatchObject({ kind: "code", attempt: "a1" });
    expect(asked.pause?.problem).toMatch(/not a decision/);
    const done = await step(id, resume("approve"), { review: "code" });
    expect(done.pause).toBeNull();
    expect(done.state.answer?.final).toBe("203");
  });

  it("lets `tableminds ask` answer the pauses, and refuses review with no one to answer", async () => {
    const asked: string[] = [];
    const options = {
      tables: [`${EXAMPLES}/olympics_2020_medals.csv`],
      question: MEDALS_QUESTION,
      graph: "table_qa",
      json: true,
      quiet: true,
      memory: false,
      context: { review: "both" as const, memory: false },
    };
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      const state = await ask({
        ...options,
        decide: async (request) => {
          asked.push(request.kind);
          return request.kind === "answer"
            ? { action: "edit", value: "203 medals" }
            : { action: "approve" };
        },
      });
      expect(asked).toEqual(["code", "answer"]);
      expect(state?.answer?.final).toBe("203 medals");
    } finally {
      write.mockRestore();
    }
    const tty = process.stdin.isTTY;
    process.stdin.isTTY = false;
    try {
      await expect(ask(options)).rejects.toThrow(ReviewNeedsTerminalError);
    } finally {
      process.stdin.isTTY = tty;
    }
  });
});
