import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { artifactDir } from "../../storage/artifacts.js";
import { sqlString } from "../../tables/duckdb-csv.js";
import { withDuckDb } from "../../tables/duckdb-scan.js";
import { loadTables } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir } from "../support/table-fixtures.js";

/*
 * A Parquet file is checked for what it decodes to before it is written out: a few kilobytes of
 * one repeated string are refused, not turned into a gigabyte of CSV, and nothing stays behind.
 */

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

afterEach(() => {
  delete process.env.TABLEMINDS_PARQUET_MAX_BYTES;
  delete process.env.TABLEMINDS_PARQUET_MAX_CELLS;
});

async function parquet(name: string, select: string): Promise<string> {
  const file = path.join(dir, name);
  await withDuckDb((c) => c.run(`COPY (${select}) TO ${sqlString(file)} (FORMAT parquet)`));
  return file;
}

const csvArtifacts = () =>
  existsSync(artifactDir())
    ? readdirSync(artifactDir()).filter((f) => f.endsWith(".csv")).length
    : 0;

describe("Parquet limits", () => {
  it("refuses a file whose values decode to more text than the limit, leaving nothing", async () => {
    // 200,000 rows of one 200-character string: a small file, 40 MB of text.
    const bomb = await parquet("bomb.parquet", "SELECT repeat('x', 200) AS s FROM range(200000)");
    process.env.TABLEMINDS_PARQUET_MAX_BYTES = String(8 * 1024 * 1024);
    const before = csvArtifacts();
    await expect(loadTables({ path: bomb })).rejects.toThrow(
      /decode to 39 MB of text, more than TABLEMINDS_PARQUET_MAX_BYTES \(8 MB\)/,
    );
    expect(csvArtifacts()).toBe(before);
  });

  it("refuses too many cells from the file's metadata, and reads a file within both", async () => {
    const wide = await parquet("wide.parquet", "SELECT i AS a, i * 2 AS b FROM range(3000) t(i)");
    process.env.TABLEMINDS_PARQUET_MAX_CELLS = "5000";
    await expect(loadTables({ path: wide })).rejects.toThrow(
      /3000 rows of 2 columns \(6000 cells\), more than TABLEMINDS_PARQUET_MAX_CELLS \(5000\)/,
    );
    process.env.TABLEMINDS_PARQUET_MAX_CELLS = "6000";
    const [loaded] = await loadTables({ path: wide });
    expect(loaded?.table.rows).toBe(3000);
  });
});
