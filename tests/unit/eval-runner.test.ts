import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { forEachBounded } from "../../evals/pool.js";
import { writeReport } from "../../evals/report.js";
import { loadResults } from "../../evals/results-file.js";
import { diffRunConfigs } from "../../evals/run-config.js";
import { readRunInfo } from "../../evals/run-info.js";
import {
  type EvalGraph,
  isTransient,
  type RunOptions,
  runEvaluation,
  systemOutput,
} from "../../evals/runner.js";
import type { EvalExample, QuestionScore, Scorer } from "../../evals/types.js";
import { ModelCallError } from "../../models/errors.js";

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

/** What the client raises when nothing listens at the endpoint. */
const refused = () =>
  new ModelCallError({
    role: "planner",
    model: "m",
    baseUrl: "http://127.0.0.1:1/v1",
    attempts: 1,
    reason: "Connection error. (ECONNREFUSED)",
    cause: Object.assign(new Error("Connection error."), {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
    }),
  });

/** The model settings the runner resolves and records, as the environment gives them. */
const ENV = { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", TABLEMINDS_MODEL: "fake-model" };

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
    env: ENV,
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
    for (const status of [400, 401, 404, 501]) expect(isTransient(modelError(status))).toBe(false);
    expect(isTransient(new Error("503"))).toBe(false);
    // Nothing listening: trying again cannot help.
    expect(isTransient(refused())).toBe(false);
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

  it("records the checker's verdict; a question without one is recorded without it", async () => {
    const dir = tempDir();
    const six = examples.slice(0, 6);
    const states = new Map<string, unknown>();
    const { graph } = fakeGraph((n) => {
      const state = { answer: { final: String(n + 1) }, attempts: [], budget: { llmCalls: 1 } };
      const verdicts: Record<number, unknown> = {
        // The whole verdict, as the checker writes it.
        0: {
          answer: "1",
          expectedType: "number",
          scores: { type: 2, format: 2, grounding: 2 },
          issues: [],
          pass: true,
          by: "rules",
          claims: [],
          support: "derived",
          confidence: 0.8,
          sure: true,
        },
        // What a graph leaves out takes the blackboard's defaults.
        1: { pass: false },
        // One the runner cannot read is left out; the question is still answered.
        2: { pass: "yes", confidence: 7 },
        // Checking off.
        3: null,
      };
      if (n === 4) return Promise.reject(new Error("the coder reply has no python block"));
      return Promise.resolve(n in verdicts ? { ...state, verdict: verdicts[n] } : state);
    });
    const outcome = await runEvaluation(
      options(dir, graph, {
        examples: six,
        onResult: (record, state) => states.set(record.id, state),
      }),
    );
    expect(outcome.ran).toBe(6);
    const byId = new Map(
      loadResults(path.join(dir, "results.jsonl")).records.map((r) => [r.id, r]),
    );
    expect(byId.get("q0")?.verdict).toEqual({
      pass: true,
      support: "derived",
      confidence: 0.8,
      sure: true,
    });
    expect(byId.get("q1")?.verdict).toEqual({
      pass: false,
      support: "none",
      confidence: 0,
      sure: false,
    });
    for (const id of ["q2", "q3", "q4", "q5"]) expect(byId.get(id)).not.toHaveProperty("verdict");
    expect(byId.get("q2")?.error).toBeNull();
    // The graph's final state goes to onResult as it came; none for a failed run.
    expect(states.get("q0")).toMatchObject({ verdict: { support: "derived", scores: {} } });
    expect(states.get("q4")).toBeNull();
    const report = await writeReport(dir, six, outcome.records, fakeScorer());
    expect(report.checker).toMatchObject({ checked: 2, withoutVerdict: 4, right: 2 });
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

describe("a model endpoint that does not work", () => {
  it("records no question it failed, stops after N in a row, and a rerun runs them", async () => {
    const dir = tempDir();
    const failedToRun: string[] = [];
    const down = fakeGraph(() => Promise.reject(refused()));
    const outcome = await runEvaluation(
      options(dir, down.graph, {
        concurrency: 1,
        retries: 2,
        onFailedToRun: (f) => failedToRun.push(f.id),
      }),
    );
    // Three questions, each tried once: a refused connection is not worth a retry.
    expect([...down.stats.calls.entries()]).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(failedToRun).toEqual(["q0", "q1", "q2"]);
    expect(outcome).toMatchObject({
      ran: 0,
      records: [],
      interrupted: false,
      stopped: { endpoint: "127.0.0.1:1", failures: 3 },
    });
    expect(outcome.stopped?.reason).toContain("ECONNREFUSED");
    expect(fileIds(dir)).toEqual([]);
    const info = readRunInfo(dir);
    expect(info?.finished).toBeNull();
    expect(info?.stopped?.reason).toMatch(
      /^3 questions in a row failed on the model endpoint 127\.0\.0\.1:1: .*ECONNREFUSED/,
    );

    const up = await runEvaluation(options(dir, fakeGraph().graph));
    expect(up.ran).toBe(12);
    expect(up.stopped).toBeNull();
    expect(readRunInfo(dir)).toMatchObject({ stopped: null, finished: expect.any(String) });
  });

  it("counts only failures in a row, and keeps what was scored before the endpoint went down", async () => {
    const dir = tempDir();
    // Every other question fails: never three in a row, so the run goes to the end.
    const alternating = fakeGraph((n) =>
      n % 2 === 0 ? Promise.reject(modelError(401)) : undefined,
    );
    const outcome = await runEvaluation(options(dir, alternating.graph, { concurrency: 1 }));
    expect(outcome.stopped).toBeNull();
    expect(outcome.failedToRun.map((f) => f.id)).toEqual(["q0", "q2", "q4", "q6", "q8", "q10"]);
    expect(fileIds(dir)).toEqual(["q1", "q3", "q5", "q7", "q9", "q11"]);
    expect(readRunInfo(dir)?.finished).toBeNull();

    // The endpoint goes away after four answers: they stay, the rest wait for the next run.
    const later = tempDir();
    const goesDown = fakeGraph((n) => (n >= 4 ? Promise.reject(modelError(404)) : undefined));
    const stopped = await runEvaluation(
      options(later, goesDown.graph, { concurrency: 1, maxEndpointFailures: 2 }),
    );
    expect(stopped.stopped).toMatchObject({ failures: 2 });
    expect(fileIds(later)).toEqual(["q0", "q1", "q2", "q3"]);
    expect([...goesDown.stats.calls.keys()]).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("cancels the questions in flight when it stops; they are not recorded", async () => {
    const dir = tempDir();
    const { graph, stats } = fakeGraph((n, _call, signal) =>
      n < 3
        ? new Promise((_, reject) => setTimeout(() => reject(modelError(403)), 5 * (n + 1)))
        : untilAborted(signal),
    );
    const outcome = await runEvaluation(options(dir, graph, { concurrency: 4 }));
    expect(outcome.stopped).toMatchObject({ failures: 3 });
    expect(outcome.failedToRun.map((f) => f.id)).toEqual(["q0", "q1", "q2"]);
    expect(outcome.interrupted).toBe(false);
    expect(fileIds(dir)).toEqual([]);
    // q3, then q4 and q5 in the lanes q0 and q1 freed, were in flight and cancelled.
    expect([...stats.calls.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe("the configuration of a run directory", () => {
  const two = examples.slice(0, 2);

  it("records the resolved model, endpoint and selection in run.json and the records", async () => {
    const dir = tempDir();
    await runEvaluation(
      options(dir, fakeGraph().graph, {
        examples: two,
        context: { temperature: 0.2, replayCache: "/tmp/x.sqlite" },
        env: { ...ENV, OPENAI_API_KEY: "sk-secret", TABLEMINDS_CODER_MODEL: "coder-model" },
        selection: { kind: "first", n: 2 },
      }),
    );
    const info = readRunInfo(dir);
    expect(info?.config).toMatchObject({
      dataset: "fake",
      graph: "fake_graph",
      selection: { kind: "first", n: 2 },
      model: "fake-model",
      roleModels: { coder: "coder-model" },
      endpoint: "127.0.0.1:9",
      settings: { temperature: 0.2, maxCodeAttempts: 3, memory: true },
    });
    // Operational settings and model fields are not part of it; no key is written anywhere.
    expect(info?.config?.settings).not.toHaveProperty("replayCache");
    expect(info?.config?.settings).not.toHaveProperty("model");
    expect(readFileSync(path.join(dir, "run.json"), "utf8")).not.toContain("sk-secret");
    expect(loadResults(path.join(dir, "results.jsonl")).records.map((r) => r.invocation)).toEqual([
      1, 1,
    ]);
  });

  it("refuses to resume with another model or settings unless allowed, then records the change", async () => {
    const dir = tempDir();
    const run = (extra: Partial<RunOptions>) =>
      runEvaluation(options(dir, fakeGraph().graph, { examples: two, ...extra }));
    await run({});
    await expect(run({ env: { ...ENV, TABLEMINDS_MODEL: "other-model" } })).rejects.toThrow(
      `${dir} holds results of another configuration (model: "fake-model" -> "other-model"); use another --out directory, or --allow-config-change to go on and record the change`,
    );
    await expect(run({ context: { maxCodeAttempts: 5 } })).rejects.toThrow(
      "maxCodeAttempts: 3 -> 5",
    );
    await expect(run({ selection: { kind: "sample", n: 1, seed: 0 } })).rejects.toThrow(
      "selection: all -> sample 1 seed 0",
    );
    // The flag names the same model the environment did; speed and caching may change.
    await run({
      env: { ...ENV, TABLEMINDS_MODEL: "other-model" },
      context: { model: "fake-model", llmTimeoutMs: 5_000 },
      concurrency: 1,
    });
    expect(readRunInfo(dir)?.configChanges).toBeUndefined();

    const changed = await runEvaluation(
      options(dir, fakeGraph().graph, {
        examples: examples.slice(0, 3),
        selection: { kind: "first", n: 3 },
        env: { ...ENV, TABLEMINDS_MODEL: "other-model" },
        allowConfigChange: true,
      }),
    );
    expect(changed.ran).toBe(1);
    const info = readRunInfo(dir);
    expect(info?.config?.model).toBe("other-model");
    expect(info?.configChanges).toEqual([
      {
        invocation: 3,
        at: expect.any(String),
        changes: ["selection: all -> first 3", 'model: "fake-model" -> "other-model"'],
      },
    ]);
    const byId = Object.fromEntries(changed.records.map((r) => [r.id, r.invocation]));
    expect(byId).toEqual({ q0: 1, q1: 1, q2: 3 });
  });

  it("says in the report which model, endpoint, questions and configuration made it", async () => {
    const dir = tempDir();
    const run = (extra: Partial<RunOptions>) =>
      runEvaluation(options(dir, fakeGraph().graph, { examples: two, ...extra }));
    await run({ selection: { kind: "first", n: 2 } });
    const changed = await run({
      examples: examples.slice(0, 1),
      selection: { kind: "first", n: 1 },
      context: { temperature: 1 },
      allowConfigChange: true,
    });
    // Both results are reported, though this invocation selected one question.
    const report = await writeReport(dir, two, changed.records, fakeScorer());
    expect(report.run).toMatchObject({
      selection: "first 1",
      config: { model: "fake-model", endpoint: "127.0.0.1:9" },
      changes: [{ invocation: 2, results: 0 }],
    });
    const markdown = readFileSync(path.join(dir, "report.md"), "utf8");
    expect(markdown).toContain(
      "Run: graph fake_graph, model fake-model at 127.0.0.1:9, questions: first 1.",
    );
    expect(markdown).toMatch(/^Configuration: .*temperature 1,/m);
    expect(markdown).toContain(
      "The configuration changed at invocation 2 (--allow-config-change; 0 results since): selection: first 2 -> first 1; temperature: 0 -> 1.",
    );
  });

  it("ignores a setting that only one version of the code has", () => {
    const config = {
      dataset: "fake",
      graph: "g",
      selection: { kind: "all" as const },
      model: "m",
      roleModels: {},
      endpoint: "h:1",
      settings: { temperature: 0 },
    };
    const newer = { ...config, settings: { temperature: 0, newKnob: 5 } };
    expect(diffRunConfigs(config, newer)).toEqual([]);
    expect(diffRunConfigs(config, { ...newer, settings: { temperature: 1 } })).toEqual([
      "temperature: 0 -> 1",
    ]);
  });

  it("accepts any configuration while the directory holds no result", async () => {
    const dir = tempDir();
    await runEvaluation(
      options(dir, fakeGraph(() => Promise.reject(refused())).graph, { examples: two }),
    );
    expect(existsSync(path.join(dir, "run.json"))).toBe(true);
    await runEvaluation(
      options(dir, fakeGraph().graph, {
        examples: two,
        env: { ...ENV, OPENAI_BASE_URL: "http://127.0.0.1:8/v1" },
      }),
    );
    expect(readRunInfo(dir)?.config?.endpoint).toBe("127.0.0.1:8");
    expect(readRunInfo(dir)?.configChanges).toBeUndefined();
  });

  it("refuses to start when no model endpoint is configured, before any question", async () => {
    const dir = tempDir();
    const { graph, stats } = fakeGraph();
    await expect(runEvaluation(options(dir, graph, { env: {} }))).rejects.toThrow(
      "No model endpoint is configured",
    );
    expect(stats.calls.size).toBe(0);
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
