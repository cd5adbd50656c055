import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, renameSync } from "node:fs";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { artifactDir } from "../../storage/artifacts.js";
import { DuckDbTable } from "../../tables/cell-index-duckdb.js";
import { tableContext } from "../../tables/context.js";
import { indexedTable, retrieveCells } from "../../tables/context-retrieval.js";
import { loadTable } from "../../tables/load.js";
import { isLargeTable, LARGE_TABLE_ROWS } from "../../tables/profile.js";
import { countTokens } from "../../tables/tokens.js";
import { useTempHome } from "../support/env.js";

const ROWS = LARGE_TABLE_ROWS + 50_000;
const NEEDLE_ROW = 123_457;

/** A table past the large-table threshold, written by DuckDB straight into the artifact store. */
async function largeTable(): Promise<TableRef> {
  const dir = artifactDir();
  mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, "large.csv.tmp");
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  await connection.run(
    `COPY (SELECT i AS id, ['Oslo','Lima','Kyiv','Pune'][(i % 4) + 1] AS city, ` +
      `CASE WHEN i = ${NEEDLE_ROW} THEN 'Zanzibar Quill' ELSE 'customer ' || (i % 50000) END AS customer, ` +
      `(i % 1000) / 4 AS amount, CASE WHEN i % 3 = 0 THEN 'True' ELSE 'False' END AS flag ` +
      `FROM range(${ROWS}) t(i)) TO '${tmp}' (HEADER, DELIMITER ',')`,
  );
  connection.closeSync();
  instance.closeSync();
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(tmp)) hash.update(chunk as Buffer);
  const sha256 = hash.digest("hex");
  const uri = path.join(dir, `${sha256}.csv`);
  renameSync(tmp, uri);
  return {
    id: "table:large",
    name: "large",
    uri,
    sha256,
    rows: ROWS,
    columns: [
      { name: "id", dtype: "int64" },
      { name: "city", dtype: "object" },
      { name: "customer", dtype: "object" },
      { name: "amount", dtype: "float64" },
      { name: "flag", dtype: "bool" },
    ],
  };
}

let large: TableRef;

beforeAll(async () => {
  useTempHome();
  large = await largeTable();
});

describe("the table context of a large table (DuckDB)", () => {
  it("shows statistics and the row the question names, within the budget", async () => {
    expect(await isLargeTable(large)).toBe(true);
    const context = await tableContext(large, "How much did Zanzibar Quill pay in Kyiv?", {
      budgetTokens: 1500,
    });
    expect(context.view).toBe("retrieved");
    expect(context.tokens).toBeLessThanOrEqual(1500);
    expect(await countTokens(context.text)).toBe(context.tokens);
    expect(context.rows[0]).toBe(NEEDLE_ROW);
    expect(context.text).toContain(`| ${NEEDLE_ROW} | ${NEEDLE_ROW} | Lima | Zanzibar Quill |`);
    expect(context.text).toContain(`Table \`large\` (pandas DataFrame \`large\`): ${ROWS} rows`);
    expect(context.text).toContain("- `id` (int64): 0 to 249999");
    expect(context.text).toMatch(/- `city` \(object\): 4 distinct, most frequent "Oslo" \(62500\)/);
    expect(context.text).toContain("- `flag` (bool): 83334 true, 166666 false");
    expect(context.text).toContain('- `city` = "Kyiv" (62500 rows)');
  });

  it("finds the row again by scanning the file once the loaded table is closed", async () => {
    const indexed = await indexedTable(large);
    expect(indexed.large).toBe(true);
    expect(indexed.rows).toBeInstanceOf(DuckDbTable);
    (indexed.rows as DuckDbTable).close();
    const hits = await retrieveCells(large, "Zanzibar Quill", { k: 1 });
    expect(hits).toEqual([
      expect.objectContaining({ row: NEEDLE_ROW, column: "customer", value: "Zanzibar Quill" }),
    ]);
    // Row 49999 also holds the number in `id`, so it ranks first.
    const numbered = await retrieveCells(large, "customer 49999", { k: 6 });
    expect(numbered[0]?.row).toBe(49_999);
    expect(numbered.filter((hit) => hit.column === "customer").map((hit) => hit.row)).toEqual([
      49_999, 99_999, 149_999, 199_999, 249_999,
    ]);
  });

  it("builds the same index through DuckDB as in Node", async () => {
    const { table } = await loadTable({
      name: "small",
      columns: ["n", "word", "share", "ok"],
      data: Array.from({ length: 400 }, (_, i) => [
        i % 17,
        i % 5 === 0 ? null : `w${i % 23}`,
        i % 7 === 0 ? "" : (i % 13) / 8,
        i % 2 === 0,
      ]),
    });
    for (const maxCells of [10, 1000]) {
      const viaNode = await indexedTable(table, { maxCells, large: false });
      const viaDuck = await indexedTable(table, { maxCells, large: true });
      expect(viaDuck.index).toEqual(viaNode.index);
      const question = "Which rows have word w7 and n 3?";
      const inNode = await retrieveCells(table, question, { k: 5, maxCells, large: false });
      const inDuck = await retrieveCells(table, question, { k: 5, maxCells, large: true });
      expect(inDuck).toEqual(inNode);
      expect(inNode.length).toBe(5);
    }
  });
});

describe("the cell index of a large table, kept on disk", () => {
  it("is written beside the artifacts, and a new process would read it instead of rebuilding", async () => {
    const built = await indexedTable(large);
    const { readDerived } = await import("../../tables/derived-cache.js");
    const { TableIndexSchema, DEFAULT_MAX_CELLS } = await import("../../tables/cell-index.js");
    const kept = await readDerived(
      "cells-1",
      [large.sha256, large.columns, DEFAULT_MAX_CELLS],
      TableIndexSchema,
    );
    expect(kept).toEqual(built.index);
    // A changed column list is another table as far as the index goes: nothing is kept for it.
    const renamed = large.columns.map((c, i) => (i === 0 ? { ...c, name: "ident" } : c));
    expect(
      await readDerived("cells-1", [large.sha256, renamed, DEFAULT_MAX_CELLS], TableIndexSchema),
    ).toBeNull();
  });
});
