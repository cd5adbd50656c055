import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Embeddings } from "@langchain/core/embeddings";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import type { PutOperation, SearchItem, SearchOperation } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { OfflineEmbeddings } from "../../storage/memory/embeddings.js";
import { SqliteStore, STORE_SCHEMA_VERSION } from "../../storage/memory/sqlite-store.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-store-"));
const opened: SqliteStore[] = [];
let files = 0;

/** Counts every character, whitespace included: two stores must embed the very same texts. */
class CharacterEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  async embedDocuments(texts: string[]) {
    return texts.map((text) => {
      const vector = new Array<number>(64).fill(0);
      for (const char of text) {
        const at = (char.codePointAt(0) ?? 0) % 64;
        vector[at] = (vector[at] ?? 0) + 1;
      }
      return vector;
    });
  }
  async embedQuery(text: string) {
    return (await this.embedDocuments([text]))[0] ?? [];
  }
}

function sqlite(fields?: string[], file = path.join(dir, `store-${files++}.sqlite`)) {
  const index = fields ? { dims: 256, embeddings: new OfflineEmbeddings(), fields } : undefined;
  const store = new SqliteStore(file, { index });
  opened.push(store);
  return store;
}

function memory(fields?: string[]) {
  const index = fields ? { dims: 256, embeddings: new OfflineEmbeddings(), fields } : undefined;
  return new InMemoryStore(index ? { index } : undefined);
}

afterAll(() => {
  for (const store of opened) store.close();
});

/**
 * What two stores must agree on: everything but the timestamps, scores to 1e-12, and the
 * order of results except among equal scores (ties keep no promised order).
 */
function comparable(items: SearchItem[]) {
  const rounded = (score?: number) =>
    score === undefined ? undefined : Math.round(score * 1e12) / 1e12;
  return items
    .map((item) => ({
      namespace: item.namespace,
      key: item.key,
      value: item.value,
      score: rounded(item.score),
    }))
    .sort(
      (a, b) =>
        (b.score ?? Number.NEGATIVE_INFINITY) - (a.score ?? Number.NEGATIVE_INFINITY) ||
        `${a.namespace.join(":")}:${a.key}`.localeCompare(`${b.namespace.join(":")}:${b.key}`),
    );
}

const kinds: [string, (fields?: string[]) => BaseStore][] = [
  ["InMemoryStore", memory],
  ["SqliteStore", sqlite],
];

