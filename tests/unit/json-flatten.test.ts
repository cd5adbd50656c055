import { describe, expect, it } from "vitest";
import { type Grid, gridFromJson } from "../../tables/grid.js";
import {
  MAX_FLAT_COLUMNS,
  MAX_JSON_DEPTH,
  MAX_OBJECT_KEYS,
  PARENT_ROW,
} from "../../tables/json-records.js";

const grid = (value: unknown): Grid => gridFromJson(JSON.stringify(value), "people.json");

/** The column `name` of a grid, as a list of cells. */
function column(g: Grid, name: string): string[] {
  const c = g.header.indexOf(name);
  expect(c, `column ${name} in ${g.header.join(", ")}`).toBeGreaterThanOrEqual(0);
  return g.rows.map((row) => row[c] ?? "");
}

const PEOPLE = [
  {
    id: 1,
    name: "Ada",
    address: { city: "London", geo: { lat: 51.5 } },
    salary: { amount: 1200, currency: "GBP" },
    tags: ["math", "poet"],
    orders: [
      { sku: "A", qty: 2, gift: { wrap: true } },
      { sku: "B", qty: 1 },
    ],
  },
  { id: 2, name: "Alan", address: null, tags: [], orders: [] },
  { id: 3, address: { city: "Paris", zip: "75001" }, orders: [{ sku: "C", qty: 5 }] },
];

describe("gridFromJson: nested records", () => {
  it("flattens nested objects into dotted columns, in first-seen order", () => {
    const g = grid(PEOPLE);
    expect(g.header).toEqual([
      "id",
      "name",
      "address.city",
      "address.geo.lat",
      "address.zip",
      "salary.amount",
      "salary.currency",
      "tags",
      "orders",
    ]);
    expect(column(g, "address.city")).toEqual(["London", "", "Paris"]);
    expect(column(g, "address.geo.lat")).toEqual(["51.5", "", ""]);
    expect(column(g, "salary.amount")).toEqual(["1200", "", ""]);
    expect(g.json).toEqual({ pointer: "", shape: "records" });
    expect(g.warnings).toBeUndefined();
  });

  it("keeps lists of scalars as JSON list text and names those columns", () => {
    const g = grid(PEOPLE);
    expect(column(g, "tags")).toEqual(['["math","poet"]', "[]", ""]);
    expect(g.lists).toEqual(["tags"]);
    // Lists beside scalars, and lists of lists, are text, not lists.
    const mixed = grid([
      { a: [1], b: [[1, 2]] },
      { a: "x", b: [[3]] },
    ]);
    expect(column(mixed, "a")).toEqual(["[1]", "x"]);
    expect(column(mixed, "b")).toEqual(["[[1,2]]", "[[3]]"]);
    expect(mixed.lists).toBeUndefined();
  });

  it("makes a list of records a child table with the parent's row, and keeps the count", () => {
    const g = grid(PEOPLE);
    expect(column(g, "orders")).toEqual(["2", "0", "1"]);
    expect(g.children).toHaveLength(1);
    const [orders] = g.children ?? [];
    expect(orders).toMatchObject({ name: "orders", parentColumn: "orders", path: ["orders"] });
    expect(orders?.grid.header).toEqual([PARENT_ROW, "sku", "qty", "gift.wrap"]);
    expect(orders?.grid.rows).toEqual([
      ["0", "A", "2", "true"],
      ["0", "B", "1", ""],
      ["2", "C", "5", ""],
    ]);
  });

  it("nests child tables: a list of records inside a child's records", () => {
    const g = grid([
      { id: 1, customer: { orders: [{ sku: "A", parts: [{ p: 1 }, { p: 2 }] }] } },
      {
        id: 2,
        customer: {
          orders: [
            { sku: "B", parts: [] },
            { sku: "C", parts: [{ p: 3 }] },
          ],
        },
      },
    ]);
    expect(g.header).toEqual(["id", "customer.orders"]);
    const orders = g.children?.[0];
    expect(orders).toMatchObject({ name: "customer.orders", path: ["customer", "orders"] });
    expect(orders?.grid.rows).toEqual([
      ["0", "A", "2"],
      ["1", "B", "0"],
      ["1", "C", "1"],
    ]);
    const parts = orders?.grid.children?.[0];
    expect(parts).toMatchObject({ name: "customer.orders.parts", parentColumn: "parts" });
    // The parent row of a part is its order's row in the orders table.
    expect(parts?.grid.rows).toEqual([
      ["0", "1"],
      ["0", "2"],
      ["2", "3"],
    ]);
  });

  it("names the parent column apart from a field of the same name", () => {
    const g = grid([{ items: [{ _parent_row: "x", v: 1 }] }]);
    expect(g.children?.[0]?.grid.header).toEqual(["_parent_row_2", "_parent_row", "v"]);
  });

  it("keeps a value that is an object in one record and text in another in two columns", () => {
    const g = grid([{ a: { b: 1 } }, { a: "unknown" }, { a: null }]);
    expect(g.header).toEqual(["a", "a.b"]);
    expect(g.rows).toEqual([
      ["", "1"],
      ["unknown", ""],
      ["", ""],
    ]);
  });

  it("keeps a list of records beside other items as JSON text", () => {
    const g = grid([{ a: [{ x: 1 }, 2] }]);
    expect(g.header).toEqual(["a"]);
    expect(g.rows).toEqual([['[{"x":1},2]']]);
    expect(g.children).toBeUndefined();
  });

  it("keeps empty objects and keys that are only ever null as columns", () => {
    const g = grid([
      { a: {}, b: null },
      { a: {}, b: null },
    ]);
    expect(g.header).toEqual(["a", "b"]);
    expect(g.rows).toEqual([
      ["{}", ""],
      ["{}", ""],
    ]);
  });
});

