import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { DuckDbSql } from "../../sandbox/duckdb.js";
import { tableContext } from "../../tables/context.js";
import { loadTables } from "../../tables/load.js";
import { uniqueColumnNames } from "../../tables/names.js";
import { readTable } from "../../tables/read.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

/*
 * Duplicate column names (issue 23, item 6): `value, value, Value`. SQL does not tell `Value`
 * from `value`, so a query over the third name read the first column, and the answer cited it.
 */

const CSV = "name,value,value,Value\na,1,10,100\nb,2,20,200\nc,4,40,700\n";

describe("a table whose header repeats a name, once in other case", () => {
  let table: TableRef;
  let warnings: string[];
  let sql: DuckDbSql;

  beforeAll(async () => {
    useTempHome();
    const file = writeFixture(fixtureDir(), "dup.csv", CSV);
    [{ table, warnings }] = (await loadTables({ path: file })) as [
      { table: TableRef; warnings: string[] },
    ];
    sql = await DuckDbSql.open([table], { threads: 1 });
  });

  afterAll(async () => {
    await sql?.close();
  });

  it("gets names SQL tells apart, each renamed one saying which header cell it is", () => {
    expect(table.columns.map((c) => c.name)).toEqual(["name", "value", "value_2", "Value_3"]);
    expect(warnings.map((w) => w.replace(/^.*dup\.csv: /, ""))).toEqual([
      'column 3 repeats the name "value" of column 2; renamed it "value_2"',
      'column 4 "Value" differs from column 2 "value" only in case, which SQL does not tell apart; renamed it "Value_3"',
    ]);
    expect(uniqueColumnNames(["name", "value", "value", "Value"]).sources).toEqual([
      null,
      null,
      'the header\'s second "value" (column 3)',
      'the header\'s "Value" (column 4), not "value" (column 2)',
    ]);
  });

  it("sums, by each column's name, that column of the file in SQL as in the stored table", async () => {
    const stored = await readTable(table);
    for (const [i, column] of table.columns.slice(1).entries()) {
      const expected = stored.rows.reduce((sum, row) => sum + Number(row[i + 1]), 0);
      const result = await sql.query(`SELECT sum("${column.name}") AS total FROM dup`);
      expect([column.name, Number(result.rows[0]?.[0])]).toEqual([column.name, expected]);
    }
  });

  it("cites the column the query read", async () => {
    const result = await sql.query(`SELECT sum("Value_3") AS total FROM dup`, { derive: true });
    expect(Number(result.rows[0]?.[0])).toBe(1000);
    expect(result.derivation?.lineage).toEqual([
      { table: "dup", rows: null, columns: ["Value_3"] },
    ]);
  });

  it("tells the model which header cell each renamed column is", async () => {
    const { sources } = uniqueColumnNames(["name", "value", "value", "Value"]);
    const columns = table.columns.map((column, i) => {
      const source = sources[i];
      return source ? { ...column, source } : column;
    });
    const context = await tableContext({ ...table, columns }, "What is the total of Value?", {
      budgetTokens: 2000,
      sampleRows: 5,
    });
    expect(context.text).toContain(
      '- `value_2` (int64): 10 to 40; renamed: the header\'s second "value" (column 3)',
    );
    expect(context.text).toContain(
      '- `Value_3` (int64): 100 to 700; renamed: the header\'s "Value" (column 4), not "value" (column 2)',
    );
  });
});
