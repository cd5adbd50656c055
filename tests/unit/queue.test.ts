import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  applyModelRoute,
  failureOf,
  failureReason,
  modelRouteOf,
  QuestionJobSchema,
} from "../../evals/queue/payload.js";
import { EndpointFailed, NotRun, ScoringFailed } from "../../evals/runner.js";
import { jobIdOf, queueUrl, redisOptions, runIdOf } from "../../tools/queue/connection.js";
import { processorFile } from "../../tools/queue/worker.js";

describe("the queue's settings", () => {
  it("takes --queue's URL over TABLEMINDS_QUEUE_URL and says what is missing or wrong", () => {
    const env = { TABLEMINDS_QUEUE_URL: "redis://10.0.0.5:6379" };
    expect(queueUrl(true, env)).toBe("redis://10.0.0.5:6379");
    expect(queueUrl("redis://127.0.0.1:7000", env)).toBe("redis://127.0.0.1:7000");
    expect(() => queueUrl(true, {})).toThrow(
      "no queue: give --queue redis://host:port or set TABLEMINDS_QUEUE_URL",
    );
    expect(() => queueUrl("http://x", env)).toThrow("--queue http://x: expected redis://host:port");
    expect(() => queueUrl(true, { TABLEMINDS_QUEUE_URL: "localhost:6379" })).toThrow(
      "TABLEMINDS_QUEUE_URL: expected redis://host:port",
    );
  });

  it("reads user, password, database and TLS from the URL", () => {
    expect(redisOptions("rediss://me:s%40cret@cache.example:6380/2")).toMatchObject({
      host: "cache.example",
      port: 6380,
      username: "me",
      password: "s@cret",
      db: 2,
      tls: {},
    });
    expect(redisOptions("redis://127.0.0.1")).toMatchObject({ host: "127.0.0.1", port: 6379 });
  });

  it("names a question's job by its run and id, the same every time, without ':'", () => {
    const run = runIdOf("/runs/tb", "2026-01-01T00:00:00.000Z");
    expect(runIdOf("/runs/tb", "2026-01-01T00:00:00.000Z")).toBe(run);
    // The same directory run afresh (another first start) is another run.
    expect(runIdOf("/runs/tb", "2026-01-02T00:00:00.000Z")).not.toBe(run);
    const id = jobIdOf("eval", run, "nt-12:34 ü");
    expect(id).toBe(jobIdOf("eval", run, "nt-12:34 ü"));
    expect(id).not.toContain(":");
    expect(jobIdOf("mine", run, "nt-12:34 ü")).not.toBe(id);
    expect(jobIdOf("eval", run, "nt-12:35 ü")).not.toBe(id);
  });
});

describe("what travels with a job", () => {
  it("carries the model route but never the API key, and sets it whole on the worker", () => {
    const route = modelRouteOf({
      OPENAI_API_KEY: "sk-secret",
      OPENAI_BASE_URL: "http://10.0.0.9:8000/v1",
      TABLEMINDS_CODER_MODEL: "coder-7b",
      TABLEMINDS_MODEL: " ",
    });
    expect(route).toEqual({
      OPENAI_BASE_URL: "http://10.0.0.9:8000/v1",
      TABLEMINDS_CODER_MODEL: "coder-7b",
    });
    const worker: NodeJS.ProcessEnv = {
      OPENAI_API_KEY: "worker-key",
      OPENAI_BASE_URL: "http://elsewhere/v1",
      TABLEMINDS_MODEL: "worker-model",
    };
    applyModelRoute(route, worker);
    expect(worker).toEqual({
      OPENAI_API_KEY: "worker-key",
      OPENAI_BASE_URL: "http://10.0.0.9:8000/v1",
      TABLEMINDS_CODER_MODEL: "coder-7b",
    });
  });

  it("refuses a job whose context sets an operator's field or a route that names a key", () => {
    const job = {
      run: "r",
      invocation: 1,
      graph: "table_qa",
      dataset: "tablebench",
      example: {
        id: "q",
        dataset: "tablebench",
        question: "?",
        tables: [{ path: "t.csv" }],
        gold: "1",
      },
      context: { maxReflections: 0 },
      route: {},
      timeoutMs: 1000,
      retries: 0,
    };
    expect(QuestionJobSchema.safeParse(job).success).toBe(true);
    expect(QuestionJobSchema.safeParse({ ...job, context: { sandbox: "e2b" } }).success).toBe(
      false,
    );
    expect(QuestionJobSchema.safeParse({ ...job, context: { maxReflections: -1 } }).success).toBe(
      false,
    );
    expect(
      QuestionJobSchema.safeParse({ ...job, route: { OPENAI_API_KEY: "sk-secret" } }).success,
    ).toBe(false);
  });

  it("reads back why a worker did not answer: the endpoint, the scoring, or anything else", () => {
    const endpoint = failureOf(failureReason(new EndpointFailed("ECONNREFUSED", "h:1")) ?? "");
    expect(endpoint).toBeInstanceOf(EndpointFailed);
    expect(endpoint).toMatchObject({ message: "ECONNREFUSED", host: "h:1" });
    const unscored = failureOf(failureReason(new ScoringFailed("no chart")) ?? "");
    expect(unscored).toBeInstanceOf(ScoringFailed);
    expect(unscored.message).toBe("no chart");
    expect(failureReason(new Error("boom"))).toBeUndefined();
    const lost = failureOf("job stalled more than allowable limit");
    expect(lost).toBeInstanceOf(NotRun);
    expect(lost.message).toBe("on a worker: job stalled more than allowable limit");
  });
});

describe("the worker's child module", () => {
  it("is the TypeScript source in a checkout and the compiled JavaScript in the package", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-processor-"));
    const source = pathToFileURL(path.join(dir, "jobs.ts"));
    writeFileSync(path.join(dir, "jobs.js"), "export default () => null;\n");
    expect(processorFile(source)).toBe(path.join(dir, "jobs.js"));
    writeFileSync(path.join(dir, "jobs.ts"), "export default () => null;\n");
    expect(processorFile(source)).toBe(path.join(dir, "jobs.ts"));
  });
});
