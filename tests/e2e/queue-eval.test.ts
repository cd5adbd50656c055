import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import type { EvalExample } from "../../evals/types.js";
import { QUEUE_NAME, redisOptions } from "../../storage/queue/connection.js";
import { jobLabel, seal } from "../../storage/queue/seal.js";
import { runCli, startCli } from "../support/cli.js";
import { freePort } from "../support/dev-server.js";
import { stubEnv } from "../support/env.js";
import { evalArgs, SAMPLE } from "../support/eval-cli.js";
import {
  finishedBy,
  idsOf,
  queueCounts,
  type RunningConsumer,
  recordsOf,
  startConsumer,
} from "../support/queue.js";
import { lastMessage } from "../support/scripts.js";
import { type Service, startService } from "../support/services.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { tablebenchTeam } from "../support/tablebench-team.js";

/*
 * `eval run --queue` against a real Redis and real `tableminds consume` processes, with the
 * stub model: the same results as a run here, a submitter killed and started again, a consumer
 * killed in the middle of a job, an endpoint that is down, and jobs someone else wrote.
 */

/** How many times the stub was asked to plan each question, from `from` on. */
function plansPerQuestion(
  stub: StubServer,
  examples: EvalExample[],
  from: number,
): Map<string, number> {
  const plans = stub.requests.slice(from).filter((r) => r.role === "planner");
  return new Map(
    examples.map((e) => [
      e.id,
      plans.filter((r) => lastMessage(r).endsWith(`Question: ${e.question}`)).length,
    ]),
  );
}

const runInfo = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, "run.json"), "utf8")) as Record<string, unknown>;

let redis: Service;
let url: string;
let examples: EvalExample[];

beforeAll(async () => {
  redis = startService("redis");
  url = redis.env.TABLEMINDS_QUEUE_URL ?? "";
  examples = (await loadDataset("tablebench", { path: SAMPLE })).slice(0, 12);
});
afterAll(() => redis?.stop());

/** Consumers of a test, stopped after it. */
const consumers: RunningConsumer[] = [];
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((w) => w.stop("SIGKILL")));
});

/** A consumer's environment: its own home (as on another machine), endpoint and the queue's key. */
function consumerEnv(endpoint: string): Record<string, string | undefined> {
  return { ...stubEnv(endpoint), ...redis.env };
}

/** A submitter's environment whose own endpoint leads nowhere: only the consumers' can answer. */
async function submitterEnv(): Promise<Record<string, string | undefined>> {
  return { ...stubEnv(`http://127.0.0.1:${await freePort()}/v1`), ...redis.env };
}

