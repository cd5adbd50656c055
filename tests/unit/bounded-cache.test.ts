import { describe, expect, it } from "vitest";
import { BoundedCache, WorkCache } from "../../storage/bounded-cache.js";

describe("BoundedCache", () => {
  it("drops the least recently used entry past its limit", () => {
    const cache = new BoundedCache<number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    expect(cache.get("a")).toBe(1); // "b" is now the least recently used
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([1, undefined, 3]);
  });

  it("replaces an entry without growing, and forgets on delete and clear", () => {
    const cache = new BoundedCache<string>(2);
    cache.set("a", "x");
    cache.set("a", "y");
    cache.set("b", "z");
    expect([cache.get("a"), cache.get("b")]).toEqual(["y", "z"]);
    cache.delete("a");
    expect(cache.get("a")).toBeUndefined();
    cache.clear();
    expect(cache.get("b")).toBeUndefined();
  });
});

describe("WorkCache", () => {
  it("starts a key's work once, shares it with callers meanwhile, and forgets work that failed", async () => {
    const cache = new WorkCache<number>(4);
    let started = 0;
    const work = (fail: boolean) => () => {
      started += 1;
      return fail ? Promise.reject(new Error("no")) : Promise.resolve(started);
    };
    const [a, b] = [cache.obtain("k", work(false)), cache.obtain("k", work(false))];
    expect(a).toBe(b);
    expect(await a).toBe(1);
    await expect(cache.obtain("bad", work(true))).rejects.toThrow("no");
    await Promise.resolve();
    expect(await cache.obtain("bad", work(false))).toBe(3);
    expect(started).toBe(3);
  });
});
