import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { failureOf, failureReason, QuestionJobSchema } from "../../evals/queue/payload.js";
import { uploadedTables } from "../../evals/queue/submit.js";
import { EndpointFailed, NotRun, ScoringFailed } from "../../evals/runner.js";
import { jobIdOf, queueUrl, redisOptions, runIdOf } from "../../storage/queue/connection.js";
import { processorFile } from "../../storage/queue/consumer.js";
import {
  jobLabel,
  QueueSealError,
  queueKey,
  resultLabel,
  seal,
  unseal,
} from "../../storage/queue/seal.js";
import { uploadPath } from "../../tables/sources.js";
import { MineJobSchema } from "../../training/mining/queue.js";
import { EXAMPLES, useTempHome } from "../support/env.js";

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
  it("refuses a job that sets a consumer's own field, names a model or a path, or carries a route", () => {
    const job = {
      run: "r",
      invocation: 1,
      graph: "table_qa",
      dataset: "tablebench",
      example: {
        id: "q",
        dataset: "tablebench",
        question: "?",
        tables: [{ columns: ["a"], data: [[1]] }, { upload: `${"a".repeat(64)}.csv` }],
        gold: "1",
      },
      context: { maxReflections: 0 },
      timeoutMs: 1000,
      retries: 0,
    };
    const refused = (changed: object) => {
      const parsed = QuestionJobSchema.safeParse({ ...job, ...changed });
      return parsed.success
        ? []
        : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(refused({})).toEqual([]);
    expect(MineJobSchema.safeParse({ ...job, stage: "coder" }).success).toBe(true);
    expect(refused({ context: { sandbox: "e2b" } })).toHaveLength(1);
    expect(refused({ context: { maxReflections: -1 } })).toHaveLength(1);
    expect(refused({ context: { model: "local:/etc/passwd" } })).toEqual([
      "context.model: a consumer's models are its own",
    ]);
    expect(refused({ context: { coderModel: "gpt-4o" } })).toEqual([
      "context.coderModel: a consumer's models are its own",
    ]);
    expect(refused({ example: { ...job.example, tables: [{ path: "/etc/passwd" }] } })).toEqual([
      "example.tables.0: a job's tables are inline or uploads, never paths",
    ]);
    expect(refused({ route: { OPENAI_BASE_URL: "http://10.0.0.9/v1" } })).toHaveLength(1);
    expect(
      MineJobSchema.safeParse({ ...job, stage: "coder", route: { OPENAI_BASE_URL: "x" } }).success,
    ).toBe(false);
  });

  it("reads back why a consumer did not answer: the endpoint, the scoring, or anything else", () => {
    const endpoint = failureOf(failureReason(new EndpointFailed("ECONNREFUSED", "h:1")) ?? "");
    expect(endpoint).toBeInstanceOf(EndpointFailed);
    expect(endpoint).toMatchObject({ message: "ECONNREFUSED", host: "h:1" });
    const unscored = failureOf(failureReason(new ScoringFailed("no chart")) ?? "");
    expect(unscored).toBeInstanceOf(ScoringFailed);
    expect(unscored.message).toBe("no chart");
    expect(failureReason(new Error("boom"))).toBeUndefined();
    const lost = failureOf("job stalled more than allowable limit");
    expect(lost).toBeInstanceOf(NotRun);
    expect(lost.message).toBe("on a consumer: job stalled more than allowable limit");
  });
});

describe("the consumer's child module", () => {
  it("is the TypeScript source in a checkout and the compiled JavaScript in the package", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-processor-"));
    const source = pathToFileURL(path.join(dir, "jobs.ts"));
    writeFileSync(path.join(dir, "jobs.js"), "export default () => null;\n");
    expect(processorFile(source)).toBe(path.join(dir, "jobs.js"));
    writeFileSync(path.join(dir, "jobs.ts"), "export default () => null;\n");
    expect(processorFile(source)).toBe(path.join(dir, "jobs.ts"));
  });
});

describe("the queue's seal", () => {
  const key = "0123456789abcdef".repeat(3);
  const label = jobLabel("eval", "eval.r.q");

  it("opens what was sealed with the key for the same job, and nothing else", () => {
    const value = { question: "How many?", n: [1, 2.5, -3], text: "ü\u2028" };
    const sealed = seal(key, label, value);
    expect(unseal(key, label, JSON.parse(JSON.stringify(sealed)))).toEqual(value);
    const refusedBy = (k: string, l: string, s: unknown) => {
      try {
        unseal(k, l, s);
        return "opened";
      } catch (error) {
        return error instanceof QueueSealError ? error.message : `other: ${String(error)}`;
      }
    };
    const mismatch = "its seal does not match the queue's key (TABLEMINDS_QUEUE_KEY)";
    expect(refusedBy(`${key}x`, label, sealed)).toBe(mismatch);
    expect(refusedBy(key, jobLabel("mine", "eval.r.q"), sealed)).toBe(mismatch);
    expect(refusedBy(key, jobLabel("eval", "eval.r.other"), sealed)).toBe(mismatch);
    // A result is not a job, and the result of one job is not another's.
    expect(refusedBy(key, resultLabel("eval.r.q"), sealed)).toBe(mismatch);
    const result = seal(key, resultLabel("eval.r.q"), { record: { score: 1 } });
    expect(refusedBy(key, resultLabel("eval.r.p"), result)).toBe(mismatch);
    expect(refusedBy(key, label, { ...sealed, body: sealed.body.replace("How", "Who") })).toBe(
      mismatch,
    );
    expect(refusedBy(key, label, value)).toBe("not sealed with the queue's key");
    expect(refusedBy(key, label, { body: sealed.body, mac: "00" })).toBe(
      "not sealed with the queue's key",
    );
  });

  it("needs a key of 32 characters or more, and says how to make one", () => {
    expect(() => queueKey({})).toThrow(/^no queue key: set TABLEMINDS_QUEUE_KEY/);
    expect(() => queueKey({ TABLEMINDS_QUEUE_KEY: "short" })).toThrow(
      "TABLEMINDS_QUEUE_KEY: at least 32 characters (`openssl rand -hex 24` makes one)",
    );
    expect(queueKey({ TABLEMINDS_QUEUE_KEY: key })).toBe(key);
  });
});

describe("a queued question's tables", () => {
  it("go into the artifact store by digest, once per path, and inline ones stay as they are", async () => {
    useTempHome();
    const csv = path.join(EXAMPLES, "olympics_2020_medals.csv");
    const inline = { columns: ["a"], data: [[1]] };
    const jobTables = uploadedTables();
    const example = {
      id: "q",
      dataset: "tablebench",
      question: "?",
      gold: "1",
      tables: [{ path: csv, encoding: "utf-8" }, inline, { path: csv, name: "medals" }],
    };
    const { tables } = await jobTables(example);
    const digest = createHash("sha256").update(readFileSync(csv)).digest("hex");
    expect(tables).toEqual([
      { upload: `${digest}.csv`, name: "olympics_2020_medals", encoding: "utf-8" },
      inline,
      { upload: `${digest}.csv`, name: "medals" },
    ]);
    expect(readFileSync(uploadPath(`${digest}.csv`)).equals(readFileSync(csv))).toBe(true);
  });
});
