import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BaseStore, InMemoryStore } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { OfflineEmbeddings } from "../../tools/memory/embeddings.js";
import { SqliteStore } from "../../tools/memory/sqlite-store.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-store-"));
const opened: SqliteStore[] = [];

function sqlite(name: string, indexed = false): SqliteStore {
  const index = indexed
    ? { dims: 256, embeddings: new OfflineEmbeddings(), fields: ["text"] }
    : undefined;
  const store = new SqliteStore(path.join(dir, `${name}.sqlite`), { index });
  opened.push(store);
  return store;
}

afterAll(() => {
  for (const store of opened) store.close();
});

const kinds: [string, (indexed?: boolean) => BaseStore][] = [
  [
    "InMemoryStore",
    (indexed) =>
      new InMemoryStore(
        indexed
          ? { index: { dims: 256, embeddings: new OfflineEmbeddings(), fields: ["text"] } }
          : undefined,
      ),
  ],
  ["SqliteStore", (indexed) => sqlite(`contract-${Math.random().toString(36).slice(2)}`, indexed)],
];

describe.each(kinds)("%s (the same contract)", (_name, make) => {
  it("puts, gets, overwrites and deletes", async () => {
    const store = make();
    await store.put(["a", "b"], "k1", { n: 1 });
    const first = await store.get(["a", "b"], "k1");
    expect(first?.value).toEqual({ n: 1 });
    expect(first?.namespace).toEqual(["a", "b"]);
    await store.put(["a", "b"], "k1", { n: 2 });
    const second = await store.get(["a", "b"], "k1");
    expect(second?.value).toEqual({ n: 2 });
    expect(second?.createdAt.getTime()).toBe(first?.createdAt.getTime());
    await store.delete(["a", "b"], "k1");
    expect(await store.get(["a", "b"], "k1")).toBeNull();
    expect(await store.get(["a", "x"], "missing")).toBeNull();
  });

  it("searches a namespace prefix with filters, limit and offset, never another namespace", async () => {
    const store = make();
    for (let i = 0; i < 5; i++) await store.put(["m", "alice"], `k${i}`, { i, even: i % 2 === 0 });
    await store.put(["m", "bob"], "k0", { i: 100, even: true });
    await store.put(["mm"], "k0", { i: 200, even: true });
    const alice = await store.search(["m", "alice"], { limit: 10 });
    expect(alice.map((x) => x.value.i).sort()).toEqual([0, 1, 2, 3, 4]);
    const evens = await store.search(["m"], { filter: { even: true }, limit: 10 });
    expect(evens.map((x) => x.value.i).sort((a, b) => a - b)).toEqual([0, 2, 4, 100]);
    const big = await store.search(["m"], { filter: { i: { $gte: 3 } }, limit: 10 });
    expect(big.map((x) => x.value.i).sort((a, b) => a - b)).toEqual([3, 4, 100]);
    expect(await store.search(["m", "alice"], { limit: 2 })).toHaveLength(2);
    expect(await store.search(["m", "alice"], { limit: 10, offset: 4 })).toHaveLength(1);
  });

  it("lists namespaces by prefix, suffix and depth", async () => {
    const store = make();
    await store.put(["t", "memories", "a"], "k", { x: 1 });
    await store.put(["t", "memories", "b"], "k", { x: 1 });
    await store.put(["t", "other"], "k", { x: 1 });
    expect(await store.listNamespaces({ prefix: ["t", "memories"] })).toEqual([
      ["t", "memories", "a"],
      ["t", "memories", "b"],
    ]);
    expect(await store.listNamespaces({ suffix: ["other"] })).toEqual([["t", "other"]]);
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ["t", "memories"],
      ["t", "other"],
    ]);
  });

  it("ranks by similarity when it has an index", async () => {
    const store = make(true);
    await store.put(["q"], "gold", { text: "How many gold medals did Japan win?" });
    await store.put(["q"], "rivers", { text: "What is the total length of the rivers?" });
    const found = await store.search(["q"], {
      query: "How many gold medals did China win?",
      limit: 2,
    });
    expect(found.map((x) => x.key)).toEqual(["gold", "rivers"]);
    expect(found[0]?.score ?? 0).toBeGreaterThan(found[1]?.score ?? 1);
  });
});

describe("SqliteStore on disk", () => {
  it("keeps what was put after the file is closed and opened again", async () => {
    const file = path.join(dir, "reopen.sqlite");
    const first = new SqliteStore(file);
    await first.put(["tableminds", "memories", "default"], "e1", { lesson: "sum the gold column" });
    first.close();
    const second = new SqliteStore(file);
    opened.push(second);
    const item = await second.get(["tableminds", "memories", "default"], "e1");
    expect(item?.value).toEqual({ lesson: "sum the gold column" });
  });

  it("refuses a file written by a newer schema", () => {
    const file = path.join(dir, "future.sqlite");
    const store = new SqliteStore(file);
    store.db.prepare("UPDATE meta SET value = '99' WHERE key = 'schema'").run();
    store.close();
    expect(() => new SqliteStore(file)).toThrow(/newer tableminds \(store schema 99/);
  });
});
