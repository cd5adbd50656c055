import { truncateSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { loadTable } from "../../tables/load.js";
import {
  EXAMPLES_PER_COLUMN,
  formatProfile,
  isLargeTable,
  LARGE_TABLE_BYTES,
  LARGE_TABLE_ROWS,
  profileTable,
  summarizeInNode,
} from "../../tables/profile.js";
import { summarizeWithDuckDb } from "../../tables/profile-duckdb.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

const ROWS = 300_000;
const CITIES = ["Oslo", "Lima", "Kyiv"];

interface Generated {
  file: string;
  low: string;
  high: string;
  missingScores: number;
  trueFlags: number;
}

/** A table past the large-table threshold, with the facts its profile must show. */
function generateTable(): Generated {
  const lines = ["id,score,flag,city,note"];
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  let missingScores = 0;
  let trueFlags = 0;
  for (let i = 0; i < ROWS; i++) {
    const missing = i % 1000 === 999;
    // A scrambled walk over -500.00 .. 499.99, so the extremes sit mid-file.
    const score = ((i * 7919) % 100_000) / 100 - 500;
    if (missing) missingScores++;
    else {
      low = Math.min(low, score);
      high = Math.max(high, score);
    }
    const flag = i % 3 === 0;
    if (flag) trueFlags++;
    // A note value that shows up only at the very end must still be counted.
    const note = i === ROWS - 1 ? "last" : "same";
    lines.push(
      `${i},${missing ? "" : score},${flag ? "True" : "False"},${CITIES[i % 3]}_${i % 5},${note}`,
    );
  }
  const file = writeFixture(fixtureDir(), "large.csv", `${lines.join("\n")}\n`);
  return { file, low: String(low), high: String(high), missingScores, trueFlags };
}

describe("profiling a large table with DuckDB", () => {
  let facts: Generated;
  let table: TableRef;

  beforeAll(async () => {
    useTempHome();
    facts = generateTable();
    table = (await loadTable({ path: facts.file })).table;
  });

  it("is chosen past the row threshold and reports counts, ranges and examples", async () => {
    expect(table.rows).toBeGreaterThan(LARGE_TABLE_ROWS);
    expect(await isLargeTable(table)).toBe(true);
    const lines = (await profileTable(table, { sampleRows: 2 })).split("\n");
    expect(lines[0]).toBe(`Table \`large\` (pandas DataFrame \`large\`): ${ROWS} rows, 5 columns`);
    expect(lines).toContain(`- \`id\` (int64): 0 to ${ROWS - 1}`);
    expect(lines).toContain(
      `- \`score\` (float64): ${facts.low} to ${facts.high}; ${facts.missingScores} missing`,
    );
    expect(lines).toContain(
      `- \`flag\` (bool): ${facts.trueFlags} true, ${ROWS - facts.trueFlags} false`,
    );
    expect(lines).toContain('- `city` (object): 15 distinct, e.g. "Oslo_0", "Lima_1", "Kyiv_2"');
    expect(lines).toContain('- `note` (object): 2 distinct, e.g. "same", "last"');
    expect(lines).toContain(`First 2 of ${ROWS} rows:`);
    expect(lines.slice(-5)).toEqual([
      "| id | score | flag | city | note |",
      "| --- | --- | --- | --- | --- |",
      "| 0 | -500 | True | Oslo_0 | same |",
      "| 1 | -420.81 | False | Lima_1 | same |",
      "| ... | ... | ... | ... | ... |",
    ]);
  });

  it("writes the same profile as the Node path", async () => {
    const opts = { sampleRows: 4, examples: EXAMPLES_PER_COLUMN };
    const viaDuckDb = formatProfile(table, await summarizeWithDuckDb(table, opts), opts);
    const viaNode = formatProfile(table, await summarizeInNode(table, 4), opts);
    expect(viaDuckDb).toBe(viaNode);
  });
});

describe("the DuckDB summary of awkward cells", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("agrees with the Node path on missing spellings, spaces, quotes, ties and line breaks", async () => {
    const { table } = await loadTable({
      name: "awkward",
      columns: ["n", "f", "b", "s", "none", "text"],
      data: [
        [" 5", "1.5e-1", "True", "a", "", "a b"],
        ["3", "NA", "false", "NA", "NA", " lead"],
        ["-2", "inf", "TRUE", 'b,"q"', null, "multi\nline"],
        ["-2.0", "-0.5", "false", "", "null", "x".repeat(60)],
        ["5.0", "0.3", "true", "a", "None", "a | pipe"],
      ],
    });
    for (const sampleRows of [0, 2, 5]) {
      const opts = { sampleRows, maxWidth: 12, examples: EXAMPLES_PER_COLUMN };
      expect(formatProfile(table, await summarizeWithDuckDb(table, opts), opts)).toBe(
        formatProfile(table, await summarizeInNode(table, sampleRows), opts),
      );
    }
    const summary = await summarizeWithDuckDb(table, { sampleRows: 1, examples: 3 });
    expect(summary.columns.map((c) => c.values)).toEqual([
      { kind: "range", low: "-2", high: "5" },
      { kind: "range", low: "-0.5", high: "inf" },
      { kind: "booleans", trueCount: 3, falseCount: 2 },
      { kind: "examples", distinct: 2, examples: ["a", 'b,"q"'] },
      { kind: "no-values" },
      { kind: "examples", distinct: 5, examples: ["a b", " lead", "multi\nline"] },
    ]);
  });

  it("counts a table with few rows but a big artifact as large", async () => {
    const file = writeFixture(fixtureDir(), "wide.csv", "");
    const ref = { ...(await loadTable({ name: "w", columns: ["a"], data: [[1]] })).table };
    expect(await isLargeTable(ref)).toBe(false);
    truncateSync(file, LARGE_TABLE_BYTES + 1);
    expect(await isLargeTable({ ...ref, uri: file })).toBe(true);
  });

  it("rejects an artifact whose bytes changed", async () => {
    const { table } = await loadTable({ name: "tampered", columns: ["a"], data: [[1]] });
    const forged = { ...table, sha256: "0".repeat(64) };
    await expect(summarizeWithDuckDb(forged, { sampleRows: 1, examples: 3 })).rejects.toThrow(
      /does not match sha256/,
    );
  });
});
