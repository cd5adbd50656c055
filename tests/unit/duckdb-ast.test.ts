import { describe, expect, it } from "vitest";
import {
  appendToSelectList,
  judgeSerialized,
  referencedTables,
  rowIdColumnJson,
  traceTarget,
} from "../../sandbox/duckdb-ast.js";

/** A hand-written stand-in for json_serialize_sql output of one SELECT. */
function serialized(node: Record<string, unknown>): string {
  return JSON.stringify({ error: false, statements: [{ node, named_param_map: [] }] });
}

const BASE = {
  type: "SELECT_NODE",
  modifiers: [],
  cte_map: { map: [] },
  select_list: [{ class: "COLUMN_REF", column_names: ["a"] }],
  from_table: { type: "BASE_TABLE", alias: "", schema_name: "", catalog_name: "", table_name: "T" },
  group_expressions: [],
  group_sets: [],
  aggregate_handling: "STANDARD_HANDLING",
  having: null,
};
const REGISTERED = new Map([
  ["t", "t"],
  ["u", "u"],
]);

function statementOf(json: string) {
  const verdict = judgeSerialized(json);
  if (!verdict.ok) throw new Error(verdict.message);
  return verdict.statement;
}

describe("judgeSerialized", () => {
  it("sorts refusals into syntax errors and statements that are not a single query", () => {
    expect(
      judgeSerialized(
        JSON.stringify({
          error: true,
          error_type: "parser",
          error_message: 'syntax error at or near "SELEC"',
          position: "0",
        }),
      ),
    ).toEqual({
      ok: false,
      kind: "syntax",
      message: 'syntax error at or near "SELEC" (at character 1)',
    });
    const write = judgeSerialized(
      JSON.stringify({ error: true, error_type: "not implemented", error_message: "Only SELECT" }),
    );
    expect(write).toMatchObject({ ok: false, kind: "not-read-only" });
    const two = JSON.stringify({ error: false, statements: [{ node: BASE }, { node: BASE }] });
    expect(judgeSerialized(two)).toMatchObject({ ok: false, kind: "not-read-only" });
    expect(judgeSerialized(serialized(BASE)).ok).toBe(true);
  });
});

describe("traceTarget and referencedTables", () => {
  it("traces a plain SELECT over one registered table, by its alias when it has one", () => {
    expect(traceTarget(statementOf(serialized(BASE)), REGISTERED)).toEqual({
      table: "t",
      qualifier: "T",
    });
    const aliased = { ...BASE, from_table: { ...BASE.from_table, alias: "x" } };
    expect(traceTarget(statementOf(serialized(aliased)), REGISTERED)?.qualifier).toBe("x");
  });

  it("does not trace grouping, DISTINCT, CTEs, other schemas or unknown tables", () => {
    const variants = [
      { ...BASE, group_expressions: [{ class: "COLUMN_REF" }] },
      { ...BASE, aggregate_handling: "FORCE_AGGREGATES" },
      { ...BASE, having: { class: "CONSTANT" } },
      { ...BASE, modifiers: [{ type: "DISTINCT_MODIFIER" }] },
      { ...BASE, cte_map: { map: [{ key: "t", value: {} }] } },
      { ...BASE, from_table: { ...BASE.from_table, schema_name: "information_schema" } },
      { ...BASE, from_table: { ...BASE.from_table, table_name: "elsewhere" } },
      { ...BASE, type: "SET_OPERATION_NODE" },
    ];
    for (const node of variants) {
      expect(traceTarget(statementOf(serialized(node)), REGISTERED), JSON.stringify(node)).toBe(
        null,
      );
    }
  });

  it("lists every registered table read, skipping names a WITH clause defines", () => {
    const join = {
      ...BASE,
      cte_map: {
        map: [{ key: "u", value: { from_table: { type: "BASE_TABLE", table_name: "t" } } }],
      },
      from_table: {
        type: "JOIN",
        left: { ...BASE.from_table, table_name: "u" },
        right: { ...BASE.from_table, table_name: "t" },
      },
    };
    expect(referencedTables(statementOf(serialized(join)), REGISTERED)).toEqual(["t"]);
  });
});

describe("appendToSelectList", () => {
  it("appends to the top select list only, keeping large integers digit for digit", () => {
    const big = "18446744073709551615";
    const nested = {
      ...BASE,
      modifiers: [{ type: "ORDER_MODIFIER", orders: [{ subquery: { select_list: [] } }] }],
    };
    const json = serialized(nested).replace(
      '"column_names":["a"]',
      `"location":${big},"column_names":["a"]`,
    );
    const column = rowIdColumnJson("t", "rid");
    const out = appendToSelectList(json, column);
    expect(out).not.toBeNull();
    expect(out).toContain(`"location":${big}`);
    const parsed = JSON.parse(out ?? "");
    const node = parsed.statements[0].node;
    expect(node.select_list).toHaveLength(2);
    expect(node.select_list[1]).toEqual({
      class: "COLUMN_REF",
      type: "COLUMN_REF",
      alias: "rid",
      column_names: ["t", "rowid"],
    });
    expect(node.modifiers[0].orders[0].subquery.select_list).toEqual([]);
  });

  it("handles an empty list, brackets inside strings, and a missing list", () => {
    const json = serialized({ ...BASE, select_list: [], note: 'a "]" [ b' });
    const out = JSON.parse(appendToSelectList(json, "1") ?? "");
    expect(out.statements[0].node.select_list).toEqual([1]);
    expect(out.statements[0].node.note).toBe('a "]" [ b');
    expect(appendToSelectList(serialized({ type: "SELECT_NODE" }), "1")).toBeNull();
  });
});