describe.each(kinds)("%s (the shared contract)", (_name, make) => {
  it("puts, gets, overwrites and deletes", async () => {
    const store = make();
    await store.put(["a", "b"], "k1", { n: 1, nested: { list: [1, "two"] } });
    const first = await store.get(["a", "b"], "k1");
    expect(first?.value).toEqual({ n: 1, nested: { list: [1, "two"] } });
    expect(first?.namespace).toEqual(["a", "b"]);
    expect(first?.key).toBe("k1");
    await store.put(["a", "b"], "k1", { n: 2 });
    const second = await store.get(["a", "b"], "k1");
    expect(second?.value).toEqual({ n: 2 });
    expect(second?.createdAt.getTime()).toBe(first?.createdAt.getTime());
    expect(second?.updatedAt.getTime()).toBeGreaterThanOrEqual(first?.updatedAt.getTime() ?? 0);
    await store.delete(["a", "b"], "k1");
    expect(await store.get(["a", "b"], "k1")).toBeNull();
    expect(await store.get(["a", "x"], "missing")).toBeNull();
    await store.delete(["a", "b"], "never-there");
  });

  it("searches a namespace prefix with filters, limit and offset, never another namespace", async () => {
    const store = make();
    for (let i = 0; i < 5; i++)
      await store.put(["m", "alice"], `k${i}`, { i, even: i % 2 === 0, tag: `t${i % 3}` });
    await store.put(["m", "bob"], "k0", { i: 100, even: true, tag: "t0" });
    await store.put(["m", "bob", "deep"], "k0", { i: 101, even: false, tag: "t1" });
    await store.put(["mm"], "k0", { i: 200, even: true, tag: "t0" });
    const values = async (prefix: string[], options: Parameters<BaseStore["search"]>[1]) =>
      (await store.search(prefix, options)).map((x) => x.value.i as number).sort((a, b) => a - b);
    expect(await values(["m", "alice"], { limit: 10 })).toEqual([0, 1, 2, 3, 4]);
    expect(await values(["m"], { filter: { even: true }, limit: 10 })).toEqual([0, 2, 4, 100]);
    expect(await values(["m"], { filter: { i: { $gte: 3 } }, limit: 10 })).toEqual([
      3, 4, 100, 101,
    ]);
    expect(await values(["m"], { filter: { i: { $gt: 1, $lt: 4 } }, limit: 10 })).toEqual([2, 3]);
    expect(await values(["m"], { filter: { tag: { $in: ["t1", "t2"] } }, limit: 10 })).toEqual([
      1, 2, 4, 101,
    ]);
    expect(await values(["m"], { filter: { tag: { $nin: ["t0"] }, even: false } })).toEqual([
      1, 101,
    ]);
    expect(await values(["m", "bob"], { filter: { tag: { $ne: "t0" } } })).toEqual([101]);
    // An object that is not all operators is compared as a value: nothing is === to it.
    expect(await values(["m"], { filter: { i: { $eq: 1, other: 2 } } })).toEqual([]);
    expect(await values([], { filter: { tag: "t0" }, limit: 10 })).toEqual([0, 3, 100, 200]);
    expect(await store.search(["m", "alice"], { limit: 2 })).toHaveLength(2);
    expect(await store.search(["m", "alice"], { limit: 10, offset: 4 })).toHaveLength(1);
    expect(await store.search(["m", "al"], { limit: 10 })).toEqual([]);
    expect(await store.search(["m", "alice"])).toHaveLength(5);
  });

  it("lists namespaces by prefix, suffix, wildcard and depth, with limit and offset", async () => {
    const store = make();
    await store.put(["t", "memories", "a"], "k", { x: 1 });
    await store.put(["t", "memories", "b"], "k", { x: 1 });
    await store.put(["t", "other"], "k", { x: 1 });
    await store.put(["u", "memories", "a"], "k", { x: 1 });
    expect(await store.listNamespaces({ prefix: ["t", "memories"] })).toEqual([
      ["t", "memories", "a"],
      ["t", "memories", "b"],
    ]);
    expect(await store.listNamespaces({ suffix: ["other"] })).toEqual([["t", "other"]]);
    expect(await store.listNamespaces({ prefix: ["*", "memories"], suffix: ["a"] })).toEqual([
      ["t", "memories", "a"],
      ["u", "memories", "a"],
    ]);
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ["t", "memories"],
      ["t", "other"],
      ["u", "memories"],
    ]);
    expect(await store.listNamespaces({ limit: 2, offset: 1 })).toEqual([
      ["t", "memories", "b"],
      ["t", "other"],
    ]);
  });

  it("rejects the namespaces InMemoryStore rejects", async () => {
    const store = make();
    await expect(store.put([], "k", { x: 1 })).rejects.toThrow(/cannot be empty/);
    await expect(store.put(["a", ""], "k", { x: 1 })).rejects.toThrow(/empty strings/);
    await expect(store.put(["a.b"], "k", { x: 1 })).rejects.toThrow(/periods/);
    await expect(store.put(["a:b"], "k", { x: 1 })).rejects.toThrow(/colons/);
    await expect(store.batch([{ namespace: ["a:b"], key: "k" }])).rejects.toThrow(/colons/);
  });

  it("applies a batch's writes after its searches", async () => {
    const store = make();
    await store.put(["b"], "k", { v: "old" });
    const put: PutOperation = { namespace: ["b"], key: "k", value: { v: "new" } };
    const search: SearchOperation = { namespacePrefix: ["b"], limit: 10, offset: 0 };
    const [, found] = await store.batch<[PutOperation, SearchOperation]>([put, search]);
    expect(found.map((x) => x.value)).toEqual([{ v: "old" }]);
    expect((await store.get(["b"], "k"))?.value).toEqual({ v: "new" });
  });

  it("ranks by similarity when it has an index, and lists unscored without one", async () => {
    const indexed = make(["text"]);
    await indexed.put(["q"], "gold", { text: "How many gold medals did Japan win?" });
    await indexed.put(["q"], "rivers", { text: "What is the total length of the rivers?" });
    await indexed.put(["q"], "unindexed", { text: "How many gold medals?" }, false);
    const found = await indexed.search(["q"], {
      query: "How many gold medals did China win?",
      limit: 3,
    });
    expect(found.map((x) => x.key)).toEqual(["gold", "rivers", "unindexed"]);
    expect(found[0]?.score ?? 0).toBeGreaterThan(0.9);
    expect(found[0]?.score ?? 0).toBeGreaterThan(found[1]?.score ?? 1);
    expect(found[2]?.score).toBeUndefined();
    const plain = make();
    await plain.put(["q"], "gold", { text: "How many gold medals did Japan win?" });
    const unscored = await plain.search(["q"], { query: "gold medals" });
    expect(unscored.map((x) => [x.key, x.score])).toEqual([["gold", undefined]]);
  });
});

