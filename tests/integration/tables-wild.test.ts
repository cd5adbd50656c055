/**
 * Structures of public statistics files that broke the reader (issue 34), each in a file of our
 * own that reproduces it.
 */
import { utils, write } from "@e965/xlsx";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TableRef, TableRefSchema } from "../../blackboard/schemas.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { tableContexts } from "../../tables/context.js";
import { loadTables } from "../../tables/load.js";
import { readTable } from "../../tables/read.js";
import type { ReadingOptions } from "../../tables/reading.js";
import { useTempHome } from "../support/env.js";
import { fixtureDir, writeFixture } from "../support/table-fixtures.js";
import { judgeRun } from "../support/verdicts.js";
import { electionCsv, manySheetRows, structuralCsv } from "../support/wild-files.js";

let dir: string;

beforeAll(() => {
  useTempHome();
  dir = fixtureDir();
});

afterAll(async () => {
  await closeSandboxes();
});

async function load(file: string, reading: ReadingOptions = {}) {
  const loaded = await loadTables({ path: file }, { reading });
  for (const { table } of loaded) expect(TableRefSchema.parse(table)).toEqual(table);
  return { tables: loaded.map((l) => l.table), warnings: loaded.flatMap((l) => l.warnings) };
}

function named(tables: readonly TableRef[], name: string): TableRef {
  const table = tables.find((t) => t.name === name);
  if (!table) throw new Error(`no table ${name} among ${tables.map((t) => t.name).join(", ")}`);
  return table;
}

/** A statistics database export: title lines, two header lines, the rule and copyright footer. */
const PRICES = [
  "Statistik-Tabelle: 61111-0002",
  "Verbraucherpreisindex: Deutschland,;;;",
  "Monate;;;",
  ";;;",
  ";;Verbraucherpreisindex;Veränderung zum Vorjahresmonat",
  "Jahr;Monat;2020=100;in (%)",
  "2023;Januar;114,3;8,7",
  "2023;Februar;115,2;8,7",
  "2023;März;116,1;7,4",
  "2024;Januar;117,6;2,9",
  "2024;Februar;118,1;2,5",
  "2024;März;118,6;2,2",
  "__________",
  "Verbraucherpreisindex: Basis 2020 = 100",
  "(C)opyright Statistisches Amt, 2025 | Stand: 29.11.2025 / 10:12:55",
].join("\r\n");

describe("footers of statistics database exports", () => {
  it("keeps the rule and copyright lines as notes instead of refusing the file", async () => {
    const file = writeFixture(dir, "preise.csv", PRICES);
    const { tables } = await load(file);
    const prices = named(tables, "preise");
    expect(prices.rows).toBe(6);
    expect(prices.reading?.notes?.map((note) => note.row)).toEqual([13, 14, 15]);
    expect(prices.reading?.notes?.[0]?.text).toBe("__________");
  });

  it("reads it literally too: the footer is left out with a warning, the title skipped as asked", async () => {
    const file = writeFixture(dir, "preise-raw.csv", PRICES);
    const { tables, warnings } = await load(file, { raw: true, skipRows: 5 });
    const prices = named(tables, "preise-raw".replace("-", "_"));
    expect(prices.rows).toBe(6);
    expect((await readTable(prices)).columns).toEqual(["Jahr", "Monat", "2020=100", "in (%)"]);
    expect(warnings.join("\n")).toContain(
      'lines 13-15 left out as a footer below the table (fewer fields than the header\'s 4): "__________", "Verbraucherpreisindex: Basis 2020 = 100"',
    );
  });

  it("still refuses a cut row of numbers at the end, and a ragged line with rows after it", async () => {
    const cut = writeFixture(dir, "cut.csv", "a,b,c\n1,2,3\n4,5,6\n7,8\n");
    await expect(load(cut, { raw: true })).rejects.toThrow(/line 4 has 2 fields, the header has 3/);
    const inside = writeFixture(dir, "inside.csv", "a,b,c\n1,2,3\nnote here\n4,5,6\n7,8,9\n");
    await expect(load(inside, { raw: true })).rejects.toThrow(/line 3 has 1 field/);
  });
});

