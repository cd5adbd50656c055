import pg from "pg";

/*
 * The PostgreSQL plumbing shared by the checkpointer, the memory store and the API server's
 * threads and runs: a pool per URL, one-line connection errors, and the migration lock (an
 * advisory lock, held only while a schema is migrated). Who runs a thread is a lease in a row,
 * not a lock tied to a connection: see server/leases.ts.
 */

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/**
 * A pool for `url`. A server restart is not fatal to the process: an idle client's error is
 * dropped with the client, and so is a checked-out client's between two queries (the pool
 * leaves the `error` event of a client in use unheard, which would crash the process); the
 * query in flight fails on its own, and the pool drops a client that cannot query any more.
 */
export function openPool(url: string, max = 10): pg.Pool {
  return outlivingRestarts(
    new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 10_000 }),
  );
}

/** Makes a pool's connection errors (a server restart) the failure of a query, never a crash. */
export function outlivingRestarts(pool: pg.Pool): pg.Pool {
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
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
const LOCK_SPACES = { migrate: 0x746d0001 } as const;

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