/** The same puts and searches on both stores: the results must be the same. */
async function scenario(store: BaseStore) {
  const docs = [
    { title: "Medal table", tags: ["sport", "olympics"], meta: { author: "ioc" }, n: 1 },
    { title: "River lengths", tags: ["geography"], meta: { author: "atlas" }, n: 2 },
    { title: "Club revenue", tags: ["football", "money"], meta: { author: "deloitte" }, n: 3 },
    { title: "Olympic hosts", tags: ["sport", "cities"], meta: { author: "ioc" }, n: 4 },
  ];
  for (const [i, doc] of docs.entries()) await store.put(["docs", i < 2 ? "a" : "b"], `d${i}`, doc);
  await store.put(["docs", "a"], "only-title", { title: "Medal counts" }, ["title"]);
  await store.put(["docs", "a"], "none", { title: "Medal table" }, false);
  const searches = [
    { query: "olympic sport medals", limit: 10 },
    { query: "money of football clubs", limit: 2, offset: 1 },
    { query: "medal", filter: { n: { $lte: 3 } }, limit: 10 },
    { query: "rivers", filter: { n: 2 } },
  ];
  const out = [];
  for (const options of searches) out.push(comparable(await store.search(["docs"], options)));
  out.push(comparable(await store.search(["docs", "b"], { query: "sport" })));
  out.push(comparable(await store.search(["docs"], { limit: 10 })));
  return out;
}

describe("SqliteStore and InMemoryStore give the same answers", () => {
  for (const fields of [
    ["$"],
    ["title"],
    ["tags[*]"],
    ["{title,meta.author}"],
    ["title", "tags[-1]"],
  ]) {
    it(`on the same puts and searches, indexing ${fields.join(" and ")}`, async () => {
      const index = { dims: 64, embeddings: new CharacterEmbeddings(), fields };
      const store = new SqliteStore(path.join(dir, `scenario-${files++}.sqlite`), { index });
      opened.push(store);
      const fromSqlite = await scenario(store);
      const fromMemory = await scenario(new InMemoryStore({ index }));
      expect(fromSqlite).toEqual(fromMemory);
      // Not vacuous: the queries were ranked, with scores that differ.
      const first = fromSqlite[0] ?? [];
      expect(first.length).toBe(6);
      expect(new Set(first.map((x) => x.score)).size).toBeGreaterThan(2);
    });
  }
});

