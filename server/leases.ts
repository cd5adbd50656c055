import type { Pool } from "../storage/postgres.js";
import { retryTransient } from "./transient.js";

/*
 * Who runs a thread now: a lease in a row of its own (owner, expiry, fencing token). Claiming is
 * one statement that succeeds only on a lease that has expired, and raises the token; the owner
 * renews its leases while it runs them. A replica that loses its connection keeps its lease for
 * as long as the lease lasts (a database restart takes well under that), and one that dies
 * stops renewing, so its leases expire and another replica claims them. Every checkpoint and
 * the run's final status are written only under the current token (server/fenced-saver.ts,
 * Ledger.endRun): a replica whose lease was taken over is refused at its next write, so it
 * stops at its next step and its result never overwrites the new owner's.
 */

export const LEASE_STATEMENTS = [
  `CREATE TABLE tableminds_leases (
     thread_id uuid PRIMARY KEY,
     owner text NOT NULL,
     run_id uuid,
     fence bigint NOT NULL,
     expires_at timestamptz NOT NULL)`,
  "ALTER TABLE tableminds_runs ADD COLUMN fence bigint",
] as const;

export class LeaseLostError extends Error {
  override name = "LeaseLostError";
  constructor(threadId: string, fence: number) {
    super(
      `thread ${threadId}: this replica's claim (token ${fence}) was taken over by another replica, which goes on with the run`,
    );
  }
}

export interface Lease {
  threadId: string;
  fence: number;
  /** Aborted once a renewal finds the lease taken over. */
  signal: AbortSignal;
  /** Lets the lease go at once (it would expire anyway); never throws. */
  release(): Promise<void>;
}

export interface LeaseOptions {
  /** This replica's name. */
  owner: string;
  /** How long a lease lasts without renewal. */
  ttlMs: number;
  /** How often this replica renews its leases (default a third of ttlMs). */
  renewEveryMs?: number;
}

interface Held {
  fence: number;
  controller: AbortController;
}

/** The leases one replica claims, renews and releases. */
export class Leases {
  private readonly held = new Map<string, Held>();
  private readonly timer: NodeJS.Timeout;
  private renewing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    readonly options: LeaseOptions,
  ) {
    this.timer = setInterval(
      () => {
        this.renewing = this.renewing.then(() => this.renew()).catch(() => {});
      },
      options.renewEveryMs ?? Math.max(50, Math.floor(options.ttlMs / 3)),
    );
    this.timer.unref();
  }

  /**
   * The token this replica holds for a thread; undefined for none. A lease found taken over
   * keeps its token here after its release, so that a write its run leaves behind is refused.
   */
  fenceOf(threadId: string): number | undefined {
    return this.held.get(threadId)?.fence;
  }

  /** A write found the lease taken over (server/fenced-saver.ts). */
  lost(threadId: string, fence: number): void {
    const held = this.held.get(threadId);
    if (held?.fence === fence) held.controller.abort();
  }

  /** Claims a thread's lease for `runId`; null while another holder's lease lasts. */
  async claim(threadId: string, runId: string | null = null): Promise<Lease | null> {
    const rows = await retryTransient(() =>
      this.pool.query<{ fence: string }>(
        `INSERT INTO tableminds_leases AS l (thread_id, owner, run_id, fence, expires_at)
         VALUES ($1, $2, $3, 1, now() + $4 * interval '1 millisecond')
         ON CONFLICT (thread_id) DO UPDATE
           SET owner = EXCLUDED.owner, run_id = EXCLUDED.run_id, fence = l.fence + 1,
               expires_at = EXCLUDED.expires_at
           WHERE l.expires_at <= now()
         RETURNING fence`,
        [threadId, this.options.owner, runId, this.options.ttlMs],
      ),
    );
    const fence = rows.rows[0] ? Number(rows.rows[0].fence) : undefined;
    if (fence === undefined) return null;
    const controller = new AbortController();
    this.held.set(threadId, { fence, controller });
    return {
      threadId,
      fence,
      signal: controller.signal,
      release: () => this.release(threadId, fence),
    };
  }

  /** Names the run a claim was made for, once the run has its id. */
  async attach(threadId: string, fence: number, runId: string): Promise<void> {
    await retryTransient(() =>
      this.pool.query(
        "UPDATE tableminds_leases SET run_id = $3 WHERE thread_id = $1 AND fence = $2",
        [threadId, fence, runId],
      ),
    );
  }

  private async release(threadId: string, fence: number): Promise<void> {
    const held = this.held.get(threadId);
    if (held?.fence === fence && !held.controller.signal.aborted) this.held.delete(threadId);
    try {
      await retryTransient(
        () =>
          this.pool.query(
            `UPDATE tableminds_leases SET expires_at = now(), run_id = NULL
             WHERE thread_id = $1 AND fence = $2`,
            [threadId, fence],
          ),
        { withinMs: this.options.ttlMs },
      );
    } catch {
      // Not given back: it expires by itself within ttlMs.
    }
  }

  /** Renews every lease held here; those another replica took are marked lost. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const entries = [...this.held.entries()];
    const rows = await this.pool.query<{ thread_id: string }>(
      `UPDATE tableminds_leases AS l SET expires_at = now() + $3 * interval '1 millisecond'
       FROM unnest($1::uuid[], $2::bigint[]) AS mine(thread_id, fence)
       WHERE l.thread_id = mine.thread_id AND l.fence = mine.fence
       RETURNING l.thread_id`,
      [entries.map(([id]) => id), entries.map(([, h]) => h.fence), this.options.ttlMs],
    );
    const kept = new Set(rows.rows.map((row) => row.thread_id));
    for (const [threadId, held] of entries) {
      // A lease released meanwhile is not in `held` any more; one still there was taken over.
      if (!kept.has(threadId) && this.held.get(threadId) === held) held.controller.abort();
    }
  }

  /** Stops renewing (the leases still held expire by themselves). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing;
  }
}
