import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import { sandboxChartRunner } from "../../evals/metrics/chart.js";
import { getScorer } from "../../evals/metrics/index.js";
import { writeReport } from "../../evals/report.js";
import { loadResults } from "../../evals/results-file.js";
import { readRunInfo } from "../../evals/run-info.js";
import { type RunOptions, runEvaluation, systemOutput } from "../../evals/runner.js";
import type { EvalExample } from "../../evals/types.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { useStubEndpoint, useTempHome } from "../support/env.js";
import { decodeRgbaPng } from "../support/png.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { KNOWN_CODE, tablebenchTeam } from "../support/tablebench-team.js";

const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

/** An evaluation through table_qa: 8 at a time, no retries, no memory, no reflections. */
function evaluate(
  options: Pick<RunOptions, "examples" | "scorer" | "outDir"> & Partial<RunOptions>,
) {
  return runEvaluation({
    graph: "table_qa",
    concurrency: 8,
    timeoutMs: 60_000,
    retries: 0,
    context: { memory: false, maxReflections: 0 },
    ...options,
  });
}

describe("evaluating table_qa on the 40-question TableBench sample", () => {
  let stub: StubServer;
  const outDir = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-"));

  beforeAll(async () => {
    useTempHome();
    stub = await startStubOpenAI({ respond: tablebenchTeam });
    useStubEndpoint(stub.url);
  });
  afterAll(async () => {
    await closeSandboxes();
    await stub?.close();
  });

  it("answers every question once, scores them as the scorer does, and writes the report", async () => {
    const examples = await loadDataset("tablebench", { path: SAMPLE });
    const scorer = getScorer("tablebench");
    const runChart = sandboxChartRunner(await getSandbox("local"));
    const outcome = await evaluate({ examples, scorer, outDir, runChart });
    expect(outcome.ran).toBe(40);
    const { records } = loadResults(path.join(outDir, "results.jsonl"));
    expect(records.map((r) => r.id).sort()).toEqual(examples.map((e) => e.id).sort());
    expect(records.every((r) => r.error === null && r.llmCalls >= 3)).toBe(true);
    expect(records.every((r) => r.tokens.prompt > 0 && (r.llmMs ?? 0) > 0)).toBe(true);
    expect(records.every((r) => r.attempts >= 1 && r.tries === 1)).toBe(true);
    const info = readRunInfo(outDir);
    expect(info).toMatchObject({ dataset: "tablebench", graph: "table_qa", questions: 40 });
    expect(info?.finished).toEqual(expect.any(String));

    // Scored again, independently, from the outputs kept in the file: the same numbers.
    const byId = new Map(examples.map((e) => [e.id, e]));
    const rescored = await Promise.all(
      records.map((r) => {
        const example = byId.get(r.id);
        if (!example) throw new Error(`unknown id ${r.id}`);
        return scorer.score(example, r.output, { runChart });
      }),
    );
    expect(rescored.map((s) => s.score)).toEqual(records.map((r) => r.score.score));
    const report = await writeReport(outDir, examples, records, scorer);
    expect(report.summary).toEqual(scorer.summarize(examples, rescored));
    expect(report.summary.n).toBe(40);
    expect(report.answered).toBe(40);
    const meanCalls = records.reduce((s, r) => s + r.llmCalls, 0) / records.length;
    expect(report.perQuestion.llmCalls).toBeCloseTo(meanCalls, 2);
    const sorted = records.map((r) => r.latencyMs).sort((a, b) => a - b);
    expect(report.latencyMs.p50).toBe(sorted[19]);
    expect(report.latencyMs.p99).toBe(sorted[39]);
    expect(report.summary.parseRate).toBeGreaterThan(80);
    // Exactly the three questions the stub has real code for are answered right.
    const right = records
      .filter((r) => r.score.score === 1)
      .map((r) => byId.get(r.id)?.question ?? "");
    expect(right).toHaveLength(KNOWN_CODE.length);
    for (const [question] of KNOWN_CODE) expect(right.some((q) => question.test(q))).toBe(true);
    expect(report.summary.overall).toBe(Math.round((100 * 3 * 100) / 40) / 100);

    const markdown = readFileSync(path.join(outDir, "report.md"), "utf8");
    expect(markdown).toContain(
      `Overall: **${report.summary.overall.toFixed(2)}** over 40 questions`,
    );
    for (const chart of ["categories", "subcategories", "latency"]) {
      const svg = readFileSync(path.join(outDir, "charts", `${chart}.svg`), "utf8");
      expect(svg.startsWith("<svg")).toBe(true);
      // The PNG is the same chart at twice the size, with its bars and its (black) text drawn.
      const png = decodeRgbaPng(readFileSync(path.join(outDir, "charts", `${chart}.png`)));
      const size = /<svg[^>]* width="(\d+)" height="(\d+)"/.exec(svg);
      expect([png.width, png.height]).toEqual([2 * Number(size?.[1]), 2 * Number(size?.[2])]);
      let ink = 0;
      let text = 0;
      for (let i = 0; i < png.rgba.length; i += 4) {
        const [r = 255, g = 255, b = 255] = png.rgba.subarray(i, i + 3);
        if (r < 200 || g < 200 || b < 200) ink += 1;
        if (r < 60 && g < 60 && b < 60) text += 1;
      }
      expect(ink / (png.width * png.height)).toBeGreaterThan(0.01);
      expect(text).toBeGreaterThan(200);
    }
    expect(existsSync(path.join(outDir, "report.json"))).toBe(true);

    // A second run finds everything done and runs nothing.
    const again = await evaluate({ examples, scorer, outDir, runChart });
    expect(again.ran).toBe(0);
    expect(again.records).toHaveLength(40);
    // ...but not with another configuration, whose answers would be mixed with these.
    await expect(
      evaluate({ examples, scorer, outDir, runChart, context: { memory: false } }),
    ).rejects.toThrow("holds results of another configuration (maxReflections: 0 -> 2)");
  });

  it("reruns from the replay cache with no model request and the same predictions", async () => {
    const examples = (await loadDataset("tablebench", { path: SAMPLE }))
      .filter((e) => e.category !== "Visualization")
      .slice(0, 6);
    const scorer = getScorer("tablebench");
    const replayCache = path.join(outDir, "replies.sqlite");
    const run = (name: string) =>
      evaluate({
        examples,
        scorer,
        outDir: path.join(outDir, name),
        concurrency: 3,
        context: { memory: false, maxReflections: 0, replayCache },
      });
    const first = await run("recorded");
    expect(first.records.every((r) => r.error === null && r.cachedCalls === 0)).toBe(true);
    const requestsBefore = stub.requests.length;
    const second = await run("replayed");
    expect(stub.requests.length).toBe(requestsBefore);
    expect(second.records.every((r) => r.llmCalls > 0 && r.cachedCalls === r.llmCalls)).toBe(true);
    const predictions = (records: typeof first.records) =>
      Object.fromEntries(records.map((r) => [r.id, r.output]));
    expect(predictions(second.records)).toEqual(predictions(first.records));
    const report = await writeReport(
      path.join(outDir, "replayed"),
      examples,
      second.records,
      scorer,
    );
    expect(report.perQuestion.cachedCalls).toBe(report.perQuestion.llmCalls);
  });

  it.each([
    ["wikitq", "wikitq"],
    ["tabfact", "tabfact"],
    ["finqa", "finqa/dataset/test.json"],
  ])(
    "runs %s's fixture through table_qa and reports it with its own scorer",
    async (name, data) => {
      const examples = await loadDataset(name, {
        path: path.resolve(import.meta.dirname, "../fixtures/datasets", data),
        limit: 5,
      });
      const scorer = getScorer(name);
      const dir = path.join(outDir, name);
      const outcome = await evaluate({ examples, scorer, outDir: dir, concurrency: 5 });
      const records = [...outcome.records].sort((a, b) => a.id.localeCompare(b.id));
      const ordered = [...examples].sort((a, b) => a.id.localeCompare(b.id));
      expect(records.map((r) => [r.id, r.error])).toEqual(ordered.map((e) => [e.id, null]));
      // The code ran on each loaded table: the stub's coder prints its row count.
      expect(records.every((r) => r.attempts >= 1 && /Final Answer: \d+/.test(r.output))).toBe(
        true,
      );
      const rescored = await Promise.all(
        records.map((r, i) => scorer.score(ordered[i] as EvalExample, r.output)),
      );
      const report = await writeReport(dir, examples, outcome.records, scorer);
      expect(report.summary).toEqual(scorer.summarize(examples, rescored));
      expect(report.summary).toMatchObject({ dataset: name, n: 5 });
      // No subcategories in these datasets: no empty table, no empty chart.
      const markdown = readFileSync(path.join(dir, "report.md"), "utf8");
      expect(markdown).not.toContain("## By subcategory");
      expect(existsSync(path.join(dir, "charts", "subcategories.svg"))).toBe(false);
      expect(existsSync(path.join(dir, "charts", "categories.png"))).toBe(true);
      // FinQA's tolerant figure is shown beside its headline; one-metric datasets need no line.
      const metricsLine = /^Metrics: exact \d+\.\d\d, close \d+\.\d\d\.$/m;
      expect(metricsLine.test(markdown)).toBe(name === "finqa");
      expect(markdown.includes("Metrics:")).toBe(name === "finqa");
    },
  );

  it("tries a question again when its model calls kept failing, and records the tries", async () => {
    const [example] = await loadDataset("tablebench", { path: SAMPLE, limit: 1 });
    if (!example) throw new Error("empty sample");
    let plannerCalls = 0;
    // The node retries a failed call once (two requests with no client retries): the first
    // graph run fails on 503s, the runner's retry succeeds.
    const flaky = await startStubOpenAI({
      respond: (req) => {
        if (req.role === "planner" && ++plannerCalls <= 2) return { status: 503 };
        return tablebenchTeam(req);
      },
    });
    useStubEndpoint(flaky.url);
    try {
      const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-retry-"));
      const outcome = await evaluate({
        examples: [example],
        scorer: getScorer("tablebench"),
        outDir: dir,
        concurrency: 1,
        retries: 1,
        retryDelayMs: 10,
        context: { memory: false, maxReflections: 0, llmMaxRetries: 0 },
      });
      expect(plannerCalls).toBe(3);
      expect(outcome.records[0]).toMatchObject({ id: example.id, error: null, tries: 2 });
      expect(outcome.records[0]?.output).toMatch(/^Final Answer: /);
    } finally {
      useStubEndpoint(stub.url);
      await flaky.close();
    }
  });

  it.each([
    ["nothing listens at the endpoint", "closed", /ECONNREFUSED/],
    ["the endpoint refuses the key", 401, /401/],
    ["the endpoint has no such model", 404, /404/],
  ] as const)("records no answer and stops when %s", async (_, failure, cause) => {
    const examples = (await loadDataset("tablebench", { path: SAMPLE })).slice(0, 5);
    let url: string;
    let down: StubServer | undefined;
    if (failure === "closed") {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise((resolve) => closed.close(resolve));
      url = `http://127.0.0.1:${port}/v1`;
    } else {
      down = await startStubOpenAI({ respond: () => ({ status: failure }) });
      url = down.url;
    }
    useStubEndpoint(url);
    try {
      const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-eval-down-"));
      const started = performance.now();
      const outcome = await evaluate({
        examples,
        scorer: getScorer("tablebench"),
        outDir: dir,
        concurrency: 1,
        retries: 2,
        retryDelayMs: 10,
        context: { memory: false, maxReflections: 0, llmMaxRetries: 0, llmTimeoutMs: 2_000 },
      });
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(outcome.records).toEqual([]);
      expect(outcome.failedToRun.map((f) => f.id)).toEqual(examples.slice(0, 3).map((e) => e.id));
      expect(outcome.stopped).toMatchObject({ endpoint: new URL(url).host, failures: 3 });
      expect(outcome.stopped?.reason).toMatch(cause);
      expect(loadResults(path.join(dir, "results.jsonl")).records).toEqual([]);
    } finally {
      useStubEndpoint(stub.url);
      await down?.close();
    }
  });

  it("gives chart questions their code as the scorer expects it", () => {
    const state = {
      answer: { raw: "", final: "done", evidence: [] },
      attempts: [{ id: "a1", code: "plt.bar([1], [2])", raw: "", result: null, parseError: null }],
    };
    const chart = {
      id: "c",
      dataset: "tablebench",
      question: "",
      tables: [],
      gold: "",
      category: "Visualization",
    };
    expect(systemOutput(chart as never, state as never)).toBe(
      "```python\nplt.bar([1], [2])\n```\nFinal Answer: done",
    );
    expect(systemOutput({ ...chart, category: "FactChecking" } as never, state as never)).toBe(
      "Final Answer: done",
    );
  });
});
