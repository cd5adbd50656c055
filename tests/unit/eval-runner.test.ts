import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { forEachBounded } from "../../evals/pool.js";
import { loadResults } from "../../evals/results-file.js";
import { readRunInfo } from "../../evals/run-info.js";
import {
  type EvalGraph,
  isTransient,
  type RunOptions,
  runEvaluation,
  systemOutput,
} from "../../evals/runner.js";
import type { EvalExample, QuestionScore, Scorer } from "../../evals/types.js";
import { ModelCallError } from "../../tools/models/errors.js";

const examples: EvalExample[] = Array.from({ length: 12 }, (_, i) => ({
  id: `q${i}`,
  dataset: "fake",
  question: `what is ${i} + 1?`,
  tables: [{ columns: ["n"], data: [[i]] }],
  gold: String(i + 1),
  category: i % 2 === 0 ? "even" : "odd",
}));

/** Exact match on the `Final Answer:` text; it throws for golds listed in `failOn`. */
function fakeScorer(failOn: string[] = []): Scorer {
  return {
    dataset: "fake",
    async score(example, output): Promise<QuestionScore> {
      if (failOn.includes(example.gold)) throw new Error(`cannot score ${example.id}`);
      const prediction = /Final Answer: (.*)/.exec(output)?.[1] ?? "";
      const right = prediction === example.gold ? 1 : 0;
      return {
        id: example.id,
        prediction,
        parsed: prediction !== "",
        metrics: { em: right },
        metric: "em",
        score: right,
      };
    },
    summarize(_examples, scores) {
      const mean = scores.reduce((s, x) => s + x.score, 0) / Math.max(1, scores.length);
      return {
        dataset: "fake",
        n: scores.length,
        overall: 100 * mean,
        parseRate: 100,
        groups: [],
        subgroups: [],
        metrics: { em: 100 * mean },
      };
    },
  };
}

const questionNumber = (input: Record<string, unknown>) =>
  Number(/what is (\d+)/.exec(String(input.question))?.[1]);

/** A graph that answers n + 1 (or whatever `behave` decides), counting calls and concurrency. */
function fakeGraph(
  behave?: (n: number, call: number, signal: AbortSignal) => Promise<unknown> | undefined,
) {
  const calls = new Map<number, number>();
  const stats = { inFlight: 0, maxInFlight: 0, calls };
  const graph: EvalGraph = {
    async invoke(input, options) {
      const n = questionNumber(input);
      const call = (calls.get(n) ?? 0) + 1;
      calls.set(n, call);
      stats.inFlight += 1;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        const special = behave?.(n, call, options.signal as AbortSignal);
        if (special) return await special;
        await new Promise((resolve) => setTimeout(resolve, 2));
        return {
          answer: { final: String(n + 1) },
          attempts: [{ code: "print(n + 1)", result: { ok: true } }],
          budget: {
            llmCalls: 3,
            promptTokens: 100 + n,
            completionTokens: 10,
            llmMs: 30,
            execMs: 5,
          },
        };
      } finally {
        stats.inFlight -= 1;
      }
    },
  };
  return { graph, stats };
}

