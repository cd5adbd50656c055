import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../tools/bounded-cache.js";

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
