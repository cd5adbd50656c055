import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { artifactDir, pruneArtifacts } from "../../storage/artifacts.js";
import { loadTable } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import { ROOT } from "../support/cli.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

let dir: string;
beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

function csv(rows: number): string {
  const lines = ["id,price,city,flag,maybe"];
  for (let i = 0; i < rows; i++) {
    lines.push(
      `${i},${(i * 1.25).toFixed(2)},"C, ${i % 7}",${i % 2 ? "True" : "False"},${i % 5 ? i : ""}`,
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}

describe("the DuckDB path for large clean CSVs", () => {
  it("stores the file's own bytes, with pandas' dtypes, as the Node path would type them", async () => {
    const file = writeFixture(dir, "clean.csv", csv(300));
    const fast = await loadTable({ path: file }, { fastCsvBytes: 1 });
    expect(readFileSync(fast.table.uri)).toEqual(readFileSync(file));
    const slow = await loadTable({ path: file }, { fastCsvBytes: Number.POSITIVE_INFINITY });
    expect(slow.table.uri).not.toBe(fast.table.uri); // canonical: LF line ends
    expect(fast.table.rows).toBe(300);
    expect(fast.table.columns).toEqual(slow.table.columns);
    expect(fast.table.columns.map((c) => c.dtype)).toEqual([
      "int64",
      "float64",
      "object",
      "bool",
      "float64",
    ]);
    expect(await readTable(fast.table)).toEqual(await readTable(slow.table));
  });

  it("leaves a messy file to the full reader, which explains the problem", async () => {
    const ragged = writeFixture(dir, "ragged-big.csv", `${csv(50)}1,2\n`);
    await expect(loadTable({ path: ragged }, { fastCsvBytes: 1 })).rejects.toThrow(
      /ragged rows: line 52 has 2 fields, the header has 5/,
    );
    const dupes = writeFixture(dir, "dupes.csv", "a,a\n1,2\n3,4\n5,6\n");
    const loaded = await loadTable({ path: dupes }, { fastCsvBytes: 1 });
    expect(loaded.table.columns.map((c) => c.name)).toEqual(["a", "a_2"]);
  });
});

describe("reuse of stored tables", () => {
  it("reuses a load in a new process through the index, without reading the file", async () => {
    const file = writeFixture(dir, "reuse.csv", "a,b\n1,2\n");
    const first = await loadTable({ path: file });
    const stamp = new Date("2024-01-02T03:04:05Z");
    await utimes(file, stamp, stamp);
    const again = await loadTable({ path: file });
    expect(again.table.sha256).toBe(first.table.sha256);
    // Same size and mtime, other bytes: only a load that never reads the file keeps the old table.
    await writeFile(file, "a,b\n9,9\n");
    await utimes(file, stamp, stamp);
    const script = path.join(dir, "load.mts");
    writeFileSync(
      script,
      `import { loadTable } from ${JSON.stringify(path.join(ROOT, "tables/load.ts"))};\n` +
        `const { table } = await loadTable({ path: ${JSON.stringify(file)} });\n` +
        "console.log(JSON.stringify(table));\n",
    );
    const { stdout } = await promisify(execFile)(
      path.join(ROOT, "node_modules/.bin/tsx"),
      [script],
      {
        env: { ...process.env },
      },
    );
    expect(JSON.parse(stdout).sha256).toBe(first.table.sha256);
  }, 30_000);

  it("reuses the tables of equal content under another path", async () => {
    const a = writeFixture(dir, "same-a.csv", "k,v\nx,1\n");
    const b = writeFixture(dir, "same-b.csv", "k,v\nx,1\n");
    const first = await loadTable({ path: a }, { name: "same" });
    const second = await loadTable({ path: b }, { name: "same" });
    // The same stored table, cited in the file it was loaded from.
    expect(second.table).toEqual({
      ...first.table,
      origin: { ...first.table.origin, file: "same-b.csv" },
    });
  });
});

describe("pruneArtifacts", () => {
  it("removes what was not used for N days and old temporary files, nothing else", async () => {
    useTempHome();
    const store = artifactDir();
    mkdirSync(path.join(store, "index"), { recursive: true });
    const now = new Date("2030-06-01T00:00:00Z");
    const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
    const put = (name: string, age: Date) => {
      const file = path.join(store, name);
      writeFileSync(file, "x".repeat(10));
      utimesSync(file, age, age);
      return file;
    };
    const hex = (c: string) => c.repeat(64);
    const old = put(`${hex("a")}.csv`, daysAgo(40));
    const oldPickle = put(`${hex("a")}.pandas-1.5.3.pkl`, daysAgo(40));
    const oldIndex = put(`index/${hex("b")}.json`, daysAgo(40));
    const recent = put(`${hex("c")}.csv`, daysAgo(3));
    const staleTmp = put(`${hex("d")}.csv.1234.tmp`, daysAgo(0.5));
    const youngTmp = put(`${hex("e")}.csv.5678.tmp`, new Date(now.getTime() - 10 * 60_000));
    const foreign = put("notes.txt", daysAgo(400));
    const outside = writeFixture(dir, "outside.csv", "keep me");
    utimesSync(outside, daysAgo(400), daysAgo(400));
    symlinkSync(outside, path.join(store, `${hex("f")}.csv`));

    const dry = await pruneArtifacts({ olderThanDays: 30, dryRun: true, now });
    expect(dry.removed.map((f) => f.path).sort()).toEqual(
      [old, oldPickle, staleTmp, oldIndex].sort(),
    );
    expect(existsSync(old)).toBe(true);

    const done = await pruneArtifacts({ olderThanDays: 30, now });
    expect(done.bytes).toBe(40);
    for (const gone of [old, oldPickle, oldIndex, staleTmp]) expect(existsSync(gone)).toBe(false);
    for (const kept of [recent, youngTmp, foreign, outside]) expect(existsSync(kept)).toBe(true);
  });
});
