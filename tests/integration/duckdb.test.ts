import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EvidenceSchema, type TableRef } from "../../blackboard/schemas.js";
import { DuckDbSql, SqlError, type SqlResult, sqlEvidence } from "../../sandbox/duckdb.js";
import { loadTable } from "../../tables/load.js";
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
      // Renamed on loading (SQL does not tell "A" from "a"), as the TableRef names it.
      { name: "a_2", dtype: "BIGINT" },
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

describe("DuckDbSql's derivation: the query re-run on perturbed copies of its tables", () => {
  let sql: DuckDbSql;
  let tables: TableRef[];

  beforeAll(async () => {
    useTempHome();
    // Many rows share the minimum 0 (scaling alone leaves it where it is), the largest kind
    // and the flag: shuffling the rows and dropping one leaves them where they are.
    const ties = {
      name: "ties",
      columns: ["n", "flag", "kind"],
      data: [
        [0, true, "y"],
        [0, true, "y"],
        [0, true, "x"],
        [5, true, "x"],
      ],
    };
    tables = await Promise.all([MEDALS, HOSTS, ties].map(async (t) => (await loadTable(t)).table));
    sql = await DuckDbSql.open(tables, { threads: 2 });
  });

  afterAll(async () => {
    await sql?.close();
  });

  const derive = (query: string) => sql.query(query, { derive: true });

  it("finds a computation over the tables derived, with the rows and columns it reads", async () => {
    const sum = await derive("SELECT sum(gold) AS total FROM medals");
    expect(sum.derivation).toEqual({
      derived: "yes",
      derivation: "changed when the tables' values were perturbed: computed from the table",
      lineage: [{ table: "medals", rows: null, columns: ["gold"] }],
    });
    const lookup = await derive("SELECT gold FROM medals WHERE nation = 'Japan'");
    expect(lookup.derivation).toMatchObject({
      derived: "yes",
      lineage: [{ table: "medals", rows: [2], columns: ["nation", "gold"] }],
    });
    const best = await derive(
      "SELECT m.* EXCLUDE (day) FROM medals m ORDER BY silver DESC LIMIT 1",
    );
    expect(best.derivation).toMatchObject({
      derived: "yes",
      lineage: [{ table: "medals", rows: [0], columns: ["nation", "gold", "silver"] }],
    });
    const joined = await derive(
      "SELECT h.year FROM medals JOIN hosts h USING (nation) WHERE gold > 30 ORDER BY 1",
    );
    expect(joined.derivation).toMatchObject({
      derived: "yes",
      lineage: [
        { table: "medals", rows: null, columns: ["nation", "gold"] },
        { table: "hosts", rows: null, columns: ["nation", "year"] },
      ],
    });
  });

  it("moves a minimum that many rows hold, and counts the rows left", async () => {
    const least = await derive("SELECT min(n) FROM ties");
    expect(least.rows).toEqual([[0]]);
    expect(least.derivation?.derived).toBe("yes");
    expect((await derive("SELECT count(*) FROM ties")).derivation?.derived).toBe("yes");
    const japan = await derive("SELECT count(*) FROM medals WHERE nation = 'Japan'");
    expect(japan.derivation?.derived).toBe("yes");
  });

  it("changes one column at a time when the shuffled copies keep what a column holds", async () => {
    const largest = await derive("SELECT max(kind) FROM ties");
    expect(largest.rows).toEqual([["y"]]);
    expect(largest.derivation?.derivation).toBe(
      "changed when column kind of ties was perturbed: computed from the table",
    );
    const all = await derive("SELECT bool_and(flag) AS every FROM ties");
    expect(all.derivation).toEqual({
      derived: "yes",
      derivation: "changed when column flag of ties was perturbed: computed from the table",
      lineage: [{ table: "ties", rows: null, columns: ["flag"] }],
    });
  });

  it("finds literals not derived, with or without a table in the query", async () => {
    const bare = await derive("SELECT 750");
    expect(bare.derivation).toMatchObject({ derived: "no", lineage: [] });
    expect(bare.derivation?.derivation).toMatch(
      /^unchanged when the table's values were perturbed: a literal .*\(the query reads no table\)$/,
    );
    const dressed = await derive("SELECT 750 AS total FROM medals LIMIT 1");
    expect(dressed.rows).toEqual([[750]]);
    expect(dressed.derivation).toMatchObject({
      derived: "no",
      lineage: [{ table: "medals", rows: [0], columns: [] }],
    });
    expect(dressed.derivation?.derivation).toMatch(/^unchanged when the table's values/);
  });

  it("finds a result that changes on the unchanged tables not deterministic", async () => {
    const random = await derive("SELECT random() AS r FROM medals LIMIT 1");
    expect(random.derivation).toMatchObject({
      derived: "no",
      derivation: "not deterministic: a re-run on the unchanged tables gave a different result",
    });
  });

  it("says unknown when copies cannot stand in or time runs out, and stays usable", async () => {
    const named = await derive("SELECT sum(gold) FROM memory.main.medals");
    expect(named.derivation?.derived).toBe("unknown");
    expect(named.derivation?.derivation).toMatch(/names a table's schema or database/);
    const slow = await sql.query(
      "SELECT count(*) FROM medals, range(4000000) r WHERE (r.range * gold) % 7 = 3",
      { derive: true, deriveMs: 20 },
    );
    expect(slow.rows).toHaveLength(1);
    expect(slow.derivation?.derived).toBe("unknown");
    expect(slow.derivation?.derivation).toMatch(/ran out of their 20 ms/);
    // A table read by name only (no table in the parse tree): copies of every table are made.
    const byName = await derive("SELECT sum(year) FROM query_table('hosts')");
    expect(byName.derivation?.derived).toBe("yes");
    expect((await sql.query("SELECT 1")).derivation).toBeUndefined();
  });

  it("perturbs each copy: numbers scaled with an offset, dates moved, text shuffled, a row dropped", async () => {
    await derive("SELECT sum(gold) FROM medals");
    const original = await sql.query("SELECT * FROM medals");
    const copies = await Promise.all(
      [1, 2, 3].map((k) => sql.query(`SELECT * FROM tableminds_perturbed_${k}.medals`)),
    );
    for (const copy of copies) {
      // Same columns and types; one row of five dropped, the others in their order.
      expect(copy.columns).toEqual(original.columns);
      expect(copy.rows).toHaveLength(4);
      const kept = [0, 1, 2, 3, 4].map((dropped) => original.rows.filter((_, i) => i !== dropped));
      const fits = kept.some((rows) =>
        rows.every((row, i) => {
          const [gold, silver] = [Number(row[1]), Number(row[2])];
          const [g, s] = [Number(copy.rows[i]?.[1]), Number(copy.rows[i]?.[2])];
          const within = (x: number, y: number) =>
            y >= Math.round(x * 0.5) + 1 && y <= Math.round(x * 2) + 9;
          return within(gold, g) && within(silver, s);
        }),
      );
      expect(fits).toBe(true);
      // Nations shuffled among the rows: four of the five, as they are spelled.
      const nations = copy.rows.map((row) => row[0]);
      expect(new Set(nations).size).toBe(4);
      for (const nation of nations) expect(original.rows.map((row) => row[0])).toContain(nation);
      // Dates move by up to a year; Japan's missing date stays missing somewhere or is dropped.
      for (const day of copy.rows.map((row) => row[3])) {
        if (day === null) continue;
        const shift = Math.abs(Date.parse(String(day)) - Date.parse("2021-08-07")) / 86_400_000;
        expect(shift).toBeLessThanOrEqual(367);
      }
    }
    expect(new Set(copies.map((c) => JSON.stringify(c.rows))).size).toBe(3);
    // Seeded: another engine over the same tables makes the same copies.
    const again = await DuckDbSql.open(tables, { threads: 1 });
    try {
      await again.query("SELECT sum(gold) FROM medals", { derive: true });
      const copy = await again.query("SELECT * FROM tableminds_perturbed_1.medals");
      expect(copy.rows).toEqual(copies[0]?.rows);
    } finally {
      await again.close();
    }
  });

  it("keeps the lockdown: no file access and no statements but one SELECT", async () => {
    for (const query of [
      "SELECT * FROM read_csv('/etc/passwd')",
      `ATTACH ':memory:' AS other`,
      "CREATE TABLE tableminds_perturbed_1.main.x AS SELECT 1",
      "USE tableminds_perturbed_1",
      "SET enable_external_access = true",
    ]) {
      await expect(sql.query(query, { derive: true }), query).rejects.toBeInstanceOf(SqlError);
    }
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
