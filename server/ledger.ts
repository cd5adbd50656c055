import type { ThreadSaver } from "@langchain/langgraph-api/experimental/embed";
import type pg from "pg";
import { z } from "zod";
import type { Migrations } from "../graphs/persistence-postgres.js";
import type { Pool } from "../storage/postgres.js";
import { LEASE_STATEMENTS } from "./leases.js";
import { retryTransient } from "./transient.js";

/*
 * What every replica of the API server shares in PostgreSQL besides LangGraph's checkpoints:
 * the threads (their metadata, their owner) and the runs (who started what, with which
 * settings, how it ended, and the lease token it ran under). A run marked `running` whose
 * thread's lease has expired was left by a replica that died; server/recovery.ts finishes it
 * from its last checkpoint. Every statement is tried again after a transient failure.
 */

export const LEDGER_MIGRATIONS: Migrations = {
  name: "server",
  statements: [
    `CREATE TABLE tableminds_threads (
       thread_id uuid PRIMARY KEY,
       metadata jsonb NOT NULL DEFAULT '{}',
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE tableminds_runs (
       run_id uuid PRIMARY KEY,
       thread_id uuid NOT NULL REFERENCES tableminds_threads ON DELETE CASCADE,
       assistant_id text NOT NULL,
       kwargs jsonb NOT NULL,
       status text NOT NULL,
       replica text NOT NULL,
       error text,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now())`,
    "CREATE INDEX tableminds_runs_running ON tableminds_runs (status) WHERE status = 'running'",
    ...LEASE_STATEMENTS,
  ],
};

const MetadataSchema = z.record(z.string(), z.unknown());

const ThreadRowSchema = z.object({
  thread_id: z.string(),
  metadata: MetadataSchema,
  created_at: z.date(),
  updated_at: z.date(),
});

export type ThreadRecord = {
  thread_id: string;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  status: "idle";
  values: Record<string, never>;
};

function threadOf(row: unknown): ThreadRecord {
  const parsed = ThreadRowSchema.parse(row);
  return {
    thread_id: parsed.thread_id,
    metadata: parsed.metadata,
    created_at: parsed.created_at.toISOString(),
    updated_at: parsed.updated_at.toISOString(),
    status: "idle",
    values: {},
  };
}

