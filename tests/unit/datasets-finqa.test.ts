import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadFinQA } from "../../evals/datasets/finqa.js";
import { DatasetFormatError, loadDataset } from "../../evals/datasets/index.js";
import { loadTable } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";

const DIR = path.resolve(import.meta.dirname, "../fixtures/datasets/finqa");
const FILE = path.join(DIR, "dataset/test.json");
interface Raw {
  id: string;
  pre_text: string[];
  post_text: string[];
  table: string[][];
  qa: { question: string; exe_ans: number | string; answer: string };
}
const upstream = () => JSON.parse(readFileSync(FILE, "utf8")) as Raw[];

const tmp = mkdtempSync(path.join(os.tmpdir(), "tableminds-finqa-"));
let n = 0;
function file(text: string): string {
  const name = path.join(tmp, `test-${++n}.json`);
  writeFileSync(name, text);
  return name;
}
const record = (over: Partial<Raw> = {}) => ({
  id: "X/2020/page_1.pdf-1",
  pre_text: ["before ."],
  post_text: ["after ."],
  table: [
    ["", "2019", "2020"],
    ["revenue", "1", "2"],
  ],
  qa: { question: "what is the change?", exe_ans: 1, answer: "1" },
  ...over,
});

describe("the FinQA loader on the 14-record fixture of upstream's test.json", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("reads the records in file order with exe_ans as gold", async () => {
    const examples = await loadDataset("finqa", { path: FILE });
    const raw = upstream();
    expect(examples).toHaveLength(14);
    expect(examples.map((e) => e.id)).toEqual(raw.map((r) => r.id));
    expect(examples.map((e) => e.gold)).toEqual(raw.map((r) => String(r.qa.exe_ans)));
    expect(examples.find((e) => e.id === "ABMD/2005/page_29.pdf-2")?.gold).toBe("yes");
    expect(examples.find((e) => e.id === "PM/2017/page_32.pdf-1")?.gold).toBe("-0.17588");
  });

  it("puts the question first and the report's text after it", async () => {
    const examples = await loadDataset("finqa", { path: FILE });
    for (const [i, r] of upstream().entries()) {
      const question = examples[i]?.question ?? "";
      expect(question.startsWith(`${r.qa.question}\n`)).toBe(true);
      if (r.pre_text[0]) expect(question).toContain(r.pre_text[0]);
      if (r.post_text.at(-1)) expect(question).toContain(r.post_text.at(-1));
    }
  });

  it("takes the first row as header (naming empty cells) and the rest as rows", async () => {
    const examples = await loadDataset("finqa", { path: FILE });
    for (const [i, r] of upstream().entries()) {
      const source = examples[i]?.tables[0];
      if (!source || !("data" in source)) throw new Error("expected an inline table");
      expect(source.data).toEqual(r.table.slice(1));
      expect(source.columns.length).toBe(r.table[0]?.length);
      // The dataset's rows as given: the literal reading (an analyst's sets totals apart).
      const { table } = await loadTable(source, { reading: { raw: true } });
      expect(table.rows).toBe(r.table.length - 1);
    }
    const first = examples[0]?.tables[0];
    expect(first && "columns" in first ? first.columns : []).toEqual(["column 1", "amount"]);
  });

  it("finds test.json in a checkout given as --data", async () => {
    const examples = await loadDataset("finqa", { path: DIR });
    expect(examples).toHaveLength(14);
  });
});

describe("the FinQA loader on bad input", () => {
  it("names the line and index of a record without a question", async () => {
    const text = JSON.stringify([record(), record({ qa: { exe_ans: 1 } as Raw["qa"] })], null, 4);
    const name = file(text);
    const line = text.split("\n").findIndex((l, i) => i > 1 && l === "    {") + 1;
    const error = await loadFinQA(name).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatasetFormatError);
    expect(String((error as Error).message)).toMatch(
      new RegExp(`^${name}:${line}: record 1: qa.question:`),
    );
  });

  it("refuses a record with no answer to score against", async () => {
    const name = file(JSON.stringify([record({ qa: { question: "q?" } as Raw["qa"] })]));
    await expect(loadFinQA(name)).rejects.toThrow(/record 0: qa: neither exe_ans nor answer/);
  });

  it("names the line of a JSON syntax error, and refuses what is not an array", async () => {
    await expect(loadFinQA(file('[\n  {"id": "a"},\n  {"id": }\n]'))).rejects.toThrow(
      /:3: not valid JSON/,
    );
    await expect(loadFinQA(file('{"id": "a"}'))).rejects.toThrow(/:1: expected an array/);
    await expect(loadFinQA(file("[]"))).rejects.toThrow(/no questions/);
  });

  it("refuses a repeated id", async () => {
    const name = file(JSON.stringify([record(), record()], null, 2));
    await expect(loadFinQA(name)).rejects.toThrow(/id X\/2020\/page_1.pdf-1 appears twice/);
  });

  it("pads short rows and names repeated header cells apart", async () => {
    const table = [
      ["", "2020", "2020"],
      ["revenue", "1"],
    ];
    const [example] = await loadFinQA(file(JSON.stringify([record({ table })])));
    const source = example?.tables[0];
    if (!source || !("data" in source)) throw new Error("expected an inline table");
    expect(source.columns).toEqual(["column 1", "2020", "2020 (2)"]);
    expect(source.data).toEqual([["revenue", "1", ""]]);
  });
});
