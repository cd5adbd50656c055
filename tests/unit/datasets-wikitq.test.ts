import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DatasetFormatError, loadDataset } from "../../evals/datasets/index.js";
import { loadWikiTQ, parseWikiTQCsv } from "../../evals/datasets/wikitq.js";
import { loadTable } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";

const ROOT = path.resolve(import.meta.dirname, "../fixtures/datasets/wikitq");
const TSV = path.join(ROOT, "data/pristine-unseen-tables.tsv");
const tsvRows = () =>
  readFileSync(TSV, "utf8")
    .split("\n")
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split("\t"));

/** Python's csv module, told WikiTQ's escaping, as an independent reader of the tables. */
function pythonReads(file: string): string[][] {
  const script =
    "import csv, json, sys\n" +
    "with open(sys.argv[1], newline='', encoding='utf-8') as f:\n" +
    "    print(json.dumps(list(csv.reader(f, escapechar='\\\\', doublequote=False))))";
  const run = spawnSync(process.env.TABLEMINDS_PYTHON || "python3", ["-c", script, file], {
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as string[][];
}

/** A WikiTQ-shaped dataset in a temporary directory, with the fixture's tables. */
function dataset(tsv: string, tagged?: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "tableminds-wikitq-"));
  mkdirSync(path.join(root, "data"));
  cpSync(path.join(ROOT, "csv"), path.join(root, "csv"), { recursive: true });
  writeFileSync(path.join(root, "data/pristine-unseen-tables.tsv"), tsv);
  if (tagged !== undefined) {
    mkdirSync(path.join(root, "tagged/data"), { recursive: true });
    writeFileSync(path.join(root, "tagged/data/pristine-unseen-tables.tagged"), tagged);
  }
  return root;
}
const HEADER = "id\tutterance\tcontext\ttargetValue\n";
const TAGGED_HEADER = "id\tutterance\tcontext\ttargetValue\ttargetCanon\n";

describe("the WikiTQ loader on the 15-question fixture", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("reads the questions in file order with their targets as written", async () => {
    const examples = await loadDataset("wikitq", { path: ROOT });
    const rows = tsvRows();
    expect(examples).toHaveLength(15);
    expect(examples.map((e) => e.id)).toEqual(rows.map((r) => r[0]));
    expect(examples.map((e) => e.question)).toEqual(rows.map((r) => r[1]));
    expect(examples.map((e) => e.gold)).toEqual(rows.map((r) => r[3]));
    expect(examples[10]?.gold).toBe("2004|2005|2006");
  });

  it("adds the canonical targets of the tagged file, one per target", async () => {
    const examples = await loadDataset("wikitq", { path: ROOT });
    expect(examples.every((e) => e.goldCanonical !== undefined)).toBe(true);
    expect(examples[1]?.goldCanonical).toEqual(["100000.0"]);
    expect(examples[3]?.goldCanonical).toEqual(["1995-01-26"]);
    expect(examples[10]?.goldCanonical).toEqual(["2004.0", "2005.0", "2006.0"]);
  });

  it("reads each table as Python's csv module does with WikiTQ's backslash escaping", async () => {
    const examples = await loadDataset("wikitq", { path: ROOT });
    for (const [i, example] of examples.entries()) {
      const source = example.tables[0];
      if (!source || !("data" in source)) throw new Error("expected an inline table");
      const [columns, ...data] = pythonReads(path.join(ROOT, tsvRows()[i]?.[2] ?? ""));
      expect(source.columns).toEqual(columns);
      expect(source.data).toEqual(data);
    }
    const first = examples[0]?.tables[0];
    // An escaped quote inside a cell and a line break inside a header.
    expect(first && "data" in first ? first.data[0]?.[3] : "").toBe(`5h 29' 10"`);
    expect(first && "columns" in first ? first.columns[4] : "").toBe("UCI ProTour\nPoints");
  });

  it("gives tables that load through tables", async () => {
    const examples = await loadDataset("wikitq", { path: ROOT });
    for (const example of examples) {
      const source = example.tables[0];
      if (!source || !("data" in source)) throw new Error("expected an inline table");
      // The dataset's rows as given: the literal reading (an analyst's sets totals apart).
      const { table } = await loadTable(source, { reading: { raw: true } });
      expect(table.rows).toBe(source.data.length);
      expect(table.columns.length).toBe(source.columns.length);
    }
  });

  it("takes the split's TSV file as --data too", async () => {
    const examples = await loadDataset("wikitq", { path: TSV });
    expect(examples.map((e) => e.id)).toEqual(tsvRows().map((r) => r[0]));
  });
});