/** Never settles by itself: it rejects when the run's signal aborts it. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

const modelError = (status?: number) =>
  new ModelCallError({
    role: "coder",
    model: "m",
    baseUrl: "http://127.0.0.1:1/v1",
    attempts: 1,
    reason: status ? `${status} failure` : "connection reset",
    status,
  });

function options(outDir: string, graph: EvalGraph, extra: Partial<RunOptions> = {}): RunOptions {
  return {
    examples,
    scorer: fakeScorer(),
    graph: "fake_graph",
    runnable: graph,
    outDir,
    concurrency: 3,
    timeoutMs: 10_000,
    retries: 0,
    retryDelayMs: 1,
    context: {},
    ...extra,
  };
}

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), "tableminds-runner-"));
const fileIds = (dir: string) =>
  readFileSync(path.join(dir, "results.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe("the evaluation runner", () => {
  it("answers each question once, at most K at a time, and records what it cost", async () => {
    const dir = tempDir();
    const { graph, stats } = fakeGraph();
    const outcome = await runEvaluation(options(dir, graph));
    expect(outcome.ran).toBe(12);
    expect(outcome.interrupted).toBe(false);
    expect(stats.maxInFlight).toBe(3);
    expect([...stats.calls.values()].every((c) => c === 1)).toBe(true);
    expect(fileIds(dir).sort()).toEqual(examples.map((e) => e.id).sort());
    const q5 = loadResults(path.join(dir, "results.jsonl")).records.find((r) => r.id === "q5");
    expect(q5).toMatchObject({
      prediction: "6",
      output: "Final Answer: 6",
      score: { score: 1, metric: "em" },
      tokens: { prompt: 105, completion: 10 },
      llmCalls: 3,
      attempts: 1,
      llmMs: 30,
      execMs: 5,
      tries: 1,
      error: null,
    });

    const info = readRunInfo(dir);
    expect(info).toMatchObject({
      kind: "run",
      dataset: "fake",
      graph: "fake_graph",
      questions: 12,
      concurrency: 3,
      invocations: 1,
    });
    expect(info?.finished).toEqual(expect.any(String));
    expect(info?.git?.commit).toMatch(/^[0-9a-f]{40}$/);

    // The same run again finds everything done.
    const again = await runEvaluation(options(dir, fakeGraph().graph));
    expect(again.ran).toBe(0);
    expect(again.records).toHaveLength(12);
    expect(readRunInfo(dir)).toMatchObject({ invocations: 2, started: info?.started });
  });

  it("gives up on a question at its time limit and records why", async () => {
    const dir = tempDir();
    const { graph } = fakeGraph((n, _call, signal) => (n === 4 ? untilAborted(signal) : undefined));
    const outcome = await runEvaluation(options(dir, graph, { timeoutMs: 50 }));
    expect(outcome.ran).toBe(12);
    const q4 = outcome.records.find((r) => r.id === "q4");
    expect(q4).toMatchObject({
      error: "timed out after 50 ms",
      output: "",
      prediction: "",
      score: { score: 0 },
    });
    expect(outcome.records.filter((r) => r.error !== null)).toHaveLength(1);
  });

  it("moves on at the time limit even when the graph ignores its signal", async () => {
    const { graph } = fakeGraph((n) => (n === 0 ? new Promise(() => {}) : undefined));
    const outcome = await runEvaluation(options(tempDir(), graph, { timeoutMs: 50 }));
    expect(outcome.ran).toBe(12);
    expect(outcome.records.find((r) => r.id === "q0")?.error).toBe("timed out after 50 ms");
  });

  it("tries a question again after transient model failures, within --retries", async () => {
    const flaky = (n: number, call: number) =>
      n === 2 && call <= 2 ? Promise.reject(modelError(503)) : undefined;

    const enough = fakeGraph(flaky);
    const ok = await runEvaluation(options(tempDir(), enough.graph, { retries: 2 }));
    expect(ok.records.find((r) => r.id === "q2")).toMatchObject({
      error: null,
      tries: 3,
      score: { score: 1 },
    });
    expect(enough.stats.calls.get(2)).toBe(3);

    const tooFew = fakeGraph(flaky);
    const failed = await runEvaluation(options(tempDir(), tooFew.graph, { retries: 1 }));
    const q2 = failed.records.find((r) => r.id === "q2");
    expect(q2?.tries).toBe(2);
    expect(q2?.error).toContain("503 failure");
    expect(q2?.score.score).toBe(0);
  });

  it("does not retry failures a new try would repeat", async () => {
    const { graph, stats } = fakeGraph((n) => {
      if (n === 1) return Promise.reject(modelError(400));
      if (n === 3) return Promise.reject(new Error("the coder reply has no python block"));
      return undefined;
    });
    const outcome = await runEvaluation(options(tempDir(), graph, { retries: 3 }));
    expect(stats.calls.get(1)).toBe(1);
    expect(stats.calls.get(3)).toBe(1);
    expect(outcome.records.find((r) => r.id === "q3")?.error).toBe(
      "the coder reply has no python block",
    );
  });

  it("tells transient model failures from the rest", () => {
    for (const status of [undefined, 429, 500, 502, 503]) {
      expect(isTransient(modelError(status))).toBe(true);
    }
    for (const status of [400, 401, 404]) expect(isTransient(modelError(status))).toBe(false);
    expect(isTransient(new Error("503"))).toBe(false);
  });

  it("stops on abort: nothing new starts, questions in flight are not recorded, a rerun finishes", async () => {
    const dir = tempDir();
    const controller = new AbortController();
    let waiting = 0;
    const { graph, stats } = fakeGraph((n, _call, signal) => {
      if (n < 2) return undefined;
      // Stop once q2 and q3 are both in flight, waiting on the signal.
      waiting += 1;
      if (waiting === 2) queueMicrotask(() => controller.abort());
      return untilAborted(signal);
    });
    const outcome = await runEvaluation(
      options(dir, graph, { concurrency: 2, signal: controller.signal }),
    );
    expect(outcome.interrupted).toBe(true);
    expect(outcome.ran).toBe(2);
    expect(fileIds(dir)).toEqual(["q0", "q1"]);
    expect([...stats.calls.keys()].sort()).toEqual([0, 1, 2, 3]);
    expect(readRunInfo(dir)?.finished).toBeNull();

    const rest = await runEvaluation(options(dir, fakeGraph().graph));
    expect(rest.ran).toBe(10);
    const ids = fileIds(dir);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
  });

  it("keeps going when a question cannot be scored, and leaves it for the next run", async () => {
    const dir = tempDir();
    const unscored: string[] = [];
    const outcome = await runEvaluation(
      options(dir, fakeGraph().graph, {
        scorer: fakeScorer(["8"]),
        onUnscored: (f) => unscored.push(`${f.id}: ${f.error}`),
      }),
    );
    expect(unscored).toEqual(["q7: cannot score q7"]);
    expect(outcome.unscored.map((u) => u.id)).toEqual(["q7"]);
    expect(outcome.ran).toBe(11);
    expect(fileIds(dir)).not.toContain("q7");
    expect(readRunInfo(dir)?.finished).toBeNull();

    const { graph, stats } = fakeGraph();
    const rerun = await runEvaluation(options(dir, graph));
    expect(rerun.ran).toBe(1);
    expect([...stats.calls.keys()]).toEqual([7]);
  });

  it("refuses a run directory that holds another graph's results", async () => {
    const dir = tempDir();
    await runEvaluation(options(dir, fakeGraph().graph, { examples: examples.slice(0, 2) }));
    await expect(
      runEvaluation(options(dir, fakeGraph().graph, { graph: "other_graph" })),
    ).rejects.toThrow('holds a run with graph "fake_graph", not "other_graph"');
  });

  it("refuses examples that repeat an id", async () => {
    const twice = [examples[0], examples[0]] as EvalExample[];
    await expect(
      runEvaluation(options(tempDir(), fakeGraph().graph, { examples: twice })),
    ).rejects.toThrow("repeat an id");
  });

  it("gives the scorer a chart question's last working code before the answer", () => {
    const chart = { ...examples[0], category: "Visualization" } as EvalExample;
    const state = {
      answer: { final: "y" },
      attempts: [
        { code: "plt.bar([1], [2])", result: { ok: true } },
        { code: "plt.oops()", result: { ok: false } },
      ],
      budget: {},
    };
    expect(systemOutput(chart, state)).toBe("```python\nplt.bar([1], [2])\n```\nFinal Answer: y");
    expect(systemOutput(examples[0] as EvalExample, state)).toBe("Final Answer: y");
    expect(systemOutput(chart, { answer: null, attempts: [], budget: {} })).toBe("Final Answer: ");
  });
});

describe("forEachBounded", () => {
  it("stops taking items after a failure and rejects once the started ones settle", async () => {
    const started: number[] = [];
    const settled: number[] = [];
    let failing = () => {};
    const oneFails = new Promise<void>((resolve) => {
      failing = resolve;
    });
    const work = async (i: number) => {
      started.push(i);
      if (i === 0) {
        // Item 0 settles after item 1 failed and the pool has seen it (the next macrotask).
        await oneFails;
        await new Promise((resolve) => setImmediate(resolve));
      }
      settled.push(i);
      if (i === 1) {
        failing();
        throw new Error("item 1 failed");
      }
    };
    await expect(forEachBounded([0, 1, 2, 3, 4, 5], 2, work)).rejects.toThrow("item 1 failed");
    // Item 0 was still running when 1 failed: it was waited for, and nothing else began.
    expect(started).toEqual([0, 1]);
    expect(settled.sort()).toEqual([0, 1]);
  });
});