describe("eval --queue with two consumers", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  const runs = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-eval-"));

  beforeAll(async () => {
    stub = await startStubOpenAI({
      respond: tablebenchTeam,
      latencyMs: 30,
      idleTimeoutMs: 600_000,
    });
    env = await submitterEnv();
  });
  afterAll(async () => {
    await stub?.close();
  });

  it("writes the same results, report and warnings as a run here, and leaves the queue empty", async () => {
    const here = path.join(runs, "here");
    const local = await runCli(evalArgs(here, 12, ["--concurrency", "2"]), stubEnv(stub.url));
    expect(local.code, local.stderr).toBe(0);

    const wenv = consumerEnv(stub.url);
    consumers.push(
      ...(await Promise.all([
        startConsumer(wenv, ["--concurrency", "1"]),
        startConsumer(wenv, ["--concurrency", "1"]),
      ])),
    );
    const queued = path.join(runs, "queued");
    const result = await runCli(evalArgs(queued, 12, ["--queue"]), env, 240_000);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`eval: 12 questions queued on ${url}`);
    expect(result.stderr).toMatch(/^\[12\/12\] /m);

    // The same records, whatever the order they came back in; times aside.
    const mine = recordsOf(queued);
    expect(mine.size).toBe(12);
    expect(mine).toEqual(recordsOf(here));
    const summary = (text: string) => text.split("\nreport: ")[0];
    expect(summary(result.stdout)).toBe(summary(local.stdout));
    expect(runInfo(queued)).toMatchObject({ finished: expect.any(String), stopped: null });
    // A table's warning, raised on a consumer, is in the run's own log, with its question.
    const warned = (dir: string) =>
      readFileSync(path.join(dir, "warnings.log"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => line.slice(line.indexOf(" ") + 1))
        .sort();
    expect(warned(queued)).toEqual(warned(here));
    expect(warned(queued).length).toBeGreaterThan(0);

    // Both consumers ran questions, and nothing stays on the queue once the results are written.
    const [first, second] = consumers;
    if (!first || !second) throw new Error("two consumers");
    expect(finishedBy(first).length).toBeGreaterThan(0);
    expect(finishedBy(second).length).toBeGreaterThan(0);
    expect(new Set([...finishedBy(first), ...finishedBy(second)])).toEqual(new Set(mine.keys()));
    expect(await queueCounts(url)).toEqual({
      wait: 0,
      active: 0,
      delayed: 0,
      completed: 0,
      failed: 0,
    });
  }, 400_000);

  it("killed mid-run and submitted again, runs no finished question twice", async () => {
    const wenv = consumerEnv(stub.url);
    consumers.push(...(await Promise.all([startConsumer(wenv), startConsumer(wenv)])));
    const out = path.join(runs, "resumed");
    const from = stub.requests.length;
    const submitter = startCli(evalArgs(out, 8, ["--queue"]), env, 240_000);
    let seen = 0;
    submitter.child.stderr?.on("data", (chunk: Buffer) => {
      seen += (String(chunk).match(/^\[\d+\/\d+\]/gm) ?? []).length;
      if (seen >= 2) submitter.child.kill("SIGKILL");
    });
    const killed = await submitter.done;
    expect(killed.signal).toBe("SIGKILL");
    const before = idsOf(path.join(out, "results.jsonl"));
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(before.length).toBeLessThan(8);

    // The consumers go on without it: every job ends, and the finished ones wait in Redis.
    const ended = async () => {
      const counts = await queueCounts(url);
      return counts.wait === 0 && counts.active === 0;
    };
    for (let i = 0; i < 600 && !(await ended()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await ended()).toBe(true);

    const again = await runCli(evalArgs(out, 8, ["--queue"]), env, 240_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${8 - before.length} to run, ${before.length} already done`);
    expect(again.stderr).toMatch(
      /eval: 0 questions queued on \S+ \(\d+ finished while no one waited\)/,
    );
    const after = idsOf(path.join(out, "results.jsonl"));
    expect(after).toHaveLength(8);
    expect(new Set(after).size).toBe(8);
    expect(after.slice(0, before.length)).toEqual(before);
    // Each question was planned once: none ran twice, none was lost.
    expect([...plansPerQuestion(stub, examples.slice(0, 8), from).values()]).toEqual(
      Array(8).fill(1),
    );
    expect((await queueCounts(url)).completed).toBe(0);
  }, 400_000);

  it("submitted again while its questions wait on the queue, queues none of them twice", async () => {
    const out = path.join(runs, "requeued");
    const from = stub.requests.length;
    // No consumer yet: the first submitter stops waiting once its questions are queued.
    const first = startCli(evalArgs(out, 4, ["--queue"]), env, 240_000);
    let queuedLine = false;
    first.child.stderr?.on("data", (chunk: Buffer) => {
      if (!queuedLine && String(chunk).includes("questions queued on")) {
        queuedLine = true;
        first.child.kill("SIGINT");
      }
    });
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain("the queued questions go on, the same command collects them");
    expect((await queueCounts(url)).wait).toBe(4);

    const again = startCli(evalArgs(out, 4, ["--queue"]), env, 240_000);
    consumers.push(await startConsumer(consumerEnv(stub.url)));
    const result = await again.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/eval: 0 questions queued on \S+ \(4 queued already\)/);
    expect(idsOf(path.join(out, "results.jsonl"))).toHaveLength(4);
    expect([...plansPerQuestion(stub, examples.slice(0, 4), from).values()]).toEqual(
      Array(4).fill(1),
    );
    expect(await queueCounts(url)).toMatchObject({ wait: 0, completed: 0 });
  }, 400_000);
});

describe("eval --queue when a consumer is killed in the middle of a job", () => {
  it("has another consumer finish the job, and the killed consumer's child stops too", async () => {
    // Slow enough to kill a consumer while its question is with the model.
    const stub = await startStubOpenAI({
      respond: tablebenchTeam,
      latencyMs: 300,
      idleTimeoutMs: 600_000,
    });
    try {
      const env = await submitterEnv();
      const wenv = consumerEnv(stub.url);
      const flags = ["--concurrency", "1", "--lock-duration", "2000"];
      const doomed = await startConsumer(wenv, flags);
      consumers.push(doomed);
      const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-kill-"));
      const submitter = startCli(evalArgs(out, 2, ["--queue"]), env, 240_000);

      await doomed.waitFor(/consumer: eval \S+ started/);
      const [, victim] = /consumer: eval (\S+) started/.exec(doomed.log()) ?? [];
      // In the middle of the job: its question has reached the model.
      const question = examples.find((e) => e.id === victim)?.question ?? "";
      for (let i = 0; i < 600; i++) {
        if (stub.requests.some((r) => lastMessage(r).includes(question))) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(stub.requests.some((r) => lastMessage(r).includes(question))).toBe(true);
      const [child] = execFileSync("pgrep", ["-P", String(doomed.child.pid)], { encoding: "utf8" })
        .trim()
        .split("\n")
        .map(Number);
      await doomed.stop("SIGKILL");

      const survivor = await startConsumer(wenv, flags);
      consumers.push(survivor);
      const result = await submitter.done;
      expect(result.code, result.stderr).toBe(0);
      expect(new Set(idsOf(path.join(out, "results.jsonl")))).toEqual(
        new Set(examples.slice(0, 2).map((e) => e.id)),
      );
      expect(survivor.log()).toMatch(/of a consumer that stopped goes back to the queue/);
      expect(finishedBy(survivor)).toContain(victim);
      expect(finishedBy(doomed)).not.toContain(victim);
      // The killed consumer's child process does not go on with a job nobody holds.
      const alive = () => {
        try {
          process.kill(child ?? 0, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && alive(); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(alive()).toBe(false);
    } finally {
      await stub.close();
    }
  }, 400_000);
});

describe("eval --queue with the model endpoint down", () => {
  it("stops with the endpoint's message, records nothing, and a later run does them all", async () => {
    const port = await freePort();
    const stub = await startStubOpenAI({ respond: tablebenchTeam, idleTimeoutMs: 600_000 });
    try {
      // The consumers' endpoint is down; the submitter's own could answer, and is not asked.
      const downConsumer = await startConsumer(consumerEnv(`http://127.0.0.1:${port}/v1`), [
        "--concurrency",
        "1",
      ]);
      consumers.push(downConsumer);
      const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-down-"));
      const args = evalArgs(out, 4, ["--llm-retries", "0", "--queue", url]);
      const submitter = { ...stubEnv(stub.url), ...redis.env, TABLEMINDS_QUEUE_URL: undefined };
      const down = await runCli(args, submitter, 240_000);
      expect(down.code).toBe(1);
      // The message a run here prints.
      expect(down.stderr).toMatch(
        new RegExp(
          `^eval: stopped: 3 questions in a row failed on the model endpoint 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; 4 of 4 questions left, the same command runs them once the endpoint works$`,
          "m",
        ),
      );
      expect(readFileSync(path.join(out, "results.jsonl"), "utf8")).toBe("");
      expect(stub.requests).toHaveLength(0);
      expect(runInfo(out)).toMatchObject({
        finished: null,
        stopped: { reason: expect.any(String) },
      });
      // What had not started is off the queue.
      expect((await queueCounts(url)).wait).toBe(0);

      await downConsumer.stop();
      consumers.push(await startConsumer(consumerEnv(stub.url), ["--concurrency", "1"]));
      const up = await runCli(args, submitter, 240_000);
      expect(up.code, up.stderr).toBe(0);
      expect(up.stderr).toContain("4 to run, 0 already done");
      expect(idsOf(path.join(out, "results.jsonl"))).toHaveLength(4);
      expect(runInfo(out)).toMatchObject({ stopped: null, finished: expect.any(String) });
    } finally {
      await stub.close();
    }
  }, 400_000);
});

