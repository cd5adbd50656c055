import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type TableRef, TableRefSchema } from "../../blackboard/schemas.js";
import { cellAddress, rowAddress } from "../../tables/cell-address.js";
import { loadTables, TableLoadError } from "../../tables/load.js";
import { profileTable } from "../../tables/profile.js";
import { readTable } from "../../tables/read.js";
import type { ReadingOptions } from "../../tables/reading.js";
import { useTempHome } from "../support/env.js";
import { FINANCE, FINANCE_COLUMNS, financeWorkbookBytes } from "../support/messy-workbook.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

async function load(file: string, reading: ReadingOptions = {}): Promise<TableRef[]> {
  const loaded = await loadTables({ path: file }, { reading });
  for (const { table } of loaded) expect(TableRefSchema.parse(table)).toEqual(table);
  return loaded.map((l) => l.table);
}

function named(tables: readonly TableRef[], name: string): TableRef {
  const table = tables.find((t) => t.name === name);
  if (!table) throw new Error(`no table ${name} among ${tables.map((t) => t.name).join(", ")}`);
  return table;
}

const SALES = [
  "Sales by region 2024",
  "",
  "Region,Sales",
  "North,100",
  "South,250",
  "Total,350",
  "",
  "Source: internal ledger",
  "",
].join("\n");

describe("reading a text file as an analyst does", () => {
  it("leaves the title, the total row and the note out of the data, and says so", async () => {
    const file = writeFixture(dir, "sales.csv", SALES);
    const tables = await load(file);
    const sales = named(tables, "sales");
    expect(sales.rows).toBe(2);
    expect(sales.columns.map((c) => c.name)).toEqual(["Region", "Sales"]);
    const data = await readTable(sales);
    expect(data.rows.map((row) => row[1])).toEqual(["100", "250"]);
    expect(sales.reading?.title).toEqual(["Sales by region 2024"]);
    expect(sales.reading?.totals).toMatchObject({ rows: [6], table: "sales_totals" });
    expect(sales.reading?.notes).toEqual([{ row: 8, text: "Source: internal ledger" }]);
    const totals = named(tables, "sales_totals");
    expect((await readTable(totals)).rows).toEqual([["Total", "350"]]);
    // Citations name the file's own lines.
    expect(cellAddress(sales, 1, "Sales")).toBe("sales.csv line 5, column Sales");
    expect(rowAddress(totals, 0)).toBe("sales.csv line 6");
    const context = await profileTable(sales);
    expect(context).toMatch(/Title above the table: "Sales by region 2024"/);
    expect(context).toMatch(/Total rows left out of the data \(line 6: "Total"\)/);
    expect(context).toMatch(/DataFrame `sales_totals`/);
    expect(context).toMatch(/line 8: "Source: internal ledger"/);
  });

  it("--raw keeps the literal reading: the title line makes the rows ragged", async () => {
    const file = writeFixture(dir, "sales-raw.csv", SALES);
    await expect(load(file, { raw: true })).rejects.toThrow(TableLoadError);
    await expect(load(file, { raw: true })).rejects.toThrow(
      /ragged rows: line 3 has 2 fields, the header has 1/,
    );
  });

  it("reads decimal commas and day-first dates of a European CSV, keeping the text for citations", async () => {
    const file = writeFixture(
      dir,
      "preise.csv",
      "Produkt;Preis;Datum\nA;500,00;05.03.2024\nB;1.234,50;17.04.2024\nC;12,5;01.12.2023\n",
    );
    const [table] = await load(file);
    if (!table) throw new Error("no table");
    const price = table.columns.find((c) => c.name === "Preis");
    expect(price?.dtype).toBe("float64");
    const data = await readTable(table);
    expect(data.rows.map((row) => Number(row[1]))).toEqual([500, 1234.5, 12.5]);
    expect(data.rows.map((row) => row[2])).toEqual(["2024-03-05", "2024-04-17", "2023-12-01"]);
    expect(table.reading?.text).toBeDefined();
    const text = readFileSync(table.reading?.text?.uri ?? "", "utf8");
    expect(text).toContain("1.234,50");
    expect(await profileTable(table)).toMatch(/`Preis` \(float64\): [^\n]*500,00/);
  });

  it("the locale setting decides what the values cannot", async () => {
    const file = writeFixture(dir, "ambiguous.csv", "item,amount\na,1.500\nb,2.250\n");
    const [plain] = await load(file);
    const [german] = await load(file, { locale: "de" });
    expect(Number((await readTable(plain as TableRef)).rows[0]?.[1])).toBe(1.5);
    expect(Number((await readTable(german as TableRef)).rows[0]?.[1])).toBe(1500);
  });

  it("a title and notes padded to the table's width, as spreadsheets export them", async () => {
    const padded = SALES.split("\n")
      .map((line) => (line && !line.includes(",") ? `${line},` : line))
      .join("\n");
    const tables = await load(writeFixture(dir, "exported.csv", padded));
    const exported = named(tables, "exported");
    expect(exported.rows).toBe(2);
    expect(exported.reading?.title).toEqual(["Sales by region 2024"]);
    expect(exported.reading?.notes?.map((n) => n.text)).toEqual(["Source: internal ledger"]);
    expect(named(tables, "exported_totals").rows).toBe(1);
  });

  it("a clean file is read exactly as the literal reading reads it", async () => {
    const file = writeFixture(dir, "clean.csv", "nation,gold\nUSA,39\nChina,38\n");
    const [read] = await load(file);
    const [raw] = await load(file, { raw: true });
    expect(read?.reading).toBeUndefined();
    expect(read?.sha256).toBe(raw?.sha256);
    expect(read?.columns).toEqual(raw?.columns);
    expect(read?.origin).toEqual(raw?.origin);
  });
});

