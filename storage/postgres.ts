import pg from "pg";

/*
 * The PostgreSQL plumbing shared by the checkpointer, the memory store and the API server's
 * threads and runs: a pool per URL, one-line connection errors, and advisory locks. A session
 * lock lives as long as the connection that took it: when a process dies, Postgres lets go of
 * its locks by itself, which is what tells other replicas that its runs need a new home.
 */

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** A pool for `url`; errors of idle clients (a server restart) are not fatal to the process. */
export function openPool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 10_000 });
  pool.on("error", () => {});
  return pool;
}

/** `postgres://user@host:port/db` without its password, for messages. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "TABLEMINDS_DATABASE_URL";
  }
}

/** A failure to reach the database, in one line that names it. */
export class DatabaseUnreachableError extends Error {
  override name = "DatabaseUnreachableError";
  constructor(url: string, cause: unknown) {
    super(`cannot reach PostgreSQL at ${describeUrl(url)}: ${(cause as Error).message ?? cause}`);
  }
}

/** Lock keys: two 32-bit halves, the first naming what the lock is for. */
const LOCK_SPACES = { migrate: 0x746d0001, thread: 0x746d0002 } as const;

/** The second half of a lock key for a string (a thread id), as Postgres hashes text. */
const KEY_SQL = "hashtext($2)";

/**
 * Runs `work` holding the cluster-wide migration lock (waiting for it), so that any number of
 * processes starting at once migrate the schema one after the other.
 */
export async function withMigrationLock<T>(
  pool: pg.Pool,
  work: () => Promise<T>,
  url = "",
): Promise<T> {
  const client = await pool.connect().catch((error) => {
    throw new DatabaseUnreachableError(url, error);
  });
  try {
    await client.query(`SELECT pg_advisory_lock($1, ${KEY_SQL})`, [LOCK_SPACES.migrate, "schema"]);
    try {
      return await work();
    } finally {
      await client.query(`SELECT pg_advisory_unlock($1, ${KEY_SQL})`, [
        LOCK_SPACES.migrate,
        "schema",
      ]);
    }
  } finally {
    client.release();
  }
}

/** A thread's lock, held by one connection until `release` (or until its process dies). */
export interface ThreadLock {
  release(): Promise<void>;
}

/** Takes a thread's lock without waiting; null when another session holds it. */
export async function tryThreadLock(pool: pg.Pool, threadId: string): Promise<ThreadLock | null> {
  const client = await pool.connect();
  let held = false;
  try {
    const result = await client.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_lock($1, ${KEY_SQL}) AS locked`,
      [LOCK_SPACES.thread, threadId],
    );
    held = result.rows[0]?.locked === true;
  } finally {
    if (!held) client.release();
  }
  if (!held) return null;
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query(`SELECT pg_advisory_unlock($1, ${KEY_SQL})`, [
          LOCK_SPACES.thread,
          threadId,
        ]);
        client.release();
      } catch (error) {
        // A broken connection has lost its locks with it; it is not given back to the pool.
        client.release(error as Error);
      }
    },
  };
}
