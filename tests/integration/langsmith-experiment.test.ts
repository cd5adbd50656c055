import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordExperiment, stableUuid } from "../../evals/langsmith.js";
import type { ResultRecord } from "../../evals/results-file.js";
import type { EvalExample } from "../../evals/types.js";
import { type CaptureServer, startLangSmithCapture } from "../support/langsmith-capture.js";

const examples: EvalExample[] = ["q1", "q2"].map((id) => ({
  id,
  dataset: "tablebench",
  question: `question ${id}`,
  tables: [{ columns: ["a"], data: [[1]] }],
  gold: "42",
  category: "NumericalReasoning",
  subcategory: "Counting",
}));

const records: ResultRecord[] = examples.map((e, i) => ({
  id: e.id,
  prediction: i === 0 ? "42" : "41",
  output: `Final Answer: ${i === 0 ? "42" : "41"}`,
  score: {
    id: e.id,
    prediction: "",
    parsed: true,
    metrics: { em: 1 - i },
    metric: "em",
    score: 1 - i,
  },
  latencyMs: 1200,
  tokens: { prompt: 100, completion: 10 },
  llmCalls: 3,
  attempts: 1,
  error: null,
  finishedAt: "2026-11-23T05:00:00.000Z",
}));

describe("recording an evaluation as a LangSmith experiment", () => {
  let capture: CaptureServer;
  beforeAll(async () => {
    capture = await startLangSmithCapture();
  });
  afterAll(async () => {
    await capture?.close();
  });

  it("sends the dataset, its examples, the experiment, one run per question and its score", async () => {
    const client = new Client({ apiUrl: capture.url, apiKey: "test", autoBatchTracing: false });
    await recordExperiment({
      client,
      datasetName: "tablebench-test",
      experimentName: "exp-1",
      graph: "table_qa",
      examples,
      records,
    });
    const posts = (path: string) =>
      capture.requests.filter((r) => r.method === "POST" && r.path === path);
    expect(posts("/datasets")).toHaveLength(1);
    expect(posts("/datasets")[0]?.body).toMatchObject({ name: "tablebench-test" });
    const upload = capture.requests.find(
      (r) => r.method === "POST" && /\/datasets\/[^/]+\/examples$/.test(r.path),
    );
    const form = String(upload?.body);
    for (const id of ["q1", "q2"]) {
      expect(form).toContain(`name="${stableUuid("tablebench-test", id)}.inputs"`);
    }
    expect(form).toContain('"question":"question q1"');
    expect(posts("/sessions")[0]?.body).toMatchObject({ name: "exp-1" });
    const session = posts("/sessions")[0]?.body as Record<string, unknown>;
    expect(session.reference_dataset_id).toEqual(expect.any(String));
    const runs = posts("/runs").map((r) => r.body as Record<string, unknown>);
    expect(runs).toHaveLength(2);
    const q1 = runs.find((r) => r.id === stableUuid("exp-1", "q1"));
    expect(q1).toMatchObject({
      name: "table_qa",
      reference_example_id: stableUuid("tablebench-test", "q1"),
      inputs: { question: "question q1" },
      outputs: { answer: "42", output: "Final Answer: 42" },
    });
    const feedback = posts("/feedback").map((r) => r.body as Record<string, unknown>);
    expect(feedback).toHaveLength(2);
    expect(feedback.map((f) => [f.run_id, f.key, f.score])).toEqual(
      expect.arrayContaining([
        [stableUuid("exp-1", "q1"), "em", 1],
        [stableUuid("exp-1", "q2"), "em", 0],
      ]),
    );
  });

  it("fails at once, with the reason, when nothing answers at the endpoint", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const apiUrl = `http://127.0.0.1:${port}`;
    await expect(
      recordExperiment({
        apiUrl,
        datasetName: "d",
        experimentName: "e",
        graph: "table_qa",
        examples,
        records,
      }),
    ).rejects.toThrow(`LangSmith at ${apiUrl} cannot be reached (ECONNREFUSED)`);
  });

  it("makes stable UUIDs", () => {
    const id = stableUuid("a", "b");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(stableUuid("a", "b")).toBe(id);
    expect(stableUuid("a", "c")).not.toBe(id);
  });
});
