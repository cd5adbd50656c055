import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { openPool, outlivingRestarts, type Pool, withMigrationLock } from "../storage/postgres.js";
import type { OpenPersistence } from "./persistence.js";

/**
 * A schema of our own in the database, migrated in order: statement `v` runs once, recorded in
 * `tableminds_migrations` under `name`.
 */
export interface Migrations {
  name: string;
  statements: readonly string[];
}

export interface MigrationReport {
  /** What ran, as `name v<version>` (LangGraph's tables as `checkpoints` and `store`). */
  applied: string[];
}

const LEDGER = `CREATE TABLE IF NOT EXISTS tableminds_migrations (
  name text NOT NULL, v integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, v))`;

async function applyOwn(pool: Pool, sets: readonly Migrations[]): Promise<string[]> {
  await pool.query(LEDGER);
  const applied: string[] = [];
  for (const set of sets) {
    const done = await pool.query<{ v: number }>(
      "SELECT coalesce(max(v), -1) AS v FROM tableminds_migrations WHERE name = $1",
      [set.name],
    );
    for (let v = (done.rows[0]?.v ?? -1) + 1; v < set.statements.length; v++) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query(set.statements[v] ?? "");
        await client.query("INSERT INTO tableminds_migrations (name, v) VALUES ($1, $2)", [
          set.name,
          v,
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      applied.push(`${set.name} v${v}`);
    }
  }
  return applied;
}

/**
 * Brings a database up to date: LangGraph's checkpoint and store tables (their own `setup()`,
 * which takes no lock of its own) and ours, all under one advisory lock, so that replicas
 * starting together migrate one after the other. Safe to run again: nothing is done twice.
 */
export async function migrateDatabase(
  url: string,
  own: readonly Migrations[] = [],
): Promise<MigrationReport> {
  const pool = openPool(url, 3);
  try {
    return await withMigrationLock(
      pool,
      async () => {
        const before = await pool.query<{ checkpoints: string | null; store: string | null }>(
          "SELECT to_regclass('checkpoint_migrations')::text AS checkpoints, to_regclass('store_migrations')::text AS store",
        );
        const count = async (table: string | null) =>
          table ? Number((await pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n) : 0;
        const checkpointsBefore = await count(before.rows[0]?.checkpoints ?? null);
        const storeBefore = await count(before.rows[0]?.store ?? null);
        await new PostgresSaver(pool).setup();
        const store = new PostgresStore({ connectionOptions: url, ensureTables: false });
        try {
          await store.setup();
        } finally {
          await store.stop();
        }
        const applied: string[] = [];
        const checkpointsAfter = await count("checkpoint_migrations");
        const storeAfter = await count("store_migrations");
        if (checkpointsAfter > checkpointsBefore)
          applied.push(`checkpoints v${checkpointsAfter - 1}`);
        if (storeAfter > storeBefore) applied.push(`store v${storeAfter - 1}`);
        applied.push(...(await applyOwn(pool, own)));
        return { applied };
      },
      url,
    );
  } finally {
    await pool.end();
  }
}

/**
 * LangGraph's PostgreSQL store, whose own pool outlives a server restart: the store opens its
 * pool itself, with nothing listening to its errors, so the first restart would end the process.
 * The pool is reached through the store's internals; a version that moved it fails here, at
 * start, not at the first restart.
 */
export function openPostgresStore(url: string): PostgresStore {
  const store = new PostgresStore({ connectionOptions: url, ensureTables: false });
  const pool = (store as unknown as { core?: { pool?: unknown } }).core?.pool;
  if (!(pool instanceof Object) || typeof (pool as Pool).on !== "function") {
    throw new Error(
      "@langchain/langgraph-checkpoint-postgres's store no longer keeps its pool at core.pool: update openPostgresStore",
    );
  }
  outlivingRestarts(pool as Pool);
  return store;
}

/** PostgreSQL's checkpointer and store (no vector index: see openPersistence), migrated first. */
export async function openPostgresPersistence(
  url: string,
  want: { checkpoints: boolean; memory: boolean },
): Promise<OpenPersistence> {
  await migrateDatabase(url);
  const pool = openPool(url);
  const checkpointer = want.checkpoints ? new PostgresSaver(pool) : undefined;
  const store = want.memory ? openPostgresStore(url) : undefined;
  return {
    kind: "postgres",
    checkpointer,
    store,
    async close() {
      await store?.stop();
      await pool.end();
    },
  };
}
