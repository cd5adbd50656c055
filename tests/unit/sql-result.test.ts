import { describe, expect, it } from "vitest";
import { AttemptSchema } from "../../blackboard/schemas.js";
import type { SqlResult } from "../../sandbox/duckdb.js";
import { canonicalRows, perturbedCopySql } from "../../sandbox/duckdb-perturb.js";
import {
  failedSqlAttempt,
  renderRows,
  sqlAttempt,
  sqlCodeResult,
} from "../../sandbox/duckdb-result.js";

function result(over: Partial<SqlResult> = {}): SqlResult {
  return {
    columns: [{ name: "km", dtype: "HUGEINT" }],
    rows: [[750]],
    rowIds: null,
    truncated: false,
    durationMs: 3,
    table: null,
    tables: ["cities", "countries"],
    ...over,
  };
}

const DERIVED = {
  derived: "yes" as const,
  derivation: "changed when the tables' values were perturbed: computed from the table",
  lineage: [{ table: "cities", rows: null, columns: ["km_to_sea"] }],
};

describe("a SQL result as the code's result", () => {
  it("is a scalar for one cell, a list for one column, a frame otherwise", () => {
    expect(sqlCodeResult(result({ derivation: DERIVED }))).toEqual({
      from: "declared",
      kind: "scalar",
      values: [750],
      labels: [],
      text: "750",
      line: null,
      ...DERIVED,
    });
    const list = sqlCodeResult(
      result({ rows: [["Lyon"], ["Graz"]], columns: [{ name: "city", dtype: "VARCHAR" }] }),
    );
    expect(list).toMatchObject({
      kind: "list",
      values: ["Lyon", "Graz"],
      text: "city\nLyon\nGraz",
    });
    const frame = sqlCodeResult(
      result({
        columns: [
          { name: "city", dtype: "VARCHAR" },
          { name: "km", dtype: "BIGINT" },
        ],
        rows: [
          ["Lyon", 250],
          ["Graz", null],
        ],
      }),
    );
    expect(frame).toMatchObject({
      kind: "frame",
      values: ["Lyon", 250, "Graz", null],
      text: "city | km\nLyon | 250\nGraz | null",
    });
    expect(sqlCodeResult(result({ rows: [] }))).toMatchObject({
      kind: "list",
      values: [],
      text: "(no rows)",
    });
  });

  it("is unknown, with the rows DuckDB kept, when the query was not re-run", () => {
    const lookedUp = sqlCodeResult(
      result({ rows: [[180]], rowIds: [1], table: "cities", tables: ["cities"] }),
    );
    expect(lookedUp).toMatchObject({
      derived: "unknown",
      lineage: [{ table: "cities", rows: [1], columns: null }],
    });
    expect(lookedUp.derivation).toMatch(/not re-run on perturbed copies/);
  });

  it("makes an attempt whose code is the query and whose output is the rows", () => {
    const attempt = sqlAttempt(
      "s1.sql.q1",
      "SELECT 750",
      "```sql\nSELECT 750\n```",
      result({ derivation: DERIVED }),
    );
    expect(AttemptSchema.parse(attempt)).toEqual(attempt);
    expect(attempt).toMatchObject({ id: "s1.sql.q1", code: "SELECT 750", parseError: null });
    expect(attempt.result).toMatchObject({
      ok: true,
      stdout: "km\n750\n",
      stderr: "",
      error: null,
      tables: [],
      spans: [],
      truncated: false,
      durationMs: 3,
      result: { values: [750], derived: "yes" },
    });
    const failed = failedSqlAttempt(
      "s1.sql.q2",
      "SELECT nope",
      "",
      { kind: "runtime", message: "Binder Error: nope" },
      2,
    );
    expect(AttemptSchema.parse(failed)).toEqual(failed);
    expect(failed.result).toMatchObject({
      ok: false,
      error: { type: "SqlError (runtime)", message: "Binder Error: nope", line: null },
      result: null,
    });
  });

  it("writes at most so many rows to the output and says how many it left out", () => {
    const many = result({ rows: Array.from({ length: 5 }, (_, i) => [i]) });
    expect(renderRows(many, 2)).toEqual({ text: "km\n0\n1\n... 3 more rows\n", cut: true });
    expect(renderRows({ ...many, truncated: true }, 10).text).toMatch(/past the row limit\n$/);
  });
});

describe("comparing a query's results", () => {
  it("compares numbers to 9 significant digits, in order only when the query orders rows", () => {
    const a = [
      ["Lyon", 0.1 + 0.2],
      ["Graz", 1],
    ];
    const b = [
      ["Graz", 1],
      ["Lyon", 0.3],
    ];
    expect(canonicalRows(a, false, false)).toBe(canonicalRows(b, false, false));
    expect(canonicalRows(a, false, true)).not.toBe(canonicalRows(b, false, true));
    expect(canonicalRows([[1]], false, false)).not.toBe(canonicalRows([["1"]], false, false));
    expect(canonicalRows([[1]], false, false)).not.toBe(canonicalRows([[1]], true, false));
    expect(canonicalRows([[null]], false, false)).not.toBe(canonicalRows([["null"]], false, false));
  });
});

describe("a perturbed copy of a table", () => {
  const columns = [
    { name: "city", type: "VARCHAR" },
    { name: "km_to_sea", type: "BIGINT" },
    { name: "share", type: "DECIMAL(5,2)" },
    { name: "opened", type: "DATE" },
  ];

  it("scales numbers with an offset, moves dates, shuffles the rest, drops a row, keeps order", () => {
    const sql = perturbedCopySql("cities", columns, 1, true, 4);
    expect(sql).toMatch(/^CREATE OR REPLACE TABLE "tableminds_perturbed_2"\.main\."cities" AS/);
    expect(sql).toContain(`FROM memory.main."cities"`);
    expect(sql).toContain(`rowid AS "__tableminds_rid"`);
    // Integers stay integers of their type; decimals keep their precision.
    expect(sql).toMatch(
      /TRY_CAST\(round\(CAST\(b\."km_to_sea" AS DOUBLE\) \* \(0\.5 \* pow\(4\.0, .*\)\)\) \+ \(1 \+ floor\(.* \* 9\)\) AS BIGINT\) AS "km_to_sea"/,
    );
    expect(sql).toMatch(/AS DECIMAL\(5,2\)\) AS "share"/);
    expect(sql).toMatch(/TRY_CAST\(b\."opened" \+ CAST\(.*\) AS DATE\) AS "opened"/);
    expect(sql).toContain(`"__tableminds_s0"."__tableminds_value" AS "city"`);
    expect(sql).toContain(`ORDER BY b."__tableminds_rid"`);
    expect(sql).toMatch(/\nWHERE b\."__tableminds_rid" <> CAST\(hash\(.*\) % 4 AS BIGINT\)\n/);
    // One row: none dropped.
    expect(perturbedCopySql("cities", columns, 1, true, 1)).not.toContain("WHERE");
    // Seeded: the same statement every time; each copy its own.
    expect(perturbedCopySql("cities", columns, 1, true, 4)).toBe(sql);
    expect(perturbedCopySql("cities", columns, 2, true, 4)).not.toBe(sql);
    // A real rowid column: rows numbered as they are scanned.
    expect(perturbedCopySql("cities", columns, 1, false, 4)).toContain(
      `row_number() OVER () - 1 AS "__tableminds_rid"`,
    );
  });
});
