import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DatasetFormatError, loadDataset } from "../../evals/datasets/index.js";
import { loadTabFact, parseTabFactCsv } from "../../evals/datasets/tabfact.js";
import { loadTable } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";

const ROOT = path.resolve(import.meta.dirname, "../fixtures/datasets/tabfact");
const STATEMENTS = path.join(ROOT, "tokenized_data/test_examples.json");
type Entry = [string[], number[], string];
const upstream = () => JSON.parse(readFileSync(STATEMENTS, "utf8")) as Record<string, Entry>;

/** A copy of the fixture whose statements file is `text`. */
function withStatements(text: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "tableminds-tabfact-"));
  cpSync(ROOT, root, { recursive: true });
  writeFileSync(path.join(root, "tokenized_data/test_examples.json"), text);
  return root;
}
const lineOf = (text: string, needle: string) =>
  text.split("\n").findIndex((line) => line.includes(needle)) + 1;

describe("the TabFact loader on the 3-table fixture", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("makes one yes/no question per statement, in file order, with the label as gold", async () => {
    const examples = await loadDataset("tabfact", { path: ROOT });
    const expected = Object.entries(upstream()).flatMap(([table, [statements, labels, caption]]) =>
      statements.map((statement, i) => ({
        id: `${table}#${i}`,
        gold: String(labels[i]),
        statement,
        caption,
      })),
    );
    expect(examples).toHaveLength(30);
    expect(examples.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(examples.map((e) => e.gold)).toEqual(expected.map((e) => e.gold));
    expect(new Set(examples.map((e) => e.gold))).toEqual(new Set(["0", "1"]));
    for (const [i, example] of examples.entries()) {
      expect(example.question).toContain(`Statement: ${expected[i]?.statement}.`);
      expect(example.question).toContain(`the table "${expected[i]?.caption}"`);
      expect(example.question).toMatch(/Answer yes or no\.$/);
    }
  });

  it("reads the '#'-separated tables, which load through tables", async () => {
    const examples = await loadDataset("tabfact", { path: ROOT });
    const lines = readFileSync(path.join(ROOT, "data/all_csv/2-1570274-4.html.csv"), "utf8")
      .trim()
      .split(/\r?\n/);
    const first = examples[0]?.tables[0];
    if (!first || !("data" in first)) throw new Error("expected an inline table");
    expect(first.columns).toEqual(lines[0]?.split("#"));
    expect(first.data).toEqual(lines.slice(1).map((line) => line.split("#")));
    for (const example of examples) {
      const source = example.tables[0];
      if (!source || !("data" in source)) throw new Error("expected an inline table");
      // The dataset's rows as given: the literal reading (an analyst's sets totals apart).
      const { table } = await loadTable(source, { reading: { raw: true } });
      expect(table.rows).toBe(source.data.length);
    }
  });

  it("takes a statements file as --data too", async () => {
    const examples = await loadDataset("tabfact", { path: STATEMENTS });
    expect(examples).toHaveLength(30);
  });
});

describe("the TabFact loader on bad input", () => {
  it("names the line of a table whose labels do not pair with its statements", async () => {
    const entries = upstream();
    const second = Object.keys(entries)[1] ?? "";
    const entry = entries[second];
    if (entry) entry[1] = entry[1].slice(1);
    const text = JSON.stringify(entries, null, 2);
    const root = withStatements(text);
    const error = await loadTabFact(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatasetFormatError);
    expect(String((error as Error).message)).toBe(
      `${path.join(root, "tokenized_data/test_examples.json")}:${lineOf(text, `"${second}"`)}: ` +
        `${second}: record: as many labels as statements expected`,
    );
  });

  it("names the line of a label that is neither 0 nor 1", async () => {
    const text =
      '{\n  "2-1570274-4.html.csv": [["a"], [1], "c"],\n  "2-1145226-5.html.csv": [["a"], [2], "c"]\n}';
    await expect(loadTabFact(withStatements(text))).rejects.toThrow(
      /test_examples\.json:3: 2-1145226-5\.html\.csv: 1\.0:/,
    );
  });

  it("names the line of a JSON syntax error", async () => {
    const text = '{\n  "2-1570274-4.html.csv": [["a"], [1], "c"],\n  oops\n}';
    await expect(loadTabFact(withStatements(text))).rejects.toThrow(
      /test_examples\.json:3: not valid JSON/,
    );
  });

  it("names the statements' line when a table is missing", async () => {
    const text =
      '{\n  "2-1570274-4.html.csv": [["a"], [1], "c"],\n  "9-9-9.html.csv": [["a"], [1], "c"]\n}';
    await expect(loadTabFact(withStatements(text))).rejects.toThrow(
      /test_examples\.json:3: its table .*all_csv\/9-9-9\.html\.csv is missing/,
    );
  });

  it("refuses a table id that is not a file name", async () => {
    const text = '{\n  "../../secret.csv": [["a"], [1], "c"]\n}';
    await expect(loadTabFact(withStatements(text))).rejects.toThrow(/:2: \.\.\/\.\.\/secret\.csv:/);
  });

  it("names the table file and line of a row with the wrong cell count", () => {
    expect(() => parseTabFactCsv("a#b#c\n1#2#3\n\n4#5\n", "t.csv")).toThrow(
      "t.csv:4: 2 cells for 3 columns",
    );
    expect(parseTabFactCsv("a#b\n1#2\n\n3#4\n")).toEqual({
      columns: ["a", "b"],
      data: [
        ["1", "2"],
        ["3", "4"],
      ],
    });
  });
});
