import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { Pool, PoolClient } from "../storage/postgres.js";
import { LeaseLostError } from "./leases.js";
import { retryTransient } from "./transient.js";

/*
 * LangGraph's PostgreSQL checkpointer, with two things a replicated server needs:
 * - every write of a thread this replica holds a lease on commits only while the lease's token
 *   is still the current one, checked in the write's own transaction (the lease row is locked
 *   FOR SHARE, so a claim waits for the commit rather than slip in before it);
 * - a write or read that fails because the connection did (a database restart) is tried again,
 *   and the run goes on where it was.
 * The checkpointer writes in transactions it opens on `pool.connect()`; the pool it is given
 * hands out clients that run the check just before their COMMIT.
 */

/** The lease tokens this replica holds (server/leases.ts). */
export interface Fences {
  fenceOf(threadId: string): number | undefined;
  /** Told when a write finds a token taken over. */
  lost(threadId: string, fence: number): void;
}

const CHECKPOINT_WRITE = /^\s*INSERT INTO\s+(?:"[^"]+"\.)?checkpoint/i;

function fencedClient(client: PoolClient, fences: Fences): PoolClient {
  const threads = new Set<string>();
  const query = client.query.bind(client) as (text: unknown, values?: unknown) => Promise<unknown>;
  const fenced = async (text: unknown, values?: unknown) => {
    if (typeof text === "string" && CHECKPOINT_WRITE.test(text) && Array.isArray(values)) {
      if (typeof values[0] === "string") threads.add(values[0]);
    }
    if (text === "COMMIT") {
      for (const threadId of threads) {
        const fence = fences.fenceOf(threadId);
        if (fence === undefined) continue;
        const current = (await query(
          "SELECT 1 FROM tableminds_leases WHERE thread_id = $1 AND fence = $2 FOR SHARE",
          [threadId, fence],
        )) as { rowCount: number | null };
        if (!current.rowCount) {
          fences.lost(threadId, fence);
          throw new LeaseLostError(threadId, fence);
        }
      }
      threads.clear();
    }
    return query(text, values);
  };
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "query") return fenced;
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function fencedPool(pool: Pool, fences: Fences): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property === "connect") {
        return async () => fencedClient(await target.connect(), fences);
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

export class FencedSaver extends PostgresSaver {
  constructor(pool: Pool, fences: Fences) {
    super(fencedPool(pool, fences));
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return retryTransient(() => super.put(config, checkpoint, metadata, newVersions));
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string) {
    return retryTransient(() => super.putWrites(config, writes, taskId));
  }

  override getTuple(config: RunnableConfig) {
    return retryTransient(() => super.getTuple(config));
  }
}
