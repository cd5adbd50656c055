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

const RowSchema = z.object({
  text: z.string().min(1),
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
});

/**
 * A persistent cache of model replies keyed by everything that decides the reply: model,
 * endpoint, sampling parameters and messages. SQLite in WAL mode, so concurrent runs and
 * processes share one file safely; a rerun of an evaluation costs nothing and replays exactly.
 */
export class ReplayCache {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(`CREATE TABLE IF NOT EXISTS replies (
      key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,
      prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created_at TEXT NOT NULL)`);
  }

  /** A stable key: the SHA-256 of the request as canonical JSON (object keys sorted). */
  static key(request: unknown): string {
    return createHash("sha256").update(canonicalJson(request)).digest("hex");
  }

  get(key: string): RecordedReply | null {
    const row = this.db
      .prepare("SELECT text, prompt_tokens, completion_tokens FROM replies WHERE key = ?")
      .get(key);
    if (row === undefined) return null;
    const parsed = RowSchema.safeParse(row);
    if (!parsed.success) {
      process.emitWarning(
        `replay cache ${this.file}: entry ${key.slice(0, 12)} is unusable; calling the model`,
        "TablemindsWarning",
      );
      return null;
    }
    return {
      text: parsed.data.text,
      promptTokens: parsed.data.prompt_tokens,
      completionTokens: parsed.data.completion_tokens,
    };
  }

  put(key: string, model: string, reply: RecordedReply): void {
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
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

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
