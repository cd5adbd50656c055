import { Job, Queue, QueueEvents } from "bullmq";
import { QUEUE_NAME, redisOptions } from "./connection.js";

/*
 * The submitting side of the queue: a batch of jobs with ids of the caller's choosing, added
 * once (an id already queued or running is left alone), and the outcome of each as it ends.
 * Finished jobs stay in Redis until the caller has kept their result and releases them, so a
 * submitter that was down when they ended picks them up when it comes back. A job that
 * vanished from Redis while awaited (a restart of a Redis that keeps nothing on disk) is added
 * again by the sweep: jobs are idempotent by id, so the worst is a question asked twice.
 */

/** How a job ended: its return value, or the reason it failed. */
export type JobOutcome = { kind: "completed"; value: unknown } | { kind: "failed"; reason: string };

export interface JobSpec {
  id: string;
  /** The job's kind; the consumer's processor tells the kinds apart by it. */
  name: string;
  data: unknown;
}

/** What submitting found on the queue. */
export interface Submitted {
  /** Jobs added now. */
  added: number;
  /** Jobs already queued or running (an earlier submission's). */
  pending: number;
  /** Jobs that had finished while no submitter waited for them. */
  finished: number;
}

/** Finished jobs are also looked for this often, should an event have been missed. */
const SWEEP_MS = 5_000;
/** Jobs looked up at once when submitting. */
const CHUNK = 200;

interface Waiting {
  promise: Promise<JobOutcome>;
  resolve: (outcome: JobOutcome) => void;
}