describe("an election results file", () => {
  it("keeps all three header rows and finds the state and national rows by their codes and sums", async () => {
    const election = electionCsv();
    const file = writeFixture(dir, "wahl.csv", election.text);
    const { tables, warnings } = await load(file);
    const wahl = named(tables, "wahl");
    expect(wahl.rows).toBe(election.seats);
    const names = wahl.columns.map((c) => c.name);
    expect(names.slice(0, 4)).toEqual(["group", "Nr", "Gebiet", "gehört zu"]);
    expect(names).toContain("Beta-Union / Zweitstimmen / Endgültig");
    expect(warnings.join("\n")).not.toMatch(/has no name|repeats the name/);
    expect(wahl.reading?.totals?.rows).toEqual([10, 13, 14]);
    // The obvious sum over the seats is the national figure; the totals hold it once.
    const data = await readTable(wahl);
    const at = data.columns.indexOf("Beta-Union / Zweitstimmen / Endgültig");
    const sum = data.rows.reduce((total, row) => total + Number(row[at]), 0);
    expect(sum).toBe(election.betaSecondNational);
    const totals = await readTable(named(tables, "wahl_totals"));
    expect(totals.rows.map((row) => row[totals.columns.indexOf("Gebiet")])).toEqual([
      "Küstenland",
      "Bergland",
      "Bundesgebiet",
    ]);
    expect(data.rows.map((row) => row[0])).toEqual([
      "Küstenland",
      "Küstenland",
      "Küstenland",
      "Bergland",
      "Bergland",
    ]);
  });

  it("does not take rows for totals when a code column's parents do not add up", async () => {
    const election = electionCsv();
    // Seat 3's votes changed: Küstenland no longer adds up, Bergland and the nation still do.
    const broken = election.text.replace("3;Seeland Ost;1;2800", "3;Seeland Ost;1;9999");
    const file = writeFixture(dir, "wahl-broken.csv", broken);
    const wahl = named((await load(file)).tables, "wahl_broken");
    expect(wahl.reading?.totals?.rows).not.toContain(10);
  });
});

describe("state rows inside their blocks, in a language no rule knows", () => {
  it("finds each block's closing row by the counts it adds up, its rates among the block's", async () => {
    const structural = structuralCsv();
    const file = writeFixture(dir, "struktur.csv", structural.text);
    const { tables } = await load(file);
    const table = named(tables, "struktur");
    expect(table.rows).toBe(structural.rows);
    expect(table.reading?.totals?.rows).toEqual([5, 9]);
    const data = await readTable(table);
    const at = data.columns.indexOf("Bevölkerung (in 1000)");
    const sum = data.rows.reduce((total, row) => total + Number(row[at]), 0);
    expect(sum).toBeCloseTo(structural.population, 6);
  });

  it("keeps a block whose last row adds up nothing as data", async () => {
    const structural = structuralCsv();
    // Bergland's row no longer adds up its towns and people: it is a fourth constituency.
    const plain = structural.text.replace(
      /Bergland;902;Land gesamthaft;80;738,3/,
      "Bergland;902;Land gesamthaft;70;700,0",
    );
    const file = writeFixture(dir, "struktur-plain.csv", plain);
    const table = named((await load(file)).tables, "struktur_plain");
    expect(table.reading?.totals?.rows ?? []).not.toContain(9);
  });

  it("reads a total's label behind a year in the first column", async () => {
    const text = [
      "Jahr;Land;Theater;Museen",
      "2019;Alpenland;478,7;219,6",
      "2019;Seeland;301,2;101,4",
      "2019;Insgesamt;1002,5;480,1",
      "2020;Alpenland;480,1;220,3",
      "2020;Seeland;299,9;99,8",
      "2020;Insgesamt;1010,4;470,2",
    ].join("\n");
    const file = writeFixture(dir, "kultur.csv", text);
    const table = named((await load(file)).tables, "kultur");
    expect(table.reading?.totals?.rows).toEqual([4, 7]);
    expect(table.rows).toBe(4);
  });
});