describe("WikiTQ's TSV escapes and its CSV tables", () => {
  it("unescapes the question and the canonical targets; gold keeps the escapes for the scorer", async () => {
    const root = dataset(
      `${HEADER}q-1\twhat is a\\pb?\\nsay it.\tcsv/203-csv/733.csv\tx\\py|C:\\\\d\n`,
      `${TAGGED_HEADER}q-1\t\t\t\tx\\py|C:\\\\d\n`,
    );
    const [example] = await loadWikiTQ(root);
    expect(example?.question).toBe("what is a|b?\nsay it.");
    expect(example?.gold).toBe("x\\py|C:\\\\d");
    expect(example?.goldCanonical).toEqual(["x|y", "C:\\d"]);
  });

  it("leaves goldCanonical out when there is no tagged file", async () => {
    const root = dataset(`${HEADER}q-1\tq?\tcsv/203-csv/733.csv\tItaly\n`);
    const [example] = await loadWikiTQ(root);
    expect(example).not.toHaveProperty("goldCanonical");
  });

  it("reads one table once for all the questions on it", async () => {
    const root = dataset(
      `${HEADER}q-1\ta?\tcsv/203-csv/733.csv\tx\nq-2\tb?\tcsv/203-csv/733.csv\ty\n`,
    );
    const [a, b] = await loadWikiTQ(root);
    expect(a?.tables[0]).toBe(b?.tables[0]);
  });

  it('parses quoted fields with \\" and \\\\ and raw line breaks', () => {
    expect(parseWikiTQCsv('"A","B\nC"\n"5h 29\' 10\\"","x\\\\y"\n')).toEqual({
      columns: ["A", "B\nC"],
      data: [["5h 29' 10\"", "x\\y"]],
    });
    expect(() => parseWikiTQCsv('"A","B\n')).toThrow(/not closed/);
  });
});

describe("the WikiTQ loader on bad input", () => {
  it("names the file when the header lacks a column (pre-1.0.2 files have none)", async () => {
    const root = dataset("nu-0\tq?\tcsv/203-csv/733.csv\tItaly\n");
    const file = path.join(root, "data/pristine-unseen-tables.tsv");
    await expect(loadWikiTQ(root)).rejects.toThrow(`${file}:1: the header has no "id" column`);
  });

  it("names the line with too few fields", async () => {
    const root = dataset(
      `${HEADER}q-1\ta?\tcsv/203-csv/733.csv\tx\nq-2\tb?\tcsv/203-csv/733.csv\n`,
    );
    const file = path.join(root, "data/pristine-unseen-tables.tsv");
    const error = await loadWikiTQ(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatasetFormatError);
    expect(String((error as Error).message)).toBe(
      `${file}:3: 3 tab-separated fields where the header has 4`,
    );
  });

  it("names the line whose table is missing, and the table", async () => {
    const root = dataset(
      `${HEADER}q-1\ta?\tcsv/203-csv/733.csv\tx\nq-2\tb?\tcsv/209-csv/1.csv\ty\n`,
    );
    await expect(loadWikiTQ(root)).rejects.toThrow(
      `pristine-unseen-tables.tsv:3: its table ${path.join(root, "csv/209-csv/1.csv")} is missing`,
    );
  });

  it("names a table that cannot be parsed", async () => {
    const root = dataset(`${HEADER}q-1\ta?\tcsv/203-csv/733.csv\tx\n`);
    writeFileSync(path.join(root, "csv/203-csv/733.csv"), '"A","B"\n"1","2\n');
    await expect(loadWikiTQ(root)).rejects.toThrow(
      `${path.join(root, "csv/203-csv/733.csv")}: a quoted field is not closed`,
    );
  });

  it("refuses canonical targets that do not pair with the targets, as the evaluator would", async () => {
    const root = dataset(
      `${HEADER}q-1\ta?\tcsv/203-csv/733.csv\tx|y\n`,
      `${TAGGED_HEADER}q-1\t\t\t\tx\n`,
    );
    await expect(loadWikiTQ(root)).rejects.toThrow(/:2: 2 targets but 1 canonical targets/);
  });

  it("refuses a repeated id and a context that is not a table path", async () => {
    const twice = dataset(
      `${HEADER}q-1\ta?\tcsv/203-csv/733.csv\tx\nq-1\tb?\tcsv/203-csv/733.csv\ty\n`,
    );
    await expect(loadWikiTQ(twice)).rejects.toThrow(/:3: id q-1 appears twice/);
    const outside = dataset(`${HEADER}q-1\ta?\t../../etc/passwd\tx\n`);
    await expect(loadWikiTQ(outside)).rejects.toThrow(/:2: context "..\/..\/etc\/passwd"/);
  });

  it("says what it expected when the directory is not WikiTQ", async () => {
    const root = dataset(`${HEADER}`);
    rmSync(path.join(root, "data"), { recursive: true });
    await expect(loadWikiTQ(root)).rejects.toThrow(/no such file; is .* a WikiTableQuestions/);
  });
});