describe("TableBench's two-row headers", () => {
  // The first table of TableBench's test set with repeated header names, as the set has it.
  const tablebench = path.resolve(
    import.meta.dirname,
    "../fixtures/datasets/tablebench/tablebench_two_row_header.jsonl",
  );

  function firstDuplicateHeaderTable(): { columns: string[]; data: unknown[][] } {
    for (const line of readFileSync(tablebench, "utf8").split("\n")) {
      if (!line.trim()) continue;
      const record = JSON.parse(line) as { table: { columns: string[]; data: unknown[][] } };
      const { columns } = record.table;
      if (new Set(columns).size < columns.length) return record.table;
    }
    throw new Error("no TableBench table with repeated header names");
  }

  it("flattens the repeated names over the sub-header row into header paths", async () => {
    const table = firstDuplicateHeaderTable();
    const [ref] = (await loadTables({ name: "career", ...table })).map((l) => l.table);
    if (!ref) throw new Error("no table");
    const names = ref.columns.map((c) => c.name);
    expect(names).toContain("League / Apps");
    expect(names).toContain("League / Division");
    expect(names).toContain("Club");
    expect(names).not.toContain("League_2");
    expect(ref.rows).toBeLessThan(table.data.length);
    // Row 0 of the DataFrame is the first row after the sub-header: `data[1]`, the 2nd row passed.
    expect(rowAddress(ref, 0)).toBe("row 2 of table career");
    const raw = (await loadTables({ name: "career", ...table }, { reading: { raw: true } }))[0];
    expect(raw?.table.columns.map((c) => c.name)).toContain("League_2");
  });

  it("--header-rows 1 takes only the first row as the header", async () => {
    const table = firstDuplicateHeaderTable();
    const [ref] = (
      await loadTables({ name: "career", ...table }, { reading: { headerRows: 1 } })
    ).map((l) => l.table);
    expect(ref?.columns.map((c) => c.name)).not.toContain("League / Apps");
  });
});