describe("a row numbering the columns", () => {
  it.each([
    ["above the header", ["Spalte;;1;2;3", "Land;Kreis;Gemeinden;Fläche;Einwohner"], 1],
    ["under the header", ["Land;Kreis;Gemeinden;Fläche;Einwohner", "(1);(2);(3);(4);(5)"], 2],
  ])("is a note %s, not a header level", async (_where, head, line) => {
    const rows = [
      "Nord;Alpha;12;210,5;88000",
      "Nord;Beta;7;99,1;41000",
      "Süd;Gamma;30;402,2;120000",
    ];
    const file = writeFixture(dir, `numbers-${line}.csv`, [...head, ...rows].join("\n"));
    const table = named((await load(file)).tables, `numbers_${line}`);
    expect(table.columns.map((c) => c.name)).toEqual([
      "Land",
      "Kreis",
      "Gemeinden",
      "Fläche",
      "Einwohner",
    ]);
    expect(table.rows).toBe(3);
    expect(table.reading?.notes?.map((note) => note.row)).toEqual([line]);
  });
});

describe("dates and placeholders of a statistics export", () => {
  const text = [
    "Datum;Ort;Besucher;Umsatz",
    "03.01.2024;Nord;1200;3,5",
    "15.02.2024;Süd;.;4,1",
    "28.02.2024;Nord;-;x",
    "0000-00-00;Süd;800;2,2",
    "11.03.2024;Nord;1500;...",
  ].join("\n");

  it("hands the code day-first dates as datetimes and flags a date that is none", async () => {
    const file = writeFixture(dir, "besuche.csv", text);
    const { tables } = await load(file);
    const table = named(tables, "besuche");
    const datum = table.columns.find((c) => c.name === "Datum");
    expect(datum?.dtype).toBe("datetime64[ns]");
    expect(datum?.reading).toContain('no such date: "0000-00-00" read as missing');
    const sandbox = await getSandbox("local");
    const ran = await sandbox.execute({
      code: "print(df['Datum'].dt.month.tolist(), str(df['Datum'].dtype))",
      tables: [table],
    });
    expect(ran.error).toBeNull();
    expect(ran.stdout.trim()).toBe("[1.0, 2.0, 2.0, nan, 3.0] datetime64[ns]");
    // The worker's cached frame stays as loaded: the same file without the dates' dtype.
    const columns = table.columns.map((c) => (c.name === "Datum" ? { ...c, dtype: "object" } : c));
    const plain = await sandbox.execute({
      code: "print(str(df['Datum'].dtype), df['Datum'].iloc[0])",
      tables: [{ ...table, columns }],
    });
    expect(plain.stdout.trim()).toBe("object 2024-01-03");
    // The text is kept for citations.
    expect((await readTable(table)).rows[0]?.[0]).toBe("2024-01-03");
  });

  it("reads the placeholders among numbers as missing, saying what each usually means", async () => {
    const file = writeFixture(dir, "besuche-zahlen.csv", text);
    const table = named((await load(file)).tables, "besuche_zahlen");
    const visitors = table.columns.find((c) => c.name === "Besucher");
    expect(visitors?.dtype).toBe("float64");
    expect(visitors?.reading).toContain(
      '"." (not available or kept secret) and "-" (often nil, exactly zero) read as missing',
    );
    const sales = table.columns.find((c) => c.name === "Umsatz");
    expect(sales?.dtype).toBe("float64");
    expect(sales?.reading).toContain('"x" (withheld: confidential or not meaningful)');
    // A text column keeps "x" as a value.
    const letters = writeFixture(dir, "letters.csv", "code,n\nx,1\ny,2\nz,3\n");
    const plain = named((await load(letters)).tables, "letters");
    expect((await readTable(plain)).rows.map((row) => row[0])).toEqual(["x", "y", "z"]);
  });
});