function waiting(): Waiting {
  let resolve: (outcome: JobOutcome) => void = () => {};
  const promise = new Promise<JobOutcome>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const BUSY_STATES = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

export class JobBatch {
  /** Every submitted job's outcome, delivered or not. */
  private readonly outcomes = new Map<string, Promise<JobOutcome>>();
  /** The jobs whose outcome is still awaited. */
  private readonly waits = new Map<string, Waiting>();
  /** What each awaited job was submitted as, to add it again should Redis lose it. */
  private readonly specs = new Map<string, JobSpec>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly onError: (error: Error) => void,
  ) {}

  /**
   * Opens the queue and listens to its events. A job that ends before the listening starts
   * is found by the sweep, which also covers events lost while Redis was away.
   */
  static async open(
    url: string,
    options: { onError?: (error: Error) => void; sweepMs?: number } = {},
  ): Promise<JobBatch> {
    const connection = redisOptions(url);
    const queue = new Queue(QUEUE_NAME, { connection });
    const onError = options.onError ?? (() => {});
    queue.on("error", onError);
    await queue.waitUntilReady();
    const events = new QueueEvents(QUEUE_NAME, { connection });
    events.on("error", onError);
    const batch = new JobBatch(queue, events, onError);
    const check = ({ jobId }: { jobId: string }) => batch.check(jobId);
    events.on("completed", check);
    events.on("failed", check);
    await events.waitUntilReady();
    batch.sweeper = setInterval(() => batch.sweep(), options.sweepMs ?? SWEEP_MS);
    batch.sweeper.unref();
    return batch;
  }

  /**
   * Adds the jobs not on the queue. One that is queued or running stays as it is; one that
   * failed is removed and added again; one that finished has its outcome delivered.
   */
  async submit(specs: readonly JobSpec[]): Promise<Submitted> {
    for (const spec of specs) {
      if (this.outcomes.has(spec.id)) continue;
      const wait = waiting();
      this.waits.set(spec.id, wait);
      this.specs.set(spec.id, spec);
      this.outcomes.set(spec.id, wait.promise);
    }
    const toAdd: JobSpec[] = [];
    let pending = 0;
    let finished = 0;
    for (let at = 0; at < specs.length; at += CHUNK) {
      await Promise.all(
        specs.slice(at, at + CHUNK).map(async (spec) => {
          const job = await Job.fromId(this.queue, spec.id);
          const state = job ? await job.getState() : "unknown";
          if (state === "completed") {
            finished += 1;
            await this.check(spec.id);
          } else if (BUSY_STATES.has(state)) {
            pending += 1;
          } else {
            // Failed in an earlier submission (or gone): it runs again.
            if (job) await job.remove();
            toAdd.push(spec);
          }
        }),
      );
    }
    await this.add(toAdd);
    return { added: toAdd.length, pending, finished };
  }

  private async add(specs: readonly JobSpec[]): Promise<void> {
    await this.queue.addBulk(
      specs.map((spec) => ({
        name: spec.name,
        data: spec.data,
        opts: { jobId: spec.id, attempts: 1, removeOnComplete: false, removeOnFail: false },
      })),
    );
  }

  /** How job `id` ends (a job this batch submitted). */
  outcome(id: string): Promise<JobOutcome> {
    const outcome = this.outcomes.get(id);
    if (!outcome) throw new Error(`job ${id} was not submitted by this batch`);
    return outcome;
  }

  /** Lets a finished job go, once its result is kept. */
  async release(id: string): Promise<void> {
    try {
      await this.queue.remove(id);
    } catch (error) {
      this.onError(error as Error);
    }
  }

  /**
   * Lets go of finished jobs whose results were kept by an earlier submitter that stopped
   * before it could release them (ids of questions already in its results).
   */
  async discard(ids: readonly string[]): Promise<void> {
    for (let at = 0; at < ids.length; at += CHUNK) {
      await Promise.all(ids.slice(at, at + CHUNK).map((id) => this.release(id)));
    }
  }

  /**
   * Removes the jobs of this batch that have not started; those running are left to end
   * (their results wait in Redis for the next submission). Returns how many were removed.
   */
  async withdraw(): Promise<number> {
    let removed = 0;
    for (const id of this.waits.keys()) {
      try {
        const job = await Job.fromId(this.queue, id);
        if (job && (await job.getState()) !== "active" && (await this.queue.remove(id)) === 1) {
          removed += 1;
        }
      } catch {
        // Started in the meantime (locked): it ends on its consumer.
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await this.events.close();
    await this.queue.close();
  }

  private settle(id: string, outcome: JobOutcome): void {
    const wait = this.waits.get(id);
    this.waits.delete(id);
    this.specs.delete(id);
    wait?.resolve(outcome);
  }

  /** Delivers job `id`'s outcome if it has ended and is still awaited. */
  private async check(id: string): Promise<void> {
    const wait = this.waits.get(id);
    if (!wait || this.closed) return;
    try {
      const job = await Job.fromId(this.queue, id);
      if (!job || !this.waits.has(id)) return;
      const state = await job.getState();
      if (state === "completed") {
        this.settle(id, { kind: "completed", value: job.returnvalue });
      } else if (state === "failed") {
        this.settle(id, { kind: "failed", reason: job.failedReason ?? "failed" });
      }
    } catch (error) {
      // Redis away for a moment: the sweep tries again.
      this.onError(error as Error);
    }
  }

  /**
   * Looks for ended jobs among those awaited, in case an event was missed, and adds again the
   * awaited jobs Redis no longer has.
   */
  private async sweep(): Promise<void> {
    const ids = [...this.waits.keys()];
    if (ids.length === 0 || this.closed) return;
    try {
      const client = await this.queue.client;
      const { completed = "", failed = "" } = this.queue.keys;
      for (let at = 0; at < ids.length; at += CHUNK) {
        // Sent together on the one connection, so the round trips overlap.
        const chunk = ids.slice(at, at + CHUNK);
        const [ended, kept] = await Promise.all([
          Promise.all(
            chunk.map(
              async (id) =>
                (await client.zscore(completed, id)) !== null ||
                (await client.zscore(failed, id)) !== null,
            ),
          ),
          Promise.all(
            chunk.map(async (id) => (await client.hexists(this.queue.toKey(id), "name")) > 0),
          ),
        ]);
        await Promise.all(chunk.filter((_, i) => ended[i]).map((id) => this.check(id)));
        const lost = chunk.filter((id, i) => !ended[i] && !kept[i] && this.waits.has(id));
        const specs = lost.flatMap((id) => this.specs.get(id) ?? []);
        if (specs.length > 0) {
          this.onError(
            new Error(`${specs.length} queued questions were gone from Redis; queued again`),
          );
          await this.add(specs);
        }
      }
    } catch (error) {
      this.onError(error as Error);
    }
  }
}