describe("gridFromJson: bounds", () => {
  it("keeps objects nested deeper than the bound as JSON text, and warns, without blowing the stack", () => {
    const levels = 100_000;
    const text = `[{"a":${'{"k":'.repeat(levels)}1${"}".repeat(levels)}}]`;
    const g = gridFromJson(text, "deep.json");
    const label = ["a", ...Array(MAX_JSON_DEPTH - 1).fill("k")].join(".");
    expect(g.header).toEqual([label]);
    const rest = levels - (MAX_JSON_DEPTH - 1);
    expect(g.rows[0]?.[0] === `${'{"k":'.repeat(rest)}1${"}".repeat(rest)}`).toBe(true);
    expect(g.warnings).toEqual([
      `kept as JSON text (nested deeper than ${MAX_JSON_DEPTH} levels): ${JSON.stringify(label)}`,
    ]);
  });

  it("prints deeply nested lists as text, not as lists", () => {
    const levels = 100_000;
    const text = `[{"a":1,"b":${"[".repeat(levels)}${"]".repeat(levels)}}]`;
    const g = gridFromJson(text, "deep.json");
    expect(g.header).toEqual(["a", "b"]);
    expect(g.rows[0]?.[1]).toHaveLength(2 * levels);
    expect(g.lists).toBeUndefined();
  });

  it("keeps an object with more keys than the bound (a map, not a record) as JSON text", () => {
    const counts = Object.fromEntries(
      Array.from({ length: MAX_OBJECT_KEYS + 1 }, (_, i) => [`2024-01-${i}`, i]),
    );
    const g = grid([
      { id: 1, counts },
      { id: 2, counts: { a: 1 } },
    ]);
    expect(g.header).toEqual(["id", "counts"]);
    expect(column(g, "counts")).toEqual([JSON.stringify(counts), '{"a":1}']);
    expect(g.warnings?.[0]).toContain(`objects with more than ${MAX_OBJECT_KEYS} keys`);
  });

  it("keeps the widest objects as JSON text when flattening would give too many columns", () => {
    const wide = (n: number, tag: string) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${tag}${i}`, i]));
    const record = {
      id: 1,
      a: wide(MAX_OBJECT_KEYS, "a"),
      b: wide(MAX_OBJECT_KEYS, "b"),
      c: wide(MAX_OBJECT_KEYS, "c"),
      d: wide(MAX_OBJECT_KEYS, "d"),
      e: wide(MAX_OBJECT_KEYS, "e"),
      f: wide(10, "f"),
    };
    const g = grid([record]);
    expect(g.header.length).toBeLessThanOrEqual(MAX_FLAT_COLUMNS);
    expect(g.header).toContain("f.f9");
    expect(g.header).toContain("a");
    expect(column(g, "a")).toEqual([JSON.stringify(record.a)]);
    expect(g.warnings?.[0]).toContain(`more than ${MAX_FLAT_COLUMNS} columns`);
  });
});

describe("gridFromJson: shapes kept", () => {
  it("reads {columns, data} as before: objects in cells stay JSON text", () => {
    const g = gridFromJson(
      JSON.stringify({ columns: ["k", "v"], data: [["a", { x: 1 }]] }),
      "rows.json",
    );
    expect(g).toEqual({
      header: ["k", "v"],
      rows: [["a", '{"x":1}']],
      json: { pointer: "/data", shape: "rows" },
    });
  });

  it("still refuses records without keys", () => {
    expect(() => gridFromJson("[{}, {}]", "empty.json")).toThrow(
      "unusable JSON shape: the records have no keys",
    );
  });
});
