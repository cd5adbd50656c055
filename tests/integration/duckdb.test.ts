import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EvidenceSchema, type TableRef } from "../../blackboard/schemas.js";
import { DuckDbSql, SqlError, type SqlResult, sqlEvidence } from "../../tools/sandbox/duckdb.js";
import { loadTable } from "../../tools/tables/load.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

const MEDALS = {
  name: "medals",
  columns: ["nation", "gold", "silver", "day"],
  data: [
    ["United States", 39, 41, "2021-08-08"],
    ["China", 38, 32, "2021-08-08"],
    ["Japan", 27, 14, null],
    ["Great Britain", 22, 21, "2021-08-07"],
    ["ROC", 20, 28, "2021-08-06"],
  ],
};

const HOSTS = {
  name: "hosts",
  columns: ["nation", "year"],
  data: [
    ["Japan", 2021],
    ["China", 2008],
    ["Great Britain", 2012],
  ],
};

const BIG_ROWS = 300_000;

async function rejection(promise: Promise<unknown>): Promise<SqlError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof SqlError)) throw new Error(`expected a SqlError, got ${String(error)}`);
  return error;
}

describe("DuckDbSql", () => {
  let home: string;
  let sql: DuckDbSql;
  let medals: TableRef;

  beforeAll(async () => {
    home = useTempHome();
    medals = (await loadTable(MEDALS)).table;
    const hosts = (await loadTable(HOSTS)).table;
    // A reserved SQL word as a table name, to prove names are quoted.
    const order = (await loadTable({ name: "order", columns: ["item"], data: [["a"], ["b"]] }))
      .table;
    // Names DuckDB treats specially: equal but for case, its own rowid, a quote.
    const awkward = (
      await loadTable({
        name: "awkward",
        columns: ["A", "a", "rowid", "it's"],
        data: [
          [1, 2, 10, "x"],
          [3, 4, 11, "y"],
        ],
      })
    ).table;
    const lines = ["id,half"];
    for (let i = 0; i < BIG_ROWS; i++) lines.push(`${i},${i % 2 === 0 ? "even" : "odd"}`);
    const file = writeFixture(fixtureDir(), "big.csv", `${lines.join("\n")}\n`);
    const big = (await loadTable({ path: file })).table;
    sql = await DuckDbSql.open([medals, hosts, order, big, awkward], { threads: 2 });
  });

  afterAll(async () => {
    await sql?.close();
  });

  it("returns the filtered rows with their source row ids and DuckDB's types", async () => {
    const result = await sql.query("SELECT nation, gold FROM medals WHERE gold BETWEEN 20 AND 30");
    expect(result.columns).toEqual([
      { name: "nation", dtype: "VARCHAR" },
      { name: "gold", dtype: "BIGINT" },
    ]);
    expect(result.rows).toEqual([
      ["Japan", 27],
      ["Great Britain", 22],
      ["ROC", 20],
    ]);
    expect(result.rowIds).toEqual([2, 3, 4]);
    expect(result.table).toBe("medals");
    expect(result.truncated).toBe(false);
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it("keeps row ids aligned through aliases, ORDER BY position, LIMIT and window functions", async () => {
    const sorted = await sql.query(
      "SELECT m.nation, rank() OVER (ORDER BY silver DESC) AS r FROM medals AS m ORDER BY 2 LIMIT 3",
    );
    expect(sorted.rows).toEqual([
      ["United States", 1],
      ["China", 2],
      ["ROC", 3],
    ]);
    expect(sorted.rowIds).toEqual([0, 1, 4]);
    const star = await sql.query(`SELECT * FROM "order" WHERE item = 'b'`);
    expect(star.columns.map((c) => c.name)).toEqual(["item"]);
    expect(star.rows).toEqual([["b"]]);
    expect(star.rowIds).toEqual([1]);
  });

  it("numbers the rows of a large table in file order", async () => {
    const result = await sql.query("SELECT id FROM big WHERE id % 50000 = 7 ORDER BY id DESC");
    const ids = result.rows.map((row) => row[0]);
    expect(ids).toEqual([250007, 200007, 150007, 100007, 50007, 7]);
    expect(result.rowIds).toEqual(ids);
  });

  it("gives no row ids for aggregates, grouping, DISTINCT, CTEs and set operations", async () => {
    const count = await sql.query("SELECT count(*) AS n, max(gold) AS top FROM medals");
    expect(count.rows).toEqual([[5, 39]]);
    expect(count.rowIds).toBeNull();
    expect(count.table).toBe("medals");
    for (const query of [
      "SELECT day, count(*) FROM medals GROUP BY day",
      "SELECT DISTINCT day FROM medals",
      "WITH medals AS (SELECT 1 AS gold) SELECT gold FROM medals",
      "SELECT nation FROM medals UNION ALL SELECT nation FROM hosts",
    ]) {
      expect((await sql.query(query)).rowIds, query).toBeNull();
    }
  });

  it("loads awkward column names; a real rowid column turns tracing off", async () => {
    const result = await sql.query(`SELECT * FROM awkward WHERE "it's" = 'y'`);
    expect(result.columns).toEqual([
      { name: "A", dtype: "BIGINT" },
      { name: "a_1", dtype: "BIGINT" },
      { name: "rowid", dtype: "BIGINT" },
      { name: "it's", dtype: "VARCHAR" },
    ]);
    expect(result.rows).toEqual([[3, 4, 11, "y"]]);
    expect(result.rowIds).toBeNull();
  });

  it("joins two tables", async () => {
    const result = await sql.query(
      "SELECT m.nation, h.year, m.gold FROM medals m JOIN hosts h USING (nation) ORDER BY h.year",
    );
    expect(result.rows).toEqual([
      ["China", 2008, 38],
      ["Great Britain", 2012, 22],
      ["Japan", 2021, 27],
    ]);
    expect(result.rowIds).toBeNull();
    expect(result.table).toBeNull();
    expect(result.tables).toEqual(["medals", "hosts"]);
  });

  it("converts big integers, decimals, dates and timestamps to plain JSON values", async () => {
    const result = await sql.query(
      "SELECT 9007199254740993 AS big, 41::BIGINT AS small, 1.25 AS dec, " +
        "DATE '2024-01-02' AS d, TIMESTAMP '2024-01-02 03:04:05' AS ts, 'inf'::DOUBLE AS inf, " +
        "[1, 2] AS list, NULL AS nothing",
    );
    expect(result.rows).toEqual([
      [
        "9007199254740993",
        41,
        1.25,
        "2024-01-02",
        "2024-01-02T03:04:05",
        "Infinity",
        "[1, 2]",
        null,
      ],
    ]);
    const dates = await sql.query("SELECT day FROM medals WHERE nation = 'ROC'");
    expect(dates.columns[0]?.dtype).toBe("DATE");
    expect(dates.rows).toEqual([["2021-08-06"]]);
  });

  it("truncates at the row limit and says so", async () => {
    const three = await sql.query("SELECT * FROM medals", { rowLimit: 3 });
    expect(three.rows).toHaveLength(3);
    expect(three.rowIds).toEqual([0, 1, 2]);
    expect(three.truncated).toBe(true);
    const exact = await sql.query("SELECT * FROM medals", { rowLimit: 5 });
    expect(exact.truncated).toBe(false);
    const byDefault = await sql.query("SELECT id FROM big");
    expect(byDefault.rows).toHaveLength(10_000);
    expect(byDefault.truncated).toBe(true);
  });

  it("interrupts a query past its deadline and stays usable", async () => {
    const started = performance.now();
    const error = await rejection(
      sql.query("SELECT count(*) FROM range(100000000) a, range(100000000) b", { timeoutMs: 300 }),
    );
    expect(error.kind).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect((await sql.query("SELECT count(*) FROM medals")).rows).toEqual([[5]]);
  });

  it("runs queries side by side; one timing out does not stop the other", async () => {
    const [slow, fast] = await Promise.allSettled([
      sql.query("SELECT count(*) FROM range(100000000) a, range(100000000) b", { timeoutMs: 400 }),
      sql.query("SELECT count(*) FROM big WHERE half = 'odd'"),
    ]);
    expect(slow.status).toBe("rejected");
    expect(fast.status === "fulfilled" && fast.value.rows).toEqual([[BIG_ROWS / 2]]);
  });

  it("refuses every statement that is not a single read-only query", async () => {
    const outside = path.join(home, "escaped.csv");
    const refused = [
      "INSERT INTO medals VALUES ('Atlantis', 99, 0, NULL)",
      "UPDATE medals SET gold = 0",
      "DELETE FROM medals",
      "DROP TABLE medals",
      "CREATE TABLE copy AS SELECT * FROM medals",
      "ALTER TABLE medals ADD COLUMN x INTEGER",
      `ATTACH '${path.join(home, "other.db")}' AS other`,
      `COPY medals TO '${outside}'`,
      `COPY (SELECT 1) TO '${outside}'`,
      `EXPORT DATABASE '${home}'`,
      "INSTALL httpfs",
      "LOAD httpfs",
      "SET enable_external_access = true",
      "RESET lock_configuration",
      "PRAGMA enable_profiling",
      "PRAGMA threads = 1",
      "CALL pragma_version()",
      "EXPLAIN SELECT 1",
      "SELECT 1; DROP TABLE medals",
      "SELECT 1; SELECT 2",
      "BEGIN TRANSACTION",
      "CHECKPOINT",
    ];
    for (const query of refused) {
      const error = await rejection(sql.query(query));
      expect(error.kind, query).toBe("not-read-only");
    }
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(path.join(home, "other.db"))).toBe(false);
    const intact = await sql.query("SELECT count(*), sum(gold) FROM medals");
    expect(intact.rows).toEqual([[5, 146]]);
  });

  it("blocks file access from inside a SELECT", async () => {
    for (const query of [
      "SELECT * FROM read_csv('/etc/passwd')",
      "SELECT * FROM read_text('/etc/passwd')",
      "SELECT * FROM '/etc/hostname'",
      "SELECT * FROM glob('/etc/*')",
      `SELECT * FROM read_csv('${medals.uri}')`,
      "SELECT * FROM query('DROP TABLE medals')",
    ]) {
      const error = await rejection(sql.query(query));
      expect(["runtime", "syntax"], query).toContain(error.kind);
      expect(error.message, query).not.toMatch(/root:|\/bin\/(ba)?sh/);
    }
  });

  it("reports syntax errors and unknown names as such", async () => {
    const syntax = await rejection(sql.query("SELEC nation FROM medals"));
    expect(syntax.kind).toBe("syntax");
    expect(syntax.message).toMatch(/syntax error/i);
    const unknown = await rejection(sql.query("SELECT medal_count FROM medals"));
    expect(unknown.kind).toBe("runtime");
    expect(unknown.message).toContain("medal_count");
  });
});

describe("sqlEvidence", () => {
  const base: SqlResult = {
    columns: [
      { name: "nation", dtype: "VARCHAR" },
      { name: "gold", dtype: "BIGINT" },
    ],
    rows: [
      ["Japan", 27],
      ["ROC", null],
    ],
    rowIds: [2, 4],
    truncated: false,
    durationMs: 1,
    table: "medals",
    tables: ["medals"],
  };
  const query = "SELECT nation, gold FROM medals WHERE gold < 30";

  it("anchors one packet per row to the query and its source row", () => {
    const packets = sqlEvidence(base, query, "a1", "2024-01-01T00:00:00Z");
    expect(packets.map((p) => EvidenceSchema.parse(p))).toEqual(packets);
    expect(packets.map((p) => p.id)).toEqual(["a1:sql1", "a1:sql2"]);
    expect(packets[0]).toMatchObject({
      modality: "sql",
      source: "sql",
      anchor: { kind: "sql", query, table: "medals", rowIds: [2] },
      value: "nation=Japan; gold=27",
      provenance: { attempt: "a1", parents: [] },
    });
    expect(packets[1]?.value).toBe("nation=ROC; gold=null");
  });

  it("uses the cell itself for one column, no row ids when untraced, at most 50 packets", () => {
    const many: SqlResult = {
      ...base,
      columns: [{ name: "n", dtype: "BIGINT" }],
      rows: Array.from({ length: 80 }, (_, i) => [i]),
      rowIds: null,
      table: null,
      tables: ["medals", "hosts"],
    };
    const packets = sqlEvidence(many, "SELECT ...", "a2", "t");
    expect(packets).toHaveLength(50);
    expect(packets[7]?.value).toBe(7);
    expect(packets[7]?.anchor).toEqual({
      kind: "sql",
      query: "SELECT ...",
      table: "medals, hosts",
      rowIds: [],
    });
  });
});
