import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DatasetFormatError, loadDataset, SHARED_TABLEBENCH } from "../../evals/datasets/index.js";
import { loadTableBench } from "../../evals/datasets/tablebench.js";
import { loadTable, loadTables } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";

const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);
const rawRows = () =>
  readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const tmp = mkdtempSync(path.join(os.tmpdir(), "tableminds-tablebench-"));
let n = 0;
function jsonl(lines: string[]): string {
  const file = path.join(tmp, `bad-${++n}.jsonl`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}
const row = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: "q1",
    qtype: "NumericalReasoning",
    qsubtype: "Counting",
    table: { columns: ["a", "b"], data: [[1, "x"]] },
    question: "How many?",
    answer: "1",
    ...over,
  });

describe("the TableBench loader on the 40-question fixture", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("reads every line in file order, with its type, subtype and gold", async () => {
    const examples = await loadDataset("tablebench", { path: SAMPLE });
    const raw = rawRows();
    expect(examples).toHaveLength(40);
    expect(examples.map((e) => e.id)).toEqual(raw.map((r) => r.id));
    expect(examples.map((e) => e.gold)).toEqual(raw.map((r) => r.answer));
    expect(examples.map((e) => e.category)).toEqual(raw.map((r) => r.qtype));
    expect(examples.map((e) => e.subcategory)).toEqual(raw.map((r) => r.qsubtype));
    expect(new Set(examples.map((e) => e.dataset))).toEqual(new Set(["tablebench"]));
  });

  it("is stratified over the four types and covers several chart types", async () => {
    const examples = await loadDataset("tablebench", { path: SAMPLE });
    const count = (qtype: string) => examples.filter((e) => e.category === qtype).length;
    expect(count("NumericalReasoning")).toBe(16);
    expect(count("DataAnalysis")).toBe(14);
    expect(count("FactChecking")).toBe(4);
    expect(count("Visualization")).toBe(6);
    expect(new Set(examples.map((e) => e.subcategory)).size).toBe(18);
    const charts = examples.filter((e) => e.category === "Visualization");
    expect(new Set(charts.map((e) => e.chartType))).toEqual(
      new Set(["bar", "pie", "area", "line", "radar"]),
    );
    expect(charts.every((e) => e.gold.startsWith("y_references"))).toBe(true);
    expect(examples.filter((e) => e.chartType !== undefined)).toHaveLength(6);
  });

  it("gives tables that load through tables with their rows and columns", async () => {
    const examples = await loadDataset("tablebench", { path: SAMPLE });
    const raw = rawRows() as { table: { columns: string[]; data: unknown[][] } }[];
    for (const [i, example] of examples.entries()) {
      const source = example.tables[0];
      if (!source || !("data" in source)) throw new Error("expected an inline table");
      const { table } = await loadTable(source, { reading: { raw: true } });
      expect(table.rows).toBe(raw[i]?.table.data.length);
      expect(table.columns.length).toBe(raw[i]?.table.columns.length);
      // Read as an analyst would, header rows and totals leave the data but no row is lost.
      const read = await loadTables(source);
      const kept = read.reduce((sum, { table: t }) => sum + t.rows, 0);
      const reading = read[0]?.table.reading;
      const aside =
        (reading?.headerRows ?? []).length +
        (reading?.notes ?? []).length +
        (reading?.repeatedHeaders ?? []).length;
      expect(kept + aside).toBe(raw[i]?.table.data.length);
    }
  });

  it("stops after `limit` questions, keeping the order", async () => {
    const all = await loadDataset("tablebench", { path: SAMPLE });
    const five = await loadDataset("tablebench", { path: SAMPLE, limit: 5 });
    expect(five.map((e) => e.id)).toEqual(all.slice(0, 5).map((e) => e.id));
    await expect(loadDataset("tablebench", { path: SAMPLE, limit: -1 })).rejects.toThrow(/limit/);
  });

  it.skipIf(!existsSync(SHARED_TABLEBENCH))(
    // Only beside ../shared: `tableminds data pull tablebench` fetches the set elsewhere.
    "reads the shared copy: 886 questions, one id each (the repeated upstream id gets #2)",
    async () => {
      const examples = await loadTableBench(SHARED_TABLEBENCH);
      expect(examples).toHaveLength(886);
      expect(new Set(examples.map((e) => e.id)).size).toBe(886);
      const twice = examples.filter((e) => e.id.startsWith("e067a40ab6736ac5a004d9dc69f2d5c0"));
      expect(twice.map((e) => [e.id, e.subcategory])).toEqual([
        ["e067a40ab6736ac5a004d9dc69f2d5c0", "Aggregation"],
        ["e067a40ab6736ac5a004d9dc69f2d5c0#2", "ArithmeticCalculation"],
      ]);
    },
  );
});

describe("the TableBench loader on bad input", () => {
  it("names the file and line of a line that is not JSON", async () => {
    const file = jsonl([row(), row({ id: "q2" }), "{not json"]);
    const error = await loadTableBench(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatasetFormatError);
    expect(String((error as Error).message)).toMatch(new RegExp(`^${file}:3: not JSON`));
  });

  it("names the field that is missing or of the wrong type", async () => {
    const missing = jsonl([row(), JSON.stringify({ ...JSON.parse(row()), question: undefined })]);
    await expect(loadTableBench(missing)).rejects.toThrow(`${missing}:2: question:`);
    const wrong = jsonl([row({ table: { columns: ["a"], data: "rows" } })]);
    await expect(loadTableBench(wrong)).rejects.toThrow(`${wrong}:1: table.data:`);
  });

  it("refuses a row with a cell count that does not match the columns", async () => {
    const file = jsonl([row({ table: { columns: ["a", "b"], data: [[1, 2], [3]] } })]);
    await expect(loadTableBench(file)).rejects.toThrow(`${file}:1: table.data.1 has 1 cells for 2`);
  });

  it("refuses an empty file, and skips blank lines", async () => {
    await expect(loadTableBench(jsonl(["", "  "]))).rejects.toThrow(/no questions/);
    const examples = await loadTableBench(jsonl(["", row(), "", row({ id: "q2" })]));
    expect(examples.map((e) => e.id)).toEqual(["q1", "q2"]);
  });

  it("gives a repeated id a suffix, so that every question keeps an id of its own", async () => {
    const examples = await loadTableBench(
      jsonl([row(), row({ id: "q2" }), row({ qsubtype: "Other" }), row()]),
    );
    expect(examples.map((e) => e.id)).toEqual(["q1", "q2", "q1#2", "q1#3"]);
    expect(examples[2]?.subcategory).toBe("Other");
  });
});