describe("JSON an API returns", () => {
  it("reads the one list of records inside an envelope, its nested lists as child tables", async () => {
    const body = {
      count: 2,
      prizes: [
        {
          year: "2023",
          category: "physics",
          laureates: [
            { id: "1", surname: "A" },
            { id: "2", surname: "B" },
          ],
        },
        { year: "2022", category: "peace" },
      ],
    };
    const file = writeFixture(dir, "prizes.json", JSON.stringify(body));
    const { tables } = await load(file);
    const prizes = named(tables, "prizes");
    expect(prizes.rows).toBe(2);
    expect(prizes.origin).toMatchObject({ format: "json", pointer: "/prizes" });
    expect(named(tables, "prizes_laureates").rows).toBe(2);
    const two = writeFixture(dir, "two.json", JSON.stringify({ a: [{ x: 1 }], b: [{ y: 2 }] }));
    await expect(load(two)).rejects.toThrow(/expected a list of records/);
  });
});

describe("the checker and total rows", () => {
  const column = "Beta-Union / Zweitstimmen / Endgültig";
  let tables: TableRef[];

  beforeAll(async () => {
    const file = writeFixture(dir, "wahlkreise.csv", electionCsv().text);
    tables = (await load(file)).tables;
  });

  async function judge(question: string, code: string) {
    const { result, final, verdict } = await judgeRun(
      await getSandbox("local"),
      question,
      code,
      tables,
    );
    expect(result.ok, result.error?.message).toBe(true);
    return { answer: final, verdict, issues: verdict.issues.join("\n") };
  }

  const question = "How many second votes did the Beta-Union get nationwide?";
  const national = String(electionCsv().betaSecondNational);

  it("refuses a sum over the data and its total rows together", async () => {
    const code = `print(int(pd.concat([wahlkreise, wahlkreise_totals])[${JSON.stringify(column)}].sum()))`;
    const { answer, verdict, issues } = await judge(question, code);
    expect(answer).toBe(String(3 * Number(national)));
    expect(verdict.pass).toBe(false);
    expect(issues).toMatch(
      /adds up 3 total rows of wahlkreise_totals \("Küstenland", "Bergland", "Bundesgebiet"\) with 5 rows/,
    );
  });

  it("refuses a sum over total rows one of which adds up the others", async () => {
    const { verdict, issues } = await judge(
      question,
      `print(int(wahlkreise_totals[${JSON.stringify(column)}].sum()))`,
    );
    expect(verdict.pass).toBe(false);
    expect(issues).toMatch(/one of which adds up the others/);
  });

  it("passes the sum over the seats, the national row read, and two states the question names", async () => {
    const seats = await judge(question, `print(int(wahlkreise[${JSON.stringify(column)}].sum()))`);
    expect(seats.answer).toBe(national);
    expect(seats.verdict.pass, seats.issues).toBe(true);
    const read = await judge(
      question,
      `t = wahlkreise_totals\nprint(int(t.loc[t['Gebiet'] == 'Bundesgebiet', ${JSON.stringify(column)}].iloc[0]))`,
    );
    expect(read.answer).toBe(national);
    expect(read.verdict.pass, read.issues).toBe(true);
    const both = await judge(
      "How many second votes did the Beta-Union get in Küstenland and Bergland together?",
      `t = wahlkreise_totals\nprint(int(t.loc[t['Gebiet'].isin(['Küstenland', 'Bergland']), ${JSON.stringify(column)}].sum()))`,
    );
    expect(both.answer).toBe(national);
    expect(both.verdict.pass, both.issues).toBe(true);
  });
});

