import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../evals/datasets/index.js";
import type { EvalExample } from "../../evals/types.js";
import { runCli, startCli } from "../support/cli.js";
import { freePort } from "../support/dev-server.js";
import { stubEnv } from "../support/env.js";
import { evalArgs, SAMPLE } from "../support/eval-cli.js";
import {
  finishedBy,
  idsOf,
  queueCounts,
  type RunningWorker,
  recordsOf,
  startWorker,
} from "../support/queue.js";
import { lastMessage } from "../support/scripts.js";
import { type Service, startService } from "../support/services.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { tablebenchTeam } from "../support/tablebench-team.js";

/*
 * `eval run --queue` against a real Redis and real `tableminds worker` processes, with the
 * stub model: the same results as a run here, a submitter killed and started again, a worker
 * killed in the middle of a job, and an endpoint that is down.
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

/** Workers of a test, stopped after it. */
const workers: RunningWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop("SIGKILL")));
});

/**
 * A worker's environment: its own home (as on another machine) and a model endpoint of its
 * own that leads nowhere, so only the run's endpoint, which travels with each job, can answer.
 */
async function workerEnv(): Promise<Record<string, string | undefined>> {
  return {
    ...stubEnv(`http://127.0.0.1:${await freePort()}/v1`),
    TABLEMINDS_QUEUE_URL: url,
  };
}

describe("eval --queue with two workers", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  const runs = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-eval-"));

  beforeAll(async () => {
    stub = await startStubOpenAI({
      respond: tablebenchTeam,
      latencyMs: 30,
      idleTimeoutMs: 600_000,
    });
    env = { ...stubEnv(stub.url), TABLEMINDS_QUEUE_URL: url };
  });
  afterAll(async () => {
    await stub?.close();
  });

  it("writes the same results, report and warnings as a run here, and leaves the queue empty", async () => {
    const here = path.join(runs, "here");
    const local = await runCli(evalArgs(here, 12, ["--concurrency", "2"]), env);
    expect(local.code, local.stderr).toBe(0);

    const wenv = await workerEnv();
    workers.push(
      ...(await Promise.all([
        startWorker(wenv, ["--concurrency", "1"]),
        startWorker(wenv, ["--concurrency", "1"]),
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
    // A table's warning, raised on a worker, is in the run's own log, with its question.
    const warned = (dir: string) =>
      readFileSync(path.join(dir, "warnings.log"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => line.slice(line.indexOf(" ") + 1))
        .sort();
    expect(warned(queued)).toEqual(warned(here));
    expect(warned(queued).length).toBeGreaterThan(0);

    // Both workers ran questions, and nothing stays on the queue once the results are written.
    const [first, second] = workers;
    if (!first || !second) throw new Error("two workers");
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
    const wenv = await workerEnv();
    workers.push(...(await Promise.all([startWorker(wenv), startWorker(wenv)])));
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

    // The workers go on without it: every job ends, and the finished ones wait in Redis.
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
    // No worker yet: the first submitter stops waiting once its questions are queued.
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
    workers.push(await startWorker(await workerEnv()));
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

describe("eval --queue when a worker is killed in the middle of a job", () => {
  it("has another worker finish the job, and the killed worker's child stops too", async () => {
    // Slow enough to kill a worker while its question is with the model.
    const stub = await startStubOpenAI({
      respond: tablebenchTeam,
      latencyMs: 300,
      idleTimeoutMs: 600_000,
    });
    try {
      const env = { ...stubEnv(stub.url), TABLEMINDS_QUEUE_URL: url };
      const wenv = await workerEnv();
      const flags = ["--concurrency", "1", "--lock-duration", "2000"];
      const doomed = await startWorker(wenv, flags);
      workers.push(doomed);
      const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-kill-"));
      const submitter = startCli(evalArgs(out, 2, ["--queue"]), env, 240_000);

      await doomed.waitFor(/worker: eval \S+ started/);
      const [, victim] = /worker: eval (\S+) started/.exec(doomed.log()) ?? [];
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

      const survivor = await startWorker(wenv, flags);
      workers.push(survivor);
      const result = await submitter.done;
      expect(result.code, result.stderr).toBe(0);
      expect(new Set(idsOf(path.join(out, "results.jsonl")))).toEqual(
        new Set(examples.slice(0, 2).map((e) => e.id)),
      );
      expect(survivor.log()).toMatch(/of a worker that stopped goes back to the queue/);
      expect(finishedBy(survivor)).toContain(victim);
      expect(finishedBy(doomed)).not.toContain(victim);
      // The killed worker's child process does not go on with a job nobody holds.
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
      // The workers could reach the stub: only the run's endpoint, on the jobs, is down.
      workers.push(
        await startWorker({ ...stubEnv(stub.url), TABLEMINDS_QUEUE_URL: url }, [
          "--concurrency",
          "1",
        ]),
      );
      const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-down-"));
      const args = evalArgs(out, 4, ["--llm-retries", "0", "--queue", url]);
      const downEnv = {
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_API_KEY: "test-key",
        TABLEMINDS_MODEL: "stub-model",
        TABLEMINDS_HOME: stubEnv("http://unused").TABLEMINDS_HOME,
        TABLEMINDS_QUEUE_URL: undefined,
      };
      const down = await runCli(args, downEnv, 240_000);
      expect(down.code).toBe(1);
      // The message a run here prints.
      expect(down.stderr).toMatch(
        new RegExp(
          `^eval: stopped: 3 questions in a row failed on the model endpoint 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; 4 of 4 questions left, the same command runs them once the endpoint works$`,
          "m",
        ),
      );
      expect(readFileSync(path.join(out, "results.jsonl"), "utf8")).toBe("");
      expect(runInfo(out)).toMatchObject({
        finished: null,
        stopped: { reason: expect.any(String) },
      });
      // What had not started is off the queue.
      expect((await queueCounts(url)).wait).toBe(0);

      const up = await runCli(args, { ...downEnv, OPENAI_BASE_URL: stub.url }, 240_000);
      expect(up.code, up.stderr).toBe(0);
      expect(up.stderr).toContain("4 to run, 0 already done");
      expect(idsOf(path.join(out, "results.jsonl"))).toHaveLength(4);
      expect(runInfo(out)).toMatchObject({ stopped: null, finished: expect.any(String) });
    } finally {
      await stub.close();
    }
  }, 400_000);
});

describe("eval --queue arguments", () => {
  it("says in one line when the queue cannot be reached, and refuses a worker's own setting", async () => {
    const port = await freePort();
    const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-args-"));
    const env = stubEnv("http://127.0.0.1:1/v1");
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
      "with --queue, --sandbox is each worker's own setting: set TABLEMINDS_SANDBOX where the workers run",
    );
    const help = await runCli(["worker", "--help"], {});
    expect(help.stdout).toContain("each worker reads OPENAI_API_KEY from its own");
    expect(help.stdout).toContain("tableminds worker --queue redis://");
  });
});