describe("SqliteStore on disk", () => {
  it("keeps values, timestamps and vectors after the file is closed and opened again", async () => {
    const file = path.join(dir, "reopen.sqlite");
    const first = sqlite(["text"], file);
    await first.put(["tableminds", "memories", "default"], "e1", { text: "sum the gold column" });
    await first.put(["tableminds", "memories", "default"], "e2", { text: "river lengths" });
    const before = await first.get(["tableminds", "memories", "default"], "e1");
    const ranked = await first.search(["tableminds"], { query: "gold column" });
    first.close();
    const second = sqlite(["text"], file);
    const after = await second.get(["tableminds", "memories", "default"], "e1");
    expect(after?.value).toEqual({ text: "sum the gold column" });
    expect(after?.createdAt.getTime()).toBe(before?.createdAt.getTime());
    expect(await second.search(["tableminds"], { query: "gold column" })).toEqual(ranked);
  });

  it("keeps namespaces apart in one file", async () => {
    const store = sqlite();
    await store.put(["tableminds", "memories", "alice"], "k", { who: "alice" });
    await store.put(["tableminds", "memories", "alice_2"], "k", { who: "alice_2" });
    await store.put(["tableminds", "memories", "bob"], "k", { who: "bob" });
    const alice = await store.search(["tableminds", "memories", "alice"]);
    expect(alice.map((x) => x.value.who)).toEqual(["alice"]);
    expect((await store.get(["tableminds", "memories", "bob"], "k"))?.value.who).toBe("bob");
    await store.delete(["tableminds", "memories", "alice"], "k");
    expect((await store.get(["tableminds", "memories", "alice_2"], "k"))?.value.who).toBe(
      "alice_2",
    );
  });

  it("lists the most recently updated first when there is no query", async () => {
    const store = sqlite();
    for (const key of ["a", "b", "c"]) await store.put(["r"], key, { key });
    await store.put(["r"], "a", { key: "a", again: true });
    expect((await store.search(["r"])).map((x) => x.key)).toEqual(["a", "c", "b"]);
    expect((await store.search(["r"], { limit: 1, offset: 1 })).map((x) => x.key)).toEqual(["c"]);
  });

  it("answers a get in a batch from the store as it was before the batch", async () => {
    // InMemoryStore returns its live object there, which the batch's put then changes.
    const store = sqlite();
    await store.put(["b"], "k", { v: "old" });
    const [get] = await store.batch([
      { namespace: ["b"], key: "k" },
      { namespace: ["b"], key: "k", value: { v: "new" } },
    ]);
    expect(get?.value).toEqual({ v: "old" });
    expect((await store.get(["b"], "k"))?.value).toEqual({ v: "new" });
  });

  it("reads chosen fields of every item of exactly one namespace, in key order", async () => {
    const store = sqlite();
    await store.put(["f", "x"], "b", { s: "other", obj: { k: [1] }, nothing: null });
    await store.put(["f", "x"], "a", { s: "text", n: 2.5, list: [1, "b"], yes: true, no: false });
    await store.put(["f", "x", "deeper"], "c", { s: "not this one" });
    expect(store.fieldsOf(["f", "x"], ["s", "n", "list", "yes", "no", "obj", "nothing"])).toEqual([
      {
        key: "a",
        fields: {
          s: "text",
          n: 2.5,
          list: [1, "b"],
          yes: true,
          no: false,
          obj: undefined,
          nothing: undefined,
        },
      },
      {
        key: "b",
        fields: {
          s: "other",
          n: undefined,
          list: undefined,
          yes: undefined,
          no: undefined,
          obj: { k: [1] },
          nothing: null,
        },
      },
    ]);
    expect(store.fieldsOf(["f", "x"], ["s"])).toEqual([
      { key: "a", fields: { s: "text" } },
      { key: "b", fields: { s: "other" } },
    ]);
    expect(() => store.fieldsOf(["f", "x"], ["s') --"])).toThrow(/not a field name/);
  });

  it("sees what another handle on the same file wrote", async () => {
    const file = path.join(dir, "shared.sqlite");
    const one = sqlite(undefined, file);
    const two = sqlite(undefined, file);
    await one.put(["s"], "k", { from: "one" });
    expect((await two.get(["s"], "k"))?.value).toEqual({ from: "one" });
    expect(one.db.pragma("journal_mode", { simple: true })).toBe("wal");
  });

  it("refuses a file written by a newer schema, and a closed store says so", async () => {
    const file = path.join(dir, "future.sqlite");
    const store = new SqliteStore(file);
    store.db.prepare("UPDATE meta SET value = '99' WHERE key = 'schema'").run();
    store.close();
    expect(() => new SqliteStore(file)).toThrow(/newer tableminds \(store schema 99/);
    await expect(store.get(["x"], "k")).rejects.toThrow(/closed/);
  });

  it("sweeps a namespace and the ones below it: a dry run counts, a real one deletes", async () => {
    const store = sqlite(["text"]);
    await store.put(["m", "a"], "old", { text: "gold", v: 1 });
    await store.put(["m", "a", "deep"], "old", { text: "silver", v: 1 });
    await store.put(["m", "a"], "new", { text: "bronze", v: 2 });
    await store.put(["mm"], "old", { text: "gold", v: 1 });
    const current = (value: unknown) => (value as { v?: number }).v === 2;
    expect(store.sweep(["m"], current, true)).toEqual({ dropped: 2, kept: 1 });
    expect(await store.get(["m", "a"], "old")).not.toBeNull();
    expect(store.sweep(["m"], current)).toEqual({ dropped: 2, kept: 1 });
    expect(await store.get(["m", "a"], "old")).toBeNull();
    expect(await store.get(["m", "a", "deep"], "old")).toBeNull();
    // Another namespace sharing the prefix's first letters is not under it.
    expect((await store.get(["mm"], "old"))?.value).toEqual({ text: "gold", v: 1 });
    // The dropped items' vectors go with them.
    const vectors = store.db.prepare("SELECT namespace, key FROM vectors ORDER BY namespace").all();
    expect(vectors).toEqual([
      { namespace: "m:a", key: "new" },
      { namespace: "mm", key: "old" },
    ]);
  });

  it("retires values of an outdated format when the file opens, once per version", async () => {
    const file = path.join(dir, "retire.sqlite");
    const first = sqlite(undefined, file);
    await first.put(["m", "x"], "old", { v: 1 });
    await first.put(["m", "x"], "new", { v: 2 });
    first.close();
    const keep = (value: unknown) => (value as { v?: number }).v === 2;
    const retire = { name: "format", prefix: ["m"], version: 2, keep };
    const opened = new SqliteStore(file, { retire });
    opened.close();
    expect(opened.retired).toBe(1);
    const plain = sqlite(undefined, file);
    expect(plain.retired).toBe(0);
    await plain.put(["m", "x"], "old", { v: 1 });
    const again = new SqliteStore(file, { retire });
    again.close();
    expect(again.retired).toBe(0);
    const next = new SqliteStore(file, { retire: { ...retire, version: 3 } });
    expect(next.retired).toBe(1);
    expect(next.db.prepare("SELECT value FROM meta WHERE key = 'retired:format'").get()).toEqual({
      value: "3",
    });
    next.close();
  });

  it("upgrades a schema 1 file without losing its items", async () => {
    const file = path.join(dir, "v1.sqlite");
    const db = new Database(file);
    db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema', '1');
      CREATE TABLE items (namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
        vector TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (namespace, key));`);
    const insert = db.prepare("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)");
    insert.run("tableminds\u001fmemories\u001fdefault", "old", '{"lesson":"x"}', null, 1000, 2000);
    insert.run("tableminds\u001fother", "v", '{"text":"gold"}', JSON.stringify([1, 0]), 10, 20);
    db.close();
    const store = sqlite(undefined, file);
    const item = await store.get(["tableminds", "memories", "default"], "old");
    expect(item?.value).toEqual({ lesson: "x" });
    expect(item?.createdAt.getTime()).toBe(1000);
    expect(item?.updatedAt.getTime()).toBe(2000);
    expect(await store.listNamespaces({ prefix: ["tableminds"] })).toEqual([
      ["tableminds", "memories", "default"],
      ["tableminds", "other"],
    ]);
    const version = store.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get();
    expect(version).toEqual({ value: String(STORE_SCHEMA_VERSION) });
    const vectors = store.db.prepare("SELECT count(*) AS n FROM vectors").get();
    expect(vectors).toEqual({ n: 1 });
  });
});