describe("the finance workbook of a new user", () => {
  async function finance(reading: ReadingOptions = {}): Promise<TableRef[]> {
    const file = path.join(dir, "finance.xlsx");
    writeFileSync(file, financeWorkbookBytes());
    return load(file, reading);
  }

  it("is read as five regions with header paths, dollar amounts as numbers, the total and notes apart", async () => {
    const tables = await finance();
    expect(tables.map((t) => t.name).sort()).toEqual(["finance", "finance_totals"]);
    const table = named(tables, "finance");
    expect(table.columns.map((c) => c.name)).toEqual(FINANCE_COLUMNS);
    expect(table.columns[3]).toMatchObject({
      path: ["Revenue", "Q3"],
      dtype: "int64",
      unit: "USD",
    });
    const data = await readTable(table);
    expect(data.rows.map((row) => row[0])).toEqual([...FINANCE.regions]);
    const q1 = data.rows.map((row) => Number(row[1]));
    expect(q1).toEqual(FINANCE.amounts.map((a) => a[0]));
    expect(table.reading?.title).toEqual([FINANCE.title]);
    expect(table.reading?.totals?.rows).toEqual([11]);
    expect(table.reading?.notes?.map((n) => n.text)).toEqual([...FINANCE.notes]);
    expect(table.reading?.hidden).toMatchObject({ rows: [8], columns: ["J"], sheets: ["Lookup"] });
    expect(table.columns.find((c) => c.name === "Costs / Q4")?.formula).toBe(true);
    // The first data row is sheet row 5; West (row 3) is sheet row 9, past the hidden row 8.
    expect(cellAddress(table, 0, "Revenue / Q1")).toBe("Results!B5");
    expect(cellAddress(table, 3, "Costs / Q4")).toBe("Results!I9");
    const text = readFileSync(table.reading?.text?.uri ?? "", "utf8");
    expect(text).toContain('"$1,250,400"');
    const context = await profileTable(table);
    for (const expected of [
      "Regional results FY2024",
      "`Revenue / Q3`",
      "finance_totals",
      "Source: regional ledgers",
      'Hidden sheet not loaded: "Lookup"',
    ]) {
      expect(context).toContain(expected);
    }
  });

  it("--raw reads it as before: one header row, the second header row and the total as data", async () => {
    const [table] = await finance({ raw: true });
    if (!table) throw new Error("no table");
    expect(table.columns.map((c) => c.name).slice(0, 3)).toEqual(["Region", "Revenue", "column_3"]);
    const first = table.columns.map((c) => c.name);
    const data = await readTable(table);
    expect(data.rows[0]?.slice(1, 3)).toEqual(["Q1", "Q2"]);
    expect(data.rows.map((row) => row[0])).toContain("Total");
    expect(first).not.toContain("Revenue / Q1");
  });

  it("--sheet loads the hidden sheet when asked for it by name", async () => {
    const tables = await finance({ sheet: FINANCE.hiddenSheet });
    expect(tables.map((t) => t.name)).toEqual(["finance"]);
    await expect(finance({ sheet: "Nope" })).rejects.toThrow(/has no sheet "Nope"/);
  });
});

describe("nested JSON records", () => {
  const PEOPLE = [
    {
      name: "Ana",
      address: { city: "Lisbon", zip: "1000-001" },
      salary: { amount: "€52.000,00", currency: "EUR" },
      tags: ["a", "b"],
      orders: [{ sku: "X1", qty: 2 }],
    },
    {
      name: "Ben",
      address: { city: "Porto", zip: "4000-002" },
      salary: { amount: "€48.500,50", currency: "EUR" },
      tags: [],
      orders: [
        { sku: "Y2", qty: 1 },
        { sku: "Z3", qty: 5 },
      ],
    },
  ];

  it("flattens objects to dotted columns and makes lists of records a child table", async () => {
    const file = writeFixture(dir, "people.json", JSON.stringify(PEOPLE));
    const tables = await load(file);
    const people = named(tables, "people");
    const names = people.columns.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(["address.city", "salary.amount"]));
    const data = await readTable(people);
    const city = names.indexOf("address.city");
    expect(data.rows.map((row) => row[city])).toEqual(["Lisbon", "Porto"]);
    const amount = names.indexOf("salary.amount");
    expect(data.rows.map((row) => Number(row[amount]))).toEqual([52000, 48500.5]);
    const orders = named(tables, "people_orders");
    expect(orders.rows).toBe(3);
    expect(people.reading?.children).toEqual([{ column: "orders", table: "people_orders" }]);
    expect(await profileTable(people)).toMatch(
      /Lists of records in `orders` are the rows of DataFrame `people_orders`/,
    );
    const [raw] = await load(file, { raw: true });
    expect(raw?.columns.map((c) => c.name)).toContain("address");
  });
});
