import { mkdirSync } from "node:fs";
import path from "node:path";
import {
  BaseStore,
  type GetOperation,
  type IndexConfig,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { textsAtPath } from "./value-paths.js";

export const STORE_SCHEMA_VERSION = 2;
/** Namespaces are stored joined by ":", which namespace labels may not contain. */
const SEP = ":";
/** Schema 1 joined them by the unit separator. */
const V1_SEP = "\u001f";

interface ItemRow {
  namespace: string;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}
type RowKey = Pick<ItemRow, "namespace" | "key">;
interface VectorRow extends RowKey {
  vector: Buffer;
}

export interface SqliteStoreOptions {
  /** Embeds the `fields` of each value so `search({query})` ranks by cosine similarity. */
  index?: IndexConfig;
  /** Values of an outdated format to drop when the file opens (once per version). */
  retire?: Retirement;
}

/**
 * A versioned clean-up of values: when a file opens and last ran this retirement at an older
 * `version` (or never), every item under `prefix` whose value `keep` rejects is deleted, and
 * the version is recorded in the file so it runs once.
 */
export interface Retirement {
  /** Its name in the file's `meta` table (`retired:<name>`). */
  name: string;
  prefix: string[];
  version: number;
  keep: (value: unknown) => boolean;
}

/** What a sweep over a prefix found: items dropped (or that would be) and items kept. */
export interface Sweep {
  dropped: number;
  kept: number;
}

/** Cosine similarity; a shorter vector counts as padded with zeros. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  for (let i = n; i < a.length; i++) na += (a[i] as number) ** 2;
  for (let i = n; i < b.length; i++) nb += (b[i] as number) ** 2;
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

/** One filter condition, with the semantics of InMemoryStore's filters. */
function matchesCondition(actual: unknown, expected: unknown): boolean {
  const isOperators =
    expected !== null &&
    typeof expected === "object" &&
    Object.keys(expected).every((k) => OPERATORS.has(k));
  if (!isOperators) return actual === expected;
  return Object.entries(expected as Record<string, unknown>).every(([op, value]) => {
    switch (op) {
      case "$eq":
        return actual === value;
      case "$ne":
        return actual !== value;
      case "$gt":
        return Number(actual) > Number(value);
      case "$gte":
        return Number(actual) >= Number(value);
      case "$lt":
        return Number(actual) < Number(value);
      case "$lte":
        return Number(actual) <= Number(value);
      case "$in":
        return Array.isArray(value) && value.includes(actual);
      default:
        return !Array.isArray(value) || !value.includes(actual);
    }
  });
}

function namespaceMatches(condition: MatchCondition, namespace: string[]): boolean {
  const { path: want, matchType } = condition;
  if (want.length > namespace.length) return false;
  const offset = matchType === "suffix" ? namespace.length - want.length : 0;
  return want.every((label, i) => label === "*" || namespace[offset + i] === label);
}

function toItem(row: ItemRow, value?: Record<string, unknown>): Item {
  return {
    namespace: row.namespace.split(SEP),
    key: row.key,
    value: value ?? (JSON.parse(row.value) as Record<string, unknown>),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Vectors are kept as float64 blobs: the same numbers InMemoryStore compares. */
function toBlob(vector: number[]): Buffer {
  return Buffer.from(Float64Array.from(vector).buffer);
}

function fromBlob(blob: Buffer): Float64Array {
  if (blob.byteOffset % 8 === 0)
    return new Float64Array(blob.buffer, blob.byteOffset, blob.length / 8);
  // Unaligned bytes cannot back a Float64Array: copy them.
  const bytes = new Uint8Array(blob.length);
  bytes.set(blob);
  return new Float64Array(bytes.buffer);
}

function prepareStatements(db: Database.Database) {
  const prefix = "(namespace = @ns OR (namespace >= @ns || ':' AND namespace < @ns || ';'))";
  const recent = "ORDER BY updated_at DESC, seq DESC";
  return {
    get: db.prepare("SELECT * FROM items WHERE namespace = ? AND key = ?"),
    all: db.prepare(`SELECT * FROM items ${recent}`),
    under: db.prepare(`SELECT * FROM items WHERE ${prefix} ${recent}`),
    page: db.prepare(`SELECT * FROM items ${recent} LIMIT @limit OFFSET @offset`),
    pageUnder: db.prepare(
      `SELECT * FROM items WHERE ${prefix} ${recent} LIMIT @limit OFFSET @offset`,
    ),
    // A ranking starts from the order of insertion, as InMemoryStore's does (ties keep it).
    allInserted: db.prepare("SELECT * FROM items ORDER BY rowid"),
    underInserted: db.prepare(`SELECT * FROM items WHERE ${prefix} ORDER BY rowid`),
    keysAll: db.prepare("SELECT namespace, key FROM items ORDER BY rowid"),
    keysUnder: db.prepare(`SELECT namespace, key FROM items WHERE ${prefix} ORDER BY rowid`),
    vectorsAll: db.prepare("SELECT namespace, key, vector FROM vectors"),
    vectorsUnder: db.prepare(`SELECT namespace, key, vector FROM vectors WHERE ${prefix}`),
    upsert: db.prepare(
      `INSERT INTO items (namespace, key, value, created_at, updated_at, seq)
       VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM items))
       ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value,
         updated_at = excluded.updated_at, seq = excluded.seq`,
    ),
    remove: db.prepare("DELETE FROM items WHERE namespace = ? AND key = ?"),
    removeVectors: db.prepare("DELETE FROM vectors WHERE namespace = ? AND key = ?"),
    putVector: db.prepare("INSERT INTO vectors VALUES (?, ?, ?, ?)"),
    namespaces: db.prepare("SELECT DISTINCT namespace FROM items"),
  };
}

const identity = (row: RowKey) => `${row.namespace}\n${row.key}`;

/**
 * A LangGraph store in one SQLite file: long-term memory that outlives the process. It
 * answers every operation as InMemoryStore does (tests/integration/memory-store.test.ts runs
 * one contract against both), with two deliberate differences: a search without a query
 * lists the most recently updated items first, and a namespace emptied by deletes is no
 * longer listed. A batch is one transaction whose reads see the store as it was before the
 * batch's writes, as in InMemoryStore. With an `index`, each indexed field of a value is
 * embedded on put and `search({query})` ranks by the best cosine similarity of its fields.
 */
export class SqliteStore extends BaseStore {
  readonly db: Database.Database;
  readonly file: string;
  /** How many items the `retire` option dropped when this handle opened the file. */
  readonly retired: number = 0;
  private readonly index?: IndexConfig;
  private readonly sql: ReturnType<typeof prepareStatements>;

  constructor(file: string, options: SqliteStoreOptions = {}) {
    super();
    this.file = file;
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.index = options.index;
    this.migrate();
    this.sql = prepareStatements(this.db);
    if (options.retire) this.retired = this.retire(options.retire);
  }

  private retire(retirement: Retirement): number {
    const key = `retired:${retirement.name}`;
    const version = this.db.prepare("SELECT value FROM meta WHERE key = ?");
    const ran = () => Number((version.get(key) as { value: string } | undefined)?.value ?? 0);
    if (ran() >= retirement.version) return 0;
    // Immediate: a second process opening the file at once waits, then finds it done.
    return this.db
      .transaction(() => {
        if (ran() >= retirement.version) return 0;
        const { dropped } = this.sweep(retirement.prefix, retirement.keep);
        this.db
          .prepare("INSERT OR REPLACE INTO meta VALUES (?, ?)")
          .run(key, String(retirement.version));
        return dropped;
      })
      .immediate();
  }

  /**
   * Deletes every item under `prefix` (that namespace and the ones below it) whose value `keep`
   * rejects, in one transaction; with `dryRun`, only counts them. Not part of BaseStore.
   */
  sweep(prefix: string[], keep: (value: unknown) => boolean, dryRun = false): Sweep {
    if (!this.db.open) throw new Error(`the memory store ${this.file} is closed`);
    validateNamespace(prefix, { allowReservedRoot: true });
    return this.db.transaction(() => {
      const rows = this.sql.under.all({ ns: prefix.join(SEP) }) as ItemRow[];
      const doomed = rows.filter((row) => {
        try {
          return !keep(JSON.parse(row.value));
        } catch {
          return true;
        }
      });
      if (!dryRun)
        for (const row of doomed) {
          this.sql.removeVectors.run(row.namespace, row.key);
          this.sql.remove.run(row.namespace, row.key);
        }
      return { dropped: doomed.length, kept: rows.length - doomed.length };
    })();
  }

  private migrate(): void {
    this.db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as
      | { value: string }
      | undefined;
    const version = row ? Number(row.value) : 0;
    if (version > STORE_SCHEMA_VERSION) {
      throw new Error(
        `${this.file} was written by a newer tableminds (store schema ${row?.value}; this one knows ${STORE_SCHEMA_VERSION})`,
      );
    }
    if (version === STORE_SCHEMA_VERSION) return;
    this.db.transaction(() => {
      if (version === 1) this.db.exec("ALTER TABLE items RENAME TO items_v1");
      this.db.exec(`
        CREATE TABLE items (
          namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
          created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
          -- the order of writes, which breaks ties between equal timestamps
          seq INTEGER NOT NULL,
          PRIMARY KEY (namespace, key));
        CREATE INDEX items_seq ON items (seq);
        CREATE TABLE vectors (
          namespace TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL, vector BLOB NOT NULL,
          PRIMARY KEY (namespace, key, field));`);
      if (version === 1) this.migrateFromV1();
      this.db
        .prepare("INSERT OR REPLACE INTO meta VALUES ('schema', ?)")
        .run(String(STORE_SCHEMA_VERSION));
    })();
  }

  /** Schema 1: another namespace separator and one JSON vector per item. */
  private migrateFromV1(): void {
    const old = this.db
      .prepare("SELECT rowid, * FROM items_v1 ORDER BY updated_at, rowid")
      .all() as (ItemRow & { rowid: number; vector: string | null })[];
    const insert = this.db.prepare("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)");
    const insertVector = this.db.prepare("INSERT INTO vectors VALUES (?, ?, '$', ?)");
    old.forEach((row, i) => {
      const namespace = row.namespace.split(V1_SEP).join(SEP);
      insert.run(namespace, row.key, row.value, row.created_at, row.updated_at, i + 1);
      if (row.vector) insertVector.run(namespace, row.key, toBlob(JSON.parse(row.vector)));
    });
    this.db.exec("DROP TABLE items_v1");
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    if (!this.db.open) throw new Error(`the memory store ${this.file} is closed`);
    for (const op of operations) {
      if ("namespace" in op) validateNamespace(op.namespace, { allowReservedRoot: true });
      if ("namespacePrefix" in op && op.namespacePrefix.length > 0)
        validateNamespace(op.namespacePrefix, { allowReservedRoot: true });
    }
    // The last put of a key wins, as in InMemoryStore.
    const puts = new Map<string, PutOperation>();
    for (const op of operations) {
      if (isPut(op)) puts.set(identity({ namespace: op.namespace.join(SEP), key: op.key }), op);
    }
    const vectors = await this.embedPuts([...puts.values()]);
    const queries = await this.embedQueries(operations);
    const run = this.db.transaction(() => {
      const results = operations.map((op) => {
        if (isPut(op)) return undefined;
        if ("namespacePrefix" in op) return this.searchOne(op, queries.get(op.query ?? ""));
        if ("matchConditions" in op) return this.listOne(op);
        return this.getOne(op as GetOperation);
      });
      const now = Date.now();
      for (const op of puts.values()) this.putOne(op, vectors.get(op) ?? [], now);
      return results;
    });
    return run() as OperationResults<Op>;
  }

  private async embedPuts(puts: PutOperation[]): Promise<Map<PutOperation, [string, number[]][]>> {
    const out = new Map<PutOperation, [string, number[]][]>();
    const index = this.index;
    if (!index) return out;
    const wanted: [PutOperation, string, string][] = [];
    for (const op of puts) {
      if (op.value === null || op.index === false) continue;
      for (const field of op.index ?? index.fields ?? ["$"]) {
        const texts = textsAtPath(op.value, field);
        texts.forEach((text, i) => {
          wanted.push([op, texts.length > 1 ? `${field}.${i}` : field, text]);
        });
      }
    }
    const distinct = [...new Set(wanted.map(([, , text]) => text))];
    if (distinct.length === 0) return out;
    const embedded = await index.embeddings.embedDocuments(distinct);
    const byText = new Map(distinct.map((text, i) => [text, embedded[i]]));
    for (const [op, field, text] of wanted) {
      const vector = byText.get(text);
      if (!vector) throw new Error(`the embeddings returned no vector for the field ${field}`);
      out.set(op, [...(out.get(op) ?? []), [field, vector]]);
    }
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
    const row = this.sql.get.get(op.namespace.join(SEP), op.key) as ItemRow | undefined;
    return row ? toItem(row) : null;
  }

  private putOne(op: PutOperation, vectors: [string, number[]][], now: number): void {
    const namespace = op.namespace.join(SEP);
    this.sql.removeVectors.run(namespace, op.key);
    if (op.value === null) {
      this.sql.remove.run(namespace, op.key);
      return;
    }
    this.sql.upsert.run(namespace, op.key, JSON.stringify(op.value), now, now);
    for (const [field, vector] of vectors)
      this.sql.putVector.run(namespace, op.key, field, toBlob(vector));
  }

  private searchOne(op: SearchOperation, query: number[] | undefined): SearchItem[] {
    const ns = op.namespacePrefix.join(SEP);
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const filter = Object.entries(op.filter ?? {});
    const unscored = (row: ItemRow, value?: Record<string, unknown>): SearchItem => ({
      ...toItem(row, value),
      score: undefined,
    });
    if (!query && filter.length === 0) {
      const page = ns ? this.sql.pageUnder : this.sql.page;
      return (page.all({ ns, limit, offset }) as ItemRow[]).map((row) => unscored(row));
    }
    // Only a filter needs every candidate's value; a ranking needs only their vectors.
    let kept: { row: RowKey; value?: Record<string, unknown>; full?: ItemRow }[];
    if (filter.length > 0) {
      const rows = (
        query
          ? ns
            ? this.sql.underInserted.all({ ns })
            : this.sql.allInserted.all()
          : ns
            ? this.sql.under.all({ ns })
            : this.sql.all.all()
      ) as ItemRow[];
      kept = rows.flatMap((row) => {
        const value = JSON.parse(row.value) as Record<string, unknown>;
        const ok = filter.every(([k, expected]) => matchesCondition(value[k], expected));
        return ok ? [{ row, value, full: row }] : [];
      });
    } else {
      const keys = (ns ? this.sql.keysUnder.all({ ns }) : this.sql.keysAll.all()) as RowKey[];
      kept = keys.map((row) => ({ row }));
    }
    const materialize = (entry: (typeof kept)[number]) => {
      const full = entry.full ?? (this.sql.get.get(entry.row.namespace, entry.row.key) as ItemRow);
      return toItem(full, entry.value);
    };
    if (!query) {
      return kept
        .slice(offset, offset + limit)
        .map((e) => ({ ...materialize(e), score: undefined }));
    }
    const best = new Map<string, number>();
    const vectorRows = (
      ns ? this.sql.vectorsUnder.all({ ns }) : this.sql.vectorsAll.all()
    ) as VectorRow[];
    for (const v of vectorRows) {
      const id = identity(v);
      const score = cosine(query, fromBlob(v.vector));
      if (score > (best.get(id) ?? Number.NEGATIVE_INFINITY)) best.set(id, score);
    }
    // Items with vectors by score, then those without any (in recency order).
    const scored = kept
      .filter((e) => best.has(identity(e.row)))
      .sort((a, b) => (best.get(identity(b.row)) ?? 0) - (best.get(identity(a.row)) ?? 0));
    const scoreless = kept.filter((e) => !best.has(identity(e.row)));
    return [...scored, ...scoreless]
      .slice(offset, offset + limit)
      .map((e) => ({ ...materialize(e), score: best.get(identity(e.row)) }));
  }

  private listOne(op: ListNamespacesOperation): string[][] {
    const all = (this.sql.namespaces.all() as { namespace: string }[]).map((r) =>
      r.namespace.split(SEP),
    );
    let namespaces = all.filter((ns) =>
      (op.matchConditions ?? []).every((c) => namespaceMatches(c, ns)),
    );
    if (op.maxDepth !== undefined) {
      const depth = op.maxDepth;
      const unique = new Set(namespaces.map((ns) => ns.slice(0, depth).join(SEP)));
      namespaces = [...unique].map((ns) => ns.split(SEP));
    }
    namespaces.sort((a, b) => a.join(SEP).localeCompare(b.join(SEP)));
    const offset = op.offset ?? 0;
    return namespaces.slice(offset, offset + (op.limit ?? namespaces.length));
  }

  /**
   * Some top-level fields of every item in exactly `namespace`, in key order: SQLite reads
   * them out of each value, so a scan over many items parses none of them in full in
   * JavaScript (what `recall` needs to rank thousands of episodes). Not part of BaseStore.
   */
  fieldsOf(
    namespace: string[],
    fields: string[],
  ): { key: string; fields: Record<string, unknown> }[] {
    if (!this.db.open) throw new Error(`the memory store ${this.file} is closed`);
    validateNamespace(namespace, { allowReservedRoot: true });
    const statement = this.fieldStatement(fields);
    const rows = statement.all(namespace.join(SEP)) as unknown[][];
    return rows.map((row) => {
      const out: Record<string, unknown> = {};
      fields.forEach((field, i) => {
        const raw = row[1 + 2 * i];
        const type = row[2 + 2 * i];
        // ->> gives arrays and objects as JSON text, true and false as 1 and 0, null as NULL.
        if (type === "array" || type === "object") out[field] = JSON.parse(String(raw));
        else if (type === "true" || type === "false") out[field] = type === "true";
        else if (type === "null") out[field] = null;
        else out[field] = raw ?? undefined;
      });
      return { key: String(row[0]), fields: out };
    });
  }

  private readonly fieldStatements = new Map<string, Database.Statement>();

  private fieldStatement(fields: string[]): Database.Statement {
    const id = fields.join(",");
    const cached = this.fieldStatements.get(id);
    if (cached) return cached;
    for (const field of fields)
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new Error(`not a field name: ${field}`);
    const columns = fields.map((f) => `value ->> '$.${f}', json_type(value, '$.${f}')`);
    const statement = this.db
      .prepare(`SELECT key, ${columns.join(", ")} FROM items WHERE namespace = ? ORDER BY key`)
      .raw(true);
    this.fieldStatements.set(id, statement);
    return statement;
  }

  /** Closes the database; the store cannot be used afterwards. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}

function isPut(op: Operation): op is PutOperation {
  return "value" in op;
}
