import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  artifactDir,
  pruneArtifacts,
  putArtifact,
  removingOnFailure,
  tempPathFor,
} from "../../storage/artifacts.js";
import { loadTables } from "../../tables/load.js";
import { indexKey, unusedIndexEntry, writeIndex } from "../../tables/load-index.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

/** A pid no process has any more: one that ran and exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(String(child.stdout));
}

const hex = (c: string) => c.repeat(64);

function put(name: string, text = "x".repeat(10)): string {
  const file = path.join(artifactDir(), name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

function indexFiles(): string[] {
  const dir = path.join(artifactDir(), "index");
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe("prune frees what nothing uses any more, whatever its age", () => {
  it("removes half-written files of writers that are gone and pickles of tables that are gone", async () => {
    useTempHome();
    const table = put(`${hex("a")}.csv`, "a,b\n1,2\n");
    const pickle = put(`${hex("a")}.pandas-2.2.3.signed.pkl`);
    const orphanPickle = put(`${hex("b")}.pandas-2.2.3.signed.pkl`);
    const deadWriter = put(
      path.basename(tempPathFor(`${hex("c")}.csv`)).replace(/pid\d+/, `pid${deadPid()}`),
      "y".repeat(1000),
    );
    // The sandbox's partial pickle, named by the worker that writes it.
    const deadPickle = put(`${hex("a")}.pandas-2.2.3.signed.pkl.pid${deadPid()}.tmp`);
    const liveWriter = put(`${hex("d")}.csv.0b6d.pid${process.ppid}.tmp`);

    const dry = await pruneArtifacts({ olderThanDays: 30, dryRun: true });
    expect(dry.removed.map((f) => f.path).sort()).toEqual(
      [orphanPickle, deadWriter, deadPickle].sort(),
    );
    expect(existsSync(orphanPickle)).toBe(true);

    const done = await pruneArtifacts({ olderThanDays: 30 });
    expect(done.bytes).toBe(1020);
    expect(Object.fromEntries(done.removed.map((f) => [path.basename(f.path), f.why]))).toEqual({
      [path.basename(orphanPickle)]: "its table is gone",
      [path.basename(deadWriter)]: "left by a writer that is gone",
      [path.basename(deadPickle)]: "left by a writer that is gone",
    });
    for (const kept of [table, pickle, liveWriter]) expect(existsSync(kept)).toBe(true);
  });

  it("removes a table's pickle with the table when the table goes for its age", async () => {
    useTempHome();
    const table = put(`${hex("a")}.csv`);
    const pickle = put(`${hex("a")}.pandas-2.2.3.signed.pkl`);
    const old = new Date(Date.now() - 40 * 86_400_000);
    utimesSync(table, old, old);
    const done = await pruneArtifacts({ olderThanDays: 30 });
    expect(done.removed.map((f) => [f.path, f.why])).toEqual([
      [table, "not used for 30 days"],
      [pickle, "its table is gone"],
    ]);
  });

  it("removes index entries naming tables that are gone or written by another loader", async () => {
    useTempHome();
    const file = writeFixture(fixtureDir(), "t.csv", "a,b\n1,2\n");
    const table = (await loadTables({ path: file }))[0]?.table;
    if (!table) throw new Error("t.csv did not load");
    expect(indexFiles()).toHaveLength(2);
    const foreign = indexKey(["foreign"]);
    writeFileSync(
      path.join(artifactDir(), "index", `${foreign}.json`),
      JSON.stringify({ version: 1, tables: [] }),
    );
    const derived = put(`index/${hex("e")}.cells-1.json`, "{}");
    const kept = await pruneArtifacts({ olderThanDays: 30, unusedIndexEntry });
    expect(kept.removed.map((f) => path.basename(f.path))).toEqual([`${foreign}.json`]);

    rmSync(table.uri);
    const done = await pruneArtifacts({ olderThanDays: 30, unusedIndexEntry });
    expect(done.removed).toHaveLength(2);
    expect(done.removed.every((f) => f.why.startsWith("it names a table that is gone"))).toBe(true);
    expect(indexFiles()).toEqual([path.basename(derived)]);
  });

  it("treats an entry as unused when a table it names is being pruned", async () => {
    useTempHome();
    const uri = put(`${hex("f")}.csv`);
    const key = indexKey(["k"]);
    await writeIndex(
      [key],
      [
        {
          table: { id: "table:t", name: "t", uri, sha256: hex("f"), rows: 0, columns: [] },
          warnings: [],
        },
      ],
    );
    const entry = path.join(artifactDir(), "index", `${key}.json`);
    expect(await unusedIndexEntry(entry)).toBe(false);
    expect(await unusedIndexEntry(entry, new Set([uri]))).toBe(true);
  });
});

describe("removingOnFailure", () => {
  it("removes what a failed load added to the store, and only that", async () => {
    useTempHome();
    const before = await putArtifact("a\n1\n", "csv");
    let added = "";
    const failed = removingOnFailure(async () => {
      await putArtifact("a\n1\n", "csv");
      added = (await putArtifact("b\n2\n", "csv")).uri;
      throw new Error("the second sheet is ragged");
    });
    await expect(failed).rejects.toThrow("ragged");
    expect(existsSync(added)).toBe(false);
    expect(existsSync(before.uri)).toBe(true);
    const kept = await removingOnFailure(() => putArtifact("c\n3\n", "csv"));
    expect(existsSync(kept.uri)).toBe(true);
  });
});
