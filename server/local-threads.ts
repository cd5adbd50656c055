import { mkdirSync } from "node:fs";
import path from "node:path";
import type { ThreadSaver } from "@langchain/langgraph-api/experimental/embed";
import Database from "better-sqlite3";
import { z } from "zod";

/*
 * The threads of one machine's API server (`tableminds ui`), in a SQLite file beside the
 * checkpoints: the embedded server keeps runs in memory, and threads here, so that past threads
 * are listed again after a restart. A replicated server keeps them in PostgreSQL instead
 * (server/ledger.ts).
 */

const RowSchema = z.object({
  thread_id: z.string(),
  metadata: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const MetadataSchema = z.record(z.string(), z.unknown());

function threadOf(row: unknown) {
  const parsed = RowSchema.parse(row);
  return {
    thread_id: parsed.thread_id,
    metadata: MetadataSchema.parse(JSON.parse(parsed.metadata)),
    created_at: parsed.created_at,
    updated_at: parsed.updated_at,
    status: "idle" as const,
    values: {},
  };
}

export class LocalThreads {
  private readonly db: Database.Database;

  constructor(file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.exec(`CREATE TABLE IF NOT EXISTS threads (
      thread_id TEXT PRIMARY KEY,
      metadata TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL)`);
  }

  /** The embedded server's view of the threads. */
  saver(): ThreadSaver {
    const db = this.db;
    const get = (id: string) => {
      const row = db.prepare("SELECT * FROM threads WHERE thread_id = ?").get(id);
      // The embedded server answers 404 for null; its type does not say so.
      return (row ? threadOf(row) : null) as ReturnType<typeof threadOf>;
    };
    return {
      get: async (id) => get(id),
      set: async (id, options) => {
        const now = new Date().toISOString();
        const before = get(id);
        const metadata =
          options.kind === "patch" && before
            ? { ...before.metadata, ...(options.metadata ?? {}) }
            : (options.metadata ?? {});
        db.prepare(
          `INSERT INTO threads (thread_id, metadata, created_at, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (thread_id) DO UPDATE SET metadata = excluded.metadata, updated_at = excluded.updated_at`,
        ).run(id, JSON.stringify(metadata), now, now);
        return get(id);
      },
      delete: async (id) => {
        db.prepare("DELETE FROM threads WHERE thread_id = ?").run(id);
      },
      async *search(options) {
        const order = `${options.sortBy} ${options.sortOrder === "asc" ? "ASC" : "DESC"}`;
        const rows = db.prepare(`SELECT * FROM threads ORDER BY ${order}`).all();
        const wanted = Object.entries(options.metadata ?? {});
        const matching = rows
          .map(threadOf)
          .filter((thread) =>
            wanted.every(
              ([key, value]) => JSON.stringify(thread.metadata[key]) === JSON.stringify(value),
            ),
          );
        for (const thread of matching.slice(options.offset, options.offset + options.limit)) {
          yield { thread, total: matching.length };
        }
      },
    };
  }

  close(): void {
    this.db.close();
  }
}