export const RunStatusSchema = z.enum(["running", "success", "error", "interrupted"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** What a run was started with, enough to go on with it elsewhere. */
export const RunKwargsSchema = z.looseObject({
  context: z.record(z.string(), z.unknown()).nullish(),
  config: z.looseObject({}).nullish(),
  input: z.unknown().optional(),
  command: z.unknown().optional(),
  /** The thread's last checkpoint before the run: a later one means the run's input landed. */
  base: z.string().nullish(),
});

const RunRowSchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  assistant_id: z.string(),
  kwargs: RunKwargsSchema,
  status: RunStatusSchema,
  replica: z.string(),
  error: z.string().nullable(),
  fence: z.coerce.number().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type RunRecord = z.infer<typeof RunRowSchema>;

/** The threads and runs of the server, in PostgreSQL. */
export class Ledger {
  constructor(private readonly db: Pool) {}

  private readonly pool = {
    query: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) =>
      retryTransient(() => this.db.query<R>(text, values)),
  };

  /** The embed server's view of the threads. */
  threads(): ThreadSaver {
    const ledger = this;
    return {
      // The embed server answers 404 for null; its type does not say so.
      get: (id) => ledger.thread(id) as ReturnType<ThreadSaver["get"]>,
      set: (id, options) => ledger.setThread(id, options.kind, options.metadata ?? {}),
      delete: (id) => ledger.deleteThread(id),
      async *search(options) {
        const filter = options.metadata ?? {};
        const order = `${options.sortBy} ${options.sortOrder === "asc" ? "ASC" : "DESC"}`;
        const rows = await ledger.pool.query(
          `SELECT *, count(*) OVER () AS total FROM tableminds_threads WHERE metadata @> $1::jsonb
           ORDER BY ${order} LIMIT $2 OFFSET $3`,
          [JSON.stringify(filter), options.limit, options.offset],
        );
        for (const row of rows.rows) yield { thread: threadOf(row), total: Number(row.total) };
      },
    };
  }

  async thread(id: string): Promise<ThreadRecord | null> {
    const rows = await this.pool.query("SELECT * FROM tableminds_threads WHERE thread_id = $1", [
      id,
    ]);
    return rows.rows[0] ? threadOf(rows.rows[0]) : null;
  }

  async setThread(
    id: string,
    kind: "put" | "patch",
    metadata: Record<string, unknown>,
  ): Promise<ThreadRecord> {
    const merge =
      kind === "put"
        ? "metadata = EXCLUDED.metadata"
        : "metadata = tableminds_threads.metadata || EXCLUDED.metadata";
    const rows = await this.pool.query(
      `INSERT INTO tableminds_threads (thread_id, metadata) VALUES ($1, $2::jsonb)
       ON CONFLICT (thread_id) DO UPDATE SET ${merge}, updated_at = now() RETURNING *`,
      [id, JSON.stringify(metadata)],
    );
    return threadOf(rows.rows[0]);
  }

  async deleteThread(id: string): Promise<void> {
    await this.pool.query("DELETE FROM tableminds_threads WHERE thread_id = $1", [id]);
  }

  async startRun(run: {
    runId: string;
    threadId: string;
    assistantId: string;
    kwargs: z.infer<typeof RunKwargsSchema>;
    replica: string;
    /** The token of the lease the run starts under. */
    fence: number;
  }): Promise<void> {
    // A retry after a commit whose reply was lost finds the row there already.
    await this.pool.query(
      `INSERT INTO tableminds_runs (run_id, thread_id, assistant_id, kwargs, status, replica, fence)
       VALUES ($1, $2, $3, $4::jsonb, 'running', $5, $6) ON CONFLICT (run_id) DO NOTHING`,
      [
        run.runId,
        run.threadId,
        run.assistantId,
        JSON.stringify(run.kwargs),
        run.replica,
        run.fence,
      ],
    );
  }

  /** A run recorded under a provisional id, given the id its server gave it. */
  async renameRun(from: string, to: string): Promise<void> {
    await this.pool.query("UPDATE tableminds_runs SET run_id = $2 WHERE run_id = $1", [from, to]);
  }

  /** A run that never started. */
  async forgetRun(runId: string): Promise<void> {
    await this.pool.query("DELETE FROM tableminds_runs WHERE run_id = $1", [runId]);
  }

  /**
   * How a run ended, recorded only by the holder of the run's current token: false when the
   * run was taken over meanwhile (its new owner records the end).
   */
  async endRun(runId: string, fence: number, status: RunStatus, error?: string): Promise<boolean> {
    const rows = await this.pool.query(
      `UPDATE tableminds_runs SET status = $3, error = $4, updated_at = now()
       WHERE run_id = $1 AND fence = $2`,
      [runId, fence, status, error ?? null],
    );
    return (rows.rowCount ?? 0) > 0;
  }

  /** A run taken over by another replica, under the token of its new lease. */
  async adoptRun(runId: string, replica: string, fence: number): Promise<void> {
    await this.pool.query(
      "UPDATE tableminds_runs SET replica = $2, fence = $3, updated_at = now() WHERE run_id = $1",
      [runId, replica, fence],
    );
  }

  async run(runId: string): Promise<RunRecord | null> {
    const rows = await this.pool.query("SELECT * FROM tableminds_runs WHERE run_id = $1", [runId]);
    return rows.rows[0] ? RunRowSchema.parse(rows.rows[0]) : null;
  }

  async runsOf(threadId: string): Promise<RunRecord[]> {
    const rows = await this.pool.query(
      "SELECT * FROM tableminds_runs WHERE thread_id = $1 ORDER BY created_at DESC",
      [threadId],
    );
    return rows.rows.map((row) => RunRowSchema.parse(row));
  }

  /** Runs marked running, oldest first: each is either in hand somewhere or orphaned. */
  async running(): Promise<RunRecord[]> {
    const rows = await this.pool.query(
      "SELECT * FROM tableminds_runs WHERE status = 'running' ORDER BY created_at",
    );
    return rows.rows.map((row) => RunRowSchema.parse(row));
  }
}