describe("a job that no holder of the queue's key sealed as it stands", () => {
  it("is refused by the consumer: no request to the endpoint it names, no file it names opened", async () => {
    const theirs = await startStubOpenAI({ respond: tablebenchTeam, idleTimeoutMs: 600_000 });
    const own = await startStubOpenAI({ respond: tablebenchTeam, idleTimeoutMs: 600_000 });
    const queue = new Queue(QUEUE_NAME, { connection: redisOptions(url) });
    try {
      consumers.push(await startConsumer(consumerEnv(own.url), ["--concurrency", "1"]));
      const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-forged-"));
      const secret = path.join(dir, "secret.csv");
      writeFileSync(secret, "canary,value\nZQX-consumer-file-5531,1\n");
      const [example] = examples;
      if (!example) throw new Error("no example");
      const job = {
        run: "forged",
        invocation: 1,
        graph: "table_qa",
        dataset: "tablebench",
        example,
        context: { maxReflections: 0 },
        timeoutMs: 60_000,
        retries: 0,
      };
      // A job of the shape a route once travelled in, unsealed.
      const routed = {
        ...job,
        example: { ...example, tables: [{ path: secret }] },
        context: { model: `local:${secret}` },
        route: { OPENAI_BASE_URL: theirs.url },
      };
      const key = redis.env.TABLEMINDS_QUEUE_KEY ?? "";
      const forged: [string, unknown][] = [
        ["eval.forged.plain", routed],
        [
          "eval.forged.otherkey",
          seal("k".repeat(48), jobLabel("eval", "eval.forged.otherkey"), job),
        ],
        // A genuine seal, copied onto another job id.
        ["eval.forged.moved", seal(key, jobLabel("eval", "eval.forged.elsewhere"), job)],
        // Sealed with the key, yet naming a file and a model of the consumer's.
        [
          "eval.forged.paths",
          seal(key, jobLabel("eval", "eval.forged.paths"), { ...routed, route: undefined }),
        ],
      ];
      for (const [jobId, data] of forged) await queue.add("eval", data, { jobId });
      const reasons = new Map<string, string>();
      for (let i = 0; i < 600 && reasons.size < forged.length; i++) {
        for (const [jobId] of forged) {
          const stored = await queue.getJob(jobId);
          if (stored && (await stored.getState()) === "failed") {
            reasons.set(jobId, stored.failedReason);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(reasons.get("eval.forged.plain")).toBe("refused: not sealed with the queue's key");
      expect(reasons.get("eval.forged.otherkey")).toBe(
        "refused: its seal does not match the queue's key (TABLEMINDS_QUEUE_KEY)",
      );
      expect(reasons.get("eval.forged.moved")).toBe(reasons.get("eval.forged.otherkey"));
      const paths = reasons.get("eval.forged.paths") ?? "";
      expect(paths).toContain("a job's tables are inline or uploads, never paths");
      expect(paths).toContain("model: a consumer's models are its own");
      expect(paths).not.toContain("ZQX-consumer-file-5531");
      expect(theirs.requests).toHaveLength(0);
      expect(own.requests).toHaveLength(0);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      await theirs.close();
      await own.close();
    }
  }, 400_000);
});

describe("eval --queue arguments", () => {
  it("says in one line when the queue cannot be reached, and refuses a consumer's own setting", async () => {
    const port = await freePort();
    const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-args-"));
    const keyless = await runCli(
      evalArgs(out, 1, ["--queue", url]),
      stubEnv("http://127.0.0.1:1/v1"),
    );
    expect(keyless.code).toBe(1);
    expect(keyless.stderr.trim()).toBe(
      "tableminds: no queue key: set TABLEMINDS_QUEUE_KEY to the same secret where jobs are submitted and where consumers run (`openssl rand -hex 24` makes one)",
    );
    const env = { ...stubEnv("http://127.0.0.1:1/v1"), ...redis.env };
    const unreachable = await runCli(
      evalArgs(out, 1, ["--queue", `redis://127.0.0.1:${port}`]),
      env,
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trim()).toBe(
      `tableminds: the queue at redis://127.0.0.1:${port} cannot be reached (ECONNREFUSED 127.0.0.1:${port})`,
    );
    const sandbox = await runCli(evalArgs(out, 1, ["--queue", url, "--sandbox", "e2b"]), env);
    expect(sandbox.code).toBe(1);
    expect(sandbox.stderr).toContain(
      "with --queue, --sandbox is each consumer's own setting: set TABLEMINDS_SANDBOX where the consumers run",
    );
    const model = await runCli(evalArgs(out, 1, ["--queue", url, "--model", "gpt-4o"]), env);
    expect(model.code).toBe(1);
    expect(model.stderr).toContain(
      "with --queue, model is each consumer's own setting: set TABLEMINDS_MODEL (or TABLEMINDS_<ROLE>_MODEL) where the consumers run",
    );
    const help = await runCli(["consume", "--help"], {});
    expect(help.stdout).toContain("The model endpoint, key");
    expect(help.stdout).toContain("tableminds consume --queue redis://");
  });
});
