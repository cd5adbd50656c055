import { mkdirSync } from "node:fs";
import path from "node:path";
import {
  BaseStore,
  type GetOperation,
  getTextAtPath,
  type IndexConfig,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";

const SCHEMA_VERSION = 1;
/** Namespaces are stored joined by this character, which namespace labels may not contain. */
const SEP = "\u001f";

interface Row {
  namespace: string;
  key: string;
  value: string;
  vector: string | null;
  created_at: number;
  updated_at: number;
}

export interface SqliteStoreOptions {
  /** Embeds the `fields` of each value so `search({query})` ranks by cosine similarity. */
  index?: IndexConfig;
}

function toItem(row: Row): Item {
  return {
    namespace: row.namespace.split(SEP),
    key: row.key,
    value: JSON.parse(row.value) as Record<string, unknown>,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function matches(item: unknown, expected: unknown): boolean {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    const ops = Object.entries(expected).filter(([op]) => op.startsWith("$"));
    if (ops.length > 0) {
      return ops.every(([op, value]) => {
        switch (op) {
          case "$eq":
            return item === value;
          case "$ne":
            return item !== value;
          case "$gt":
            return Number(item) > Number(value);
          case "$gte":
            return Number(item) >= Number(value);
          case "$lt":
            return Number(item) < Number(value);
          case "$lte":
            return Number(item) <= Number(value);
          case "$in":
            return Array.isArray(value) && value.includes(item);
          case "$nin":
            return !Array.isArray(value) || !value.includes(item);
          default:
            return false;
        }
      });
    }
  }
  return item === expected;
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

function namespaceMatches(condition: MatchCondition, namespace: string[]): boolean {
  const { path: want, matchType } = condition;
  if (want.length > namespace.length) return false;
  const offset = matchType === "suffix" ? namespace.length - want.length : 0;
  return want.every((label, i) => label === "*" || namespace[offset + i] === label);
}

/**
 * A LangGraph store in one SQLite file: long-term memory that outlives the process. Each
 * batch runs in one transaction; with an index, values are embedded on put and searches
 * with a query are ranked by cosine similarity.
 */
export class SqliteStore extends BaseStore {
  readonly db: Database.Database;
  private readonly index?: IndexConfig;

  constructor(file: string, options: SqliteStoreOptions = {}) {
    super();
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.index = options.index;
    this.migrate();
  }

  private migrate(): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS items (
        namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, vector TEXT,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (namespace, key));
      CREATE INDEX IF NOT EXISTS items_updated ON items (namespace, updated_at);`);
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as
      | { value: string }
      | undefined;
    if (!row) {
      this.db.prepare("INSERT INTO meta VALUES ('schema', ?)").run(String(SCHEMA_VERSION));
    } else if (Number(row.value) > SCHEMA_VERSION) {
      throw new Error(
        `${this.db.name} was written by a newer tableminds (store schema ${row.value}; this one knows ${SCHEMA_VERSION})`,
      );
    }
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const vectors = await this.embedPuts(operations);
    const queries = await this.embedQueries(operations);
    const run = this.db.transaction(() =>
      operations.map((op) => {
        if ("namespacePrefix" in op) return this.searchOne(op, queries.get(op.query ?? ""));
        if ("value" in op) return this.putOne(op, vectors.get(op));
        if ("matchConditions" in op || "maxDepth" in op) return this.listOne(op);
        return this.getOne(op as GetOperation);
      }),
    );
    return run() as OperationResults<Op>;
  }

  private async embedPuts(operations: Operation[]): Promise<Map<Operation, number[]>> {
    const out = new Map<Operation, number[]>();
    if (!this.index) return out;
    const puts = operations.filter(
      (op): op is PutOperation => "value" in op && op.value !== null && op.index !== false,
    );
    const texts = puts.map((op) => {
      const fields = Array.isArray(op.index) ? op.index : (this.index?.fields ?? ["$"]);
      return fields.flatMap((field) => getTextAtPath(op.value, field)).join("\n");
    });
    if (texts.length === 0) return out;
    const embedded = await this.index.embeddings.embedDocuments(texts);
    puts.forEach((op, i) => {
      const vector = embedded[i];
      if (vector) out.set(op, vector);
    });
    return out;
  }

  private async embedQueries(operations: Operation[]): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    if (!this.index) return out;
    for (const op of operations) {
      if ("namespacePrefix" in op && op.query && !out.has(op.query)) {
        out.set(op.query, await this.index.embeddings.embedQuery(op.query));
      }
    }
    return out;
  }

  private getOne(op: GetOperation): Item | null {
    const row = this.db
      .prepare("SELECT * FROM items WHERE namespace = ? AND key = ?")
      .get(op.namespace.join(SEP), op.key) as Row | undefined;
    return row ? toItem(row) : null;
  }

  private putOne(op: PutOperation, vector: number[] | undefined): void {
    const namespace = op.namespace.join(SEP);
    if (op.value === null) {
      this.db.prepare("DELETE FROM items WHERE namespace = ? AND key = ?").run(namespace, op.key);
      return;
    }
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO items (namespace, key, value, vector, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, vector = excluded.vector,
         updated_at = excluded.updated_at`,
      )
      .run(
        namespace,
        op.key,
        JSON.stringify(op.value),
        vector ? JSON.stringify(vector) : null,
        now,
        now,
      );
  }

  private searchOne(op: SearchOperation, query: number[] | undefined): SearchItem[] {
    const prefix = op.namespacePrefix.join(SEP);
    const rows = (
      prefix
        ? this.db
            .prepare(
              "SELECT * FROM items WHERE namespace = ? OR substr(namespace, 1, ?) = ? ORDER BY updated_at DESC",
            )
            .all(prefix, prefix.length + 1, prefix + SEP)
        : this.db.prepare("SELECT * FROM items ORDER BY updated_at DESC").all()
    ) as Row[];
    const filter = Object.entries(op.filter ?? {});
    const kept = rows.filter((row) => {
      if (filter.length === 0) return true;
      const value = JSON.parse(row.value) as Record<string, unknown>;
      return filter.every(([key, expected]) => matches(value[key], expected));
    });
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    if (!query) {
      return kept
        .slice(offset, offset + limit)
        .map((row) => ({ ...toItem(row), score: undefined }));
    }
    const scored = kept
      .map((row) => ({
        row,
        score: row.vector ? cosine(query, JSON.parse(row.vector) as number[]) : undefined,
      }))
      .sort(
        (a, b) => (b.score ?? Number.NEGATIVE_INFINITY) - (a.score ?? Number.NEGATIVE_INFINITY),
      );
    return scored
      .slice(offset, offset + limit)
      .map(({ row, score }) => ({ ...toItem(row), score }));
  }

  private listOne(op: ListNamespacesOperation): string[][] {
    const all = (
      this.db.prepare("SELECT DISTINCT namespace FROM items").all() as { namespace: string }[]
    ).map((r) => r.namespace.split(SEP));
    let namespaces = all.filter((ns) =>
      (op.matchConditions ?? []).every((c) => namespaceMatches(c, ns)),
    );
    if (op.maxDepth !== undefined) {
      const depth = op.maxDepth;
      const unique = new Set(namespaces.map((ns) => ns.slice(0, depth).join(SEP)));
      namespaces = [...unique].map((ns) => ns.split(SEP));
    }
    namespaces.sort((a, b) => a.join(":").localeCompare(b.join(":")));
    return namespaces.slice(op.offset ?? 0, (op.offset ?? 0) + (op.limit ?? namespaces.length));
  }

  /** Closes the database; the store cannot be used afterwards. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}
