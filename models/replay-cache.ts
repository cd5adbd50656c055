import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";

/** What a replayed call returns: the recorded reply and its token counts. */
export interface RecordedReply {
  text: string;
  promptTokens: number;
  completionTokens: number;
}

/** Counts for this process, so a run can report how much of it was replayed. */
export interface ReplayCacheStats {
  /** Calls answered from a cache, with no request. */
  hits: number;
  /** Calls that found nothing (or nothing usable) and went to the model. */
  misses: number;
  /** Replies written to a cache. */
  recorded: number;
  /** Entries that could not be read or written (each also raised a warning). */
  problems: number;
}

const stats: ReplayCacheStats = { hits: 0, misses: 0, recorded: 0, problems: 0 };

export function replayCacheStats(): ReplayCacheStats {
  return { ...stats };
}

const RowSchema = z.object({
  text: z.string().min(1),
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
});

/** The cache file cannot be opened as a cache at all (not SQLite, unreadable directory...). */
export class ReplayCacheError extends Error {
  override name = "ReplayCacheError";
}

function warn(message: string): void {
  stats.problems++;
  process.emitWarning(message, "TablemindsWarning");
}

/**
 * A persistent cache of model replies keyed by everything that decides the reply: endpoint,
 * model, request parameters and messages.
 *
 * SQLite in WAL mode: each reply is one committed row, so concurrent runs in one process (one
 * connection) and in several processes (file locks, a 5 s busy timeout) share a file safely,
 * a lookup is an index probe, and a crash loses at most the reply being written. A damaged
 * entry is skipped with a warning and the model is asked again.
 */
export class ReplayCache {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    try {
      mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      this.db = new Database(file, { timeout: 5000 });
      this.db.pragma("journal_mode = WAL");
      this.db.exec(`CREATE TABLE IF NOT EXISTS replies (
        key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created_at TEXT NOT NULL)`);
    } catch (error) {
      throw new ReplayCacheError(
        `replay cache ${file} cannot be used (${(error as Error).message}); ` +
          "move that file away or name another one",
      );
    }
  }

  /** A stable key: the SHA-256 of the request as canonical JSON (object keys sorted). */
  static key(request: unknown): string {
    return createHash("sha256").update(canonicalJson(request)).digest("hex");
  }

  /** The recorded reply, or null (nothing recorded, or an entry that cannot be used). */
  get(key: string): RecordedReply | null {
    let row: unknown;
    try {
      row = this.db
        .prepare("SELECT text, prompt_tokens, completion_tokens FROM replies WHERE key = ?")
        .get(key);
    } catch (error) {
      warn(
        `replay cache ${this.file}: lookup failed (${(error as Error).message}); calling the model`,
      );
      stats.misses++;
      return null;
    }
    if (row === undefined) {
      stats.misses++;
      return null;
    }
    const parsed = RowSchema.safeParse(row);
    if (!parsed.success) {
      warn(`replay cache ${this.file}: entry ${key.slice(0, 12)} is unusable; calling the model`);
      stats.misses++;
      return null;
    }
    stats.hits++;
    return {
      text: parsed.data.text,
      promptTokens: parsed.data.prompt_tokens,
      completionTokens: parsed.data.completion_tokens,
    };
  }

  /** Records a reply; a failure to write is a warning, never a lost answer. */
  put(key: string, model: string, reply: RecordedReply): void {
    try {
      this.db
        .prepare("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)")
        .run(
          key,
          model,
          reply.text,
          reply.promptTokens,
          reply.completionTokens,
          new Date().toISOString(),
        );
      stats.recorded++;
    } catch (error) {
      warn(`replay cache ${this.file}: could not record a reply (${(error as Error).message})`);
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** JSON with object keys sorted and undefined members dropped, so equal requests hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const open = new Map<string, ReplayCache>();

/** The cache at `file`, opened once per process. */
export function replayCacheAt(file: string): ReplayCache {
  const resolved = path.resolve(file);
  let cache = open.get(resolved);
  if (!cache) {
    cache = new ReplayCache(resolved);
    open.set(resolved, cache);
  }
  return cache;
}

export function closeReplayCaches(): void {
  for (const cache of open.values()) cache.close();
  open.clear();
}
