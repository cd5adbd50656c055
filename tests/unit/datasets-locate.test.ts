import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { lineFinder, topLevelOffsets } from "../../evals/datasets/format.js";
import {
  DatasetNotFoundError,
  datasetHome,
  findDataset,
  loadDataset,
  locateDataset,
  PULLED_ENTRY,
  SHARED_TABLEBENCH,
} from "../../evals/datasets/index.js";
import { useTempHome } from "../support/env.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/datasets");
const SAMPLE = path.join(FIXTURES, "tablebench/tablebench_sample40.jsonl");

/** A TableBench file of the sample's first `n` lines. */
function firstLines(n: number, file: string): string {
  const lines = readFileSync(SAMPLE, "utf8").split("\n").slice(0, n);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

describe("where a dataset is read from", () => {
  let home: string;
  beforeEach(() => {
    home = useTempHome();
  });

  it("keeps pulled data in $TABLEMINDS_HOME/datasets/<name>", () => {
    expect(datasetHome()).toBe(path.join(home, "datasets"));
    expect(datasetHome("wikitq")).toBe(path.join(home, "datasets", "wikitq"));
  });

  it("prefers --data, then the pulled copy, then (TableBench only) the shared copy", async () => {
    const pulled = path.join(datasetHome("tablebench"), PULLED_ENTRY.tablebench);
    mkdirSync(path.dirname(pulled), { recursive: true });
    firstLines(3, pulled);
    const explicit = firstLines(2, path.join(home, "two.jsonl"));
    expect(await loadDataset("tablebench", { path: explicit })).toHaveLength(2);
    expect(locateDataset("tablebench")).toEqual({ path: pulled, origin: "pulled" });
    expect(await loadDataset("tablebench")).toHaveLength(3);
  });

  it.skipIf(!existsSync(SHARED_TABLEBENCH))(
    "falls back to ../shared for TableBench when nothing was pulled",
    () => {
      expect(locateDataset("tablebench")).toEqual({
        path: path.normalize(SHARED_TABLEBENCH),
        origin: "shared",
      });
    },
  );

  it("finds a pulled WikiTQ, TabFact and FinQA in their homes", async () => {
    copyDir("wikitq", path.join(datasetHome("wikitq"), PULLED_ENTRY.wikitq));
    copyDir("tabfact", path.join(datasetHome("tabfact"), PULLED_ENTRY.tabfact));
    mkdirSync(datasetHome("finqa"), { recursive: true });
    copyFileSync(
      path.join(FIXTURES, "finqa/dataset/test.json"),
      path.join(datasetHome("finqa"), PULLED_ENTRY.finqa),
    );
    expect(await loadDataset("wikitq")).toHaveLength(15);
    expect(await loadDataset("tabfact")).toHaveLength(30);
    expect(await loadDataset("finqa")).toHaveLength(14);
    expect(findDataset("wikitq")?.origin).toBe("pulled");
  });

  it("says to pull the dataset or pass --data when there is no copy", async () => {
    expect(findDataset("wikitq")).toBeNull();
    const error = await loadDataset("wikitq").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatasetNotFoundError);
    const message = String((error as Error).message);
    expect(message).toContain(path.join(home, "datasets", "wikitq", "WikiTableQuestions"));
    expect(message).toContain("tableminds data pull wikitq");
    expect(message).toContain("--data PATH");
  });

  it("refuses a --data path that does not exist, and an unknown dataset", async () => {
    await expect(loadDataset("finqa", { path: path.join(home, "nope.json") })).rejects.toThrow(
      /--data .*nope\.json: no such file or directory/,
    );
    await expect(loadDataset("spider")).rejects.toThrow(
      'unknown dataset "spider"; known: tablebench, wikitq, tabfact, finqa',
    );
  });
});

function copyDir(name: string, to: string): void {
  cpSync(path.join(FIXTURES, name), to, { recursive: true });
}

describe("line numbers of JSON records", () => {
  it("finds where each top-level element or member starts, past strings with brackets", () => {
    const text = '[\n  {"a": "x]", "b": [1, 2]},\n  "s,\\"}",\n  3\n]';
    const lineAt = lineFinder(text);
    expect(topLevelOffsets(text).map(lineAt)).toEqual([2, 3, 4]);
    const object = '{\n  "k1": [1, {"x": "{"}],\n\n  "k2": {}\n}';
    expect(topLevelOffsets(object).map(lineFinder(object))).toEqual([2, 4]);
    expect(topLevelOffsets("[]")).toEqual([]);
  });
});
