import { execFileSync } from "node:child_process";
import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobBatch } from "../../storage/queue/batch.js";
import { QUEUE_NAME, redisOptions } from "../../storage/queue/connection.js";
import { type Service, startService } from "../support/services.js";

/*
 * The submitting side of the queue on a real Redis: jobs that vanish from Redis while they are
 * awaited (a Redis that kept nothing on disk, restarted) are queued again by the submitter, run,
 * and their outcomes delivered; nothing is asked twice while it is still there.
 */

describe("a batch of queued jobs", () => {
  let redis: Service;
  let url: string;

  beforeAll(() => {
    redis = startService("redis");
    url = redis.env.TABLEMINDS_QUEUE_URL ?? "";
  }, 60_000);

  afterAll(() => redis?.stop());

  it("queues again what Redis lost, and delivers every outcome once", async () => {
    const warnings: string[] = [];
    const batch = await JobBatch.open(url, {
      sweepMs: 100,
      onError: (error) => warnings.push(error.message),
    });
    const admin = new Queue(QUEUE_NAME, { connection: redisOptions(url) });
    const ran: string[] = [];
    let worker: Worker | undefined;
    try {
      const specs = ["q1", "q2", "q3"].map((id) => ({ id, name: "eval", data: { id } }));
      expect(await batch.submit(specs)).toEqual({ added: 3, pending: 0, finished: 0 });
      const waitingNow = async () => (await admin.getJobCounts("waiting")).waiting ?? 0;
      expect(await waitingNow()).toBe(3);
      // Redis loses everything, as a restart with no persistence does.
      execFileSync("redis-cli", ["-u", url, "flushall"]);
      expect(await waitingNow()).toBe(0);
      for (let i = 0; i < 50 && (await waitingNow()) < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await waitingNow()).toBe(3);
      expect(warnings).toContain("3 queued questions were gone from Redis; queued again");
      worker = new Worker(
        QUEUE_NAME,
        async (job) => {
          ran.push(job.id ?? "");
          return { answer: `${job.id}!` };
        },
        { connection: { ...redisOptions(url), maxRetriesPerRequest: null } },
      );
      const outcomes = await Promise.all(specs.map((spec) => batch.outcome(spec.id)));
      expect(outcomes).toEqual(
        specs.map((spec) => ({ kind: "completed", value: { answer: `${spec.id}!` } })),
      );
      // Present all along after the re-add: none was added twice.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ran.sort()).toEqual(["q1", "q2", "q3"]);
      expect(warnings.filter((w) => w.includes("gone from Redis"))).toHaveLength(1);
    } finally {
      await worker?.close();
      await admin.close();
      await batch.close();
    }
  }, 60_000);
});