describe("a workbook of many sheets from a statistics office", () => {
  let tables: TableRef[];

  beforeAll(async () => {
    const { sheets } = manySheetRows();
    const book = utils.book_new();
    for (const sheet of sheets)
      utils.book_append_sheet(book, utils.aoa_to_sheet(sheet.rows), sheet.name);
    const file = writeFixture(
      dir,
      "trade.xlsx",
      write(book, { type: "buffer", bookType: "xlsx" }) as Buffer,
    );
    tables = (await load(file)).tables;
  });

  it("sets the contents and notes sheets aside and says so", () => {
    const data = tables.filter((t) => !t.name.endsWith("_totals"));
    expect(data).toHaveLength(9);
    expect(tables.some((t) => /contents|notes/i.test(t.name))).toBe(false);
    expect(data[0]?.reading?.asideSheets?.map((s) => [s.sheet, s.kind])).toEqual([
      ["Contents", "contents"],
      ["Notes", "notes"],
    ]);
  });

  it("fills each region down its block and keeps the whole country's block as totals", async () => {
    const first = named(tables, "trade_table_1");
    expect(first.rows).toBe(12);
    const rows = (await readTable(first)).rows;
    expect(rows.map((row) => row[0])).toEqual(
      manySheetRows().regions.flatMap((region) => [region, region, region]),
    );
    expect(first.columns[0]?.reading).toContain("filled down: 10 empty cells");
    expect(first.reading?.totals?.labels).toEqual([
      "United Kingdom",
      "United Kingdom",
      "United Kingdom",
    ]);
  });

  it("shows every data table's column names within the budget, before titles and notes", async () => {
    const data = tables.filter((t) => !t.name.endsWith("_totals"));
    const contexts = await tableContexts(data, "What were London's imports of fuel in Q2?", {
      budgetTokens: 3000,
    });
    expect(contexts.reduce((sum, c) => sum + c.tokens, 0)).toBeLessThanOrEqual(3000);
    for (const context of contexts) {
      for (const name of ["Region", "Flow", "Q1", "Q4"])
        expect(context.text).toContain(`\`${name}\``);
    }
    expect(contexts[0]?.text).toContain('"Contents" (contents), "Notes" (notes)');
  });
});

describe("a budget file with province header rows", () => {
  it("keeps the three header rows as paths, the province dimension off the label columns", async () => {
    const provinces = ["Eastern Cape", "Free State", "Gauteng"];
    const text = [
      ["Province", "", ...provinces.flatMap((p) => [p, "", "", ""])],
      ["", "", ...provinces.flatMap(() => ["Budget", "", "Actual", ""])],
      [
        "Programme",
        "Code",
        ...provinces.flatMap(() => ["2023/24", "2024/25", "2023/24", "2024/25"]),
      ],
      ["Administration", "P1", ...Array.from({ length: 12 }, (_, i) => String(1000 + i))],
      ["Education", "P2", ...Array.from({ length: 12 }, (_, i) => String(2000 + i))],
      ["Health", "P3", ...Array.from({ length: 12 }, (_, i) => String(3000 + i))],
    ]
      .map((row) => row.join(";"))
      .join("\n");
    const file = writeFixture(dir, "budget.csv", text);
    const { tables, warnings } = await load(file);
    const budget = named(tables, "budget");
    const names = budget.columns.map((c) => c.name);
    expect(names.slice(0, 4)).toEqual([
      "Programme",
      "Code",
      "Eastern Cape / Budget / 2023/24",
      "Eastern Cape / Budget / 2024/25",
    ]);
    expect(names.at(-1)).toBe("Gauteng / Actual / 2024/25");
    expect(budget.reading?.notes ?? []).toEqual([]);
    expect(warnings.join("\n")).not.toMatch(/has no name/);
  });
});

describe("the checker and a total the table states", () => {
  it("refuses a sum over the rows where the table's own total row says otherwise", async () => {
    const text = ["Region,Sales", "North,100", "South,250", "East,75", "Total,480"].join("\n");
    const tables = (await load(writeFixture(dir, "stated.csv", text))).tables;
    const sandbox = await getSandbox("local");
    const question = "What were the total sales?";
    const summed = await judgeRun(sandbox, question, "print(int(stated['Sales'].sum()))", tables);
    expect(summed.final).toBe("425");
    expect(summed.verdict.pass).toBe(false);
    expect(summed.verdict.issues.join("\n")).toMatch(
      /states its own total of `Sales` for these rows, 480 \(stated\.csv line 5, "Total"\); the rows add up to 425/,
    );
    const read = await judgeRun(
      sandbox,
      question,
      "t = stated_totals\nprint(int(t['Sales'].iloc[0]))",
      tables,
    );
    expect(read.final).toBe("480");
    expect(read.verdict.pass, read.verdict.issues.join("\n")).toBe(true);
    // A question that leaves something out on purpose takes the rows' sum.
    const listed = await judgeRun(
      sandbox,
      "What were the sales of the listed regions, without the others?",
      "print(int(stated['Sales'].sum()))",
      tables,
    );
    expect(listed.verdict.issues.join("\n")).not.toMatch(/states its own total/);
  });
});
