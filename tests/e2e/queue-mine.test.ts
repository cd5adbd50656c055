import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_FILES } from "../../training/exports/write.js";
import { runCli } from "../support/cli.js";
import { stubEnv } from "../support/env.js";
import { queueCounts, type RunningConsumer, recordsOf, startConsumer } from "../support/queue.js";
import { type Service, startService } from "../support/services.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { tablebenchTeam } from "../support/tablebench-team.js";

/*
 * `mine --queue` against a real Redis and a real `tableminds consume`, with the stub model:
 * the same mined searches, results and exports as a mine here.
 */

const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

function mineArgs(out: string, extra: string[] = []): string[] {
  return [
    "mine",
    "--dataset",
    "tablebench",
    "--data",
    SAMPLE,
    "--stage",
    "coder",
    "--out",
    out,
    "--limit",
    "3",
    "--held-out",
    "1",
    "--search-budget",
    "9",
    "--max-code-attempts",
    "1",
    ...extra,
  ];
}

/** A file's lines, sorted: the exports follow the order the questions finished in. */
const sortedLines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).sort();

describe("mine --queue", () => {
  let redis: Service;
  let stub: StubServer;
  let consumer: RunningConsumer | undefined;

  beforeAll(async () => {
    redis = startService("redis");
    stub = await startStubOpenAI({ respond: tablebenchTeam, idleTimeoutMs: 600_000 });
  });
  afterAll(async () => {
    await consumer?.stop("SIGKILL");
    await stub?.close();
    redis?.stop();
  });

  it("writes the same mined searches, results and exports as a mine here", async () => {
    const url = redis.env.TABLEMINDS_QUEUE_URL ?? "";
    const env = stubEnv(stub.url);
    const runs = mkdtempSync(path.join(os.tmpdir(), "tableminds-queue-mine-"));
    const here = path.join(runs, "here");
    const local = await runCli(mineArgs(here, ["--concurrency", "1"]), env, 300_000);
    expect(local.code, local.stderr).toBe(0);

    consumer = await startConsumer({ ...stubEnv(stub.url), ...redis.env }, ["--concurrency", "2"]);
    const queued = path.join(runs, "queued");
    const result = await runCli(
      mineArgs(queued, ["--queue", url]),
      { ...env, TABLEMINDS_QUEUE_KEY: redis.env.TABLEMINDS_QUEUE_KEY },
      300_000,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`mine: 3 questions queued on ${url}`);
    expect(result.stdout).toBe(local.stdout);

    const mined = recordsOf(queued, "mined.jsonl");
    expect(mined.size).toBe(3);
    expect(mined).toEqual(recordsOf(here, "mined.jsonl"));
    expect(recordsOf(queued)).toEqual(recordsOf(here));
    for (const file of [EXPORT_FILES.trajectories, EXPORT_FILES.pseudoGold]) {
      expect(sortedLines(path.join(queued, file))).toEqual(sortedLines(path.join(here, file)));
    }
    expect(await queueCounts(url)).toMatchObject({ wait: 0, active: 0, completed: 0, failed: 0 });
  }, 600_000);
});
