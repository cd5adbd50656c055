import { readFileSync } from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import { QUEUE_NAME, redisOptions } from "../../storage/queue/connection.js";
import { type CliResult, type RunningCli, startCli } from "./cli.js";

/*
 * `tableminds consume` processes for the queue's tests, and what those tests compare: the
 * records of a results file without what differs from run to run (times).
 */

export interface RunningConsumer extends RunningCli {
  /** What the consumer has logged so far. */
  log(): string;
  /** Resolves once the log matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts a consumer and waits until it takes jobs. */
export async function startConsumer(
  env: Record<string, string | undefined>,
  flags: string[] = [],
): Promise<RunningConsumer> {
  const running = startCli(["consume", ...flags], env, 600_000);
  let log = "";
  running.child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk;
  });
  const waitFor = (pattern: RegExp, timeoutMs = 120_000) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        if (pattern.test(log)) {
          clearInterval(poll);
          resolve();
        } else if (Date.now() - started > timeoutMs || running.child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error(`the consumer never logged ${pattern}; its log:\n${log}`));
        }
      }, 50);
    });
  await waitFor(/consumer: taking jobs from/);
  return {
    ...running,
    log: () => log,
    waitFor,
    stop: (signal = "SIGTERM") => {
      if (running.child.exitCode === null) running.child.kill(signal);
      return running.done;
    },
  };
}

/** The questions a consumer's log says it finished. */
export function finishedBy(consumer: RunningConsumer): string[] {
  return [...consumer.log().matchAll(/^consumer: \w+ (\S+) done/gm)].map((m) => m[1] ?? "");
}

/** How many jobs of each state the queue holds. */
export async function queueCounts(url: string): Promise<Record<string, number>> {
  const queue = new Queue(QUEUE_NAME, { connection: redisOptions(url) });
  try {
    return await queue.getJobCounts("wait", "active", "delayed", "completed", "failed");
  } finally {
    await queue.close();
  }
}

/** Fields that differ between two runs of the same question: times. */
const TIMES = ["latencyMs", "llmMs", "execMs", "finishedAt"];

/** The lines of a JSONL file of a run, by id, without their times. */
export function recordsOf(dir: string, file = "results.jsonl"): Map<string, unknown> {
  const lines = readFileSync(path.join(dir, file), "utf8").split("\n").filter(Boolean);
  return new Map(
    lines.map((line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      for (const key of TIMES) delete record[key];
      return [String(record.id), record];
    }),
  );
}

/** The ids of a JSONL file, in order. */
export function idsOf(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => String((JSON.parse(line) as { id: unknown }).id));
}
