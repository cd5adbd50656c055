import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef, Verdict } from "../../blackboard/schemas.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { loadTables } from "../../tables/load.js";
import { useTempHome } from "../support/env.js";
import { judgeRun } from "../support/verdicts.js";

/*
 * Does the code answer the question? Each wrong case is a mistake a capable model makes: the
 * code runs and its result moves with the data, but it answers another question. Each runs in
 * the real local sandbox (its result, derivation and lineage) and is judged by the rules. Each
 * wrong case has a right neighbour over the same table that must still pass.
 */

let sandbox: LocalSandbox;
const tables: Record<string, TableRef> = {};

const SALES = {
  columns: ["region", "product", "units", "revenue"],
  data: [
    ["North", "Widget", 120, 2400],
    ["South", "Widget", 80, 1600],
    ["East", "Gadget", 45, 2250],
    ["South", "Gadget", 30, 1500],
    ["West", "Widget", 95, 1900],
    ["North", "Gadget", 60, 3000],
    ["South", "Gizmo", 25, 1250],
    ["East", "Widget", 70, 1400],
  ],
};
const STAFF = {
  columns: ["name", "department", "salary"],
  data: [
    ["Ana", "Sales", 52000],
    ["Ben", "Sales", 48000],
    ["Carla", "IT", 91000],
    ["Dev", "IT", 87000],
    ["Eve", "HR", 45000],
    ["Finn", "IT", 120000],
    ["Gus", "HR", 47000],
    ["Hana", "Sales", 51000],
    ["Ivo", "IT", 64000],
  ],
};
const CITIES = {
  columns: ["city", "year", "population"],
  data: [
    ["Lisbon", 2000, 564000],
    ["Lisbon", 2010, 547000],
    ["Lisbon", 2020, 545000],
    ["Porto", 2000, 263000],
    ["Porto", 2010, 237000],
    ["Porto", 2020, 232000],
    ["Braga", 2000, 164000],
    ["Braga", 2010, 181000],
    ["Braga", 2020, 193000],
  ],
};
const BUDGET = {
  columns: ["item", "cost"],
  data: [
    ["Rent", 30000],
    ["Staff", 38886],
    ["Supplies", 6000],
  ],
};
const SHARES = {
  columns: ["team", "wins", "games"],
  data: [
    ["Reds", 9, 38],
    ["Blues", 21, 38],
    ["Greens", 14, 38],
  ],
};

beforeAll(async () => {
  useTempHome();
  sandbox = await LocalSandbox.start({ interpreters: 1 });
  const sources = { sales: SALES, staff: STAFF, cities: CITIES, budget: BUDGET, shares: SHARES };
  for (const [name, table] of Object.entries(sources)) {
    const [loaded] = await loadTables({ name: "df", ...table });
    if (!loaded) throw new Error(`no table ${name}`);
    tables[name] = loaded.table;
  }
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
});

async function judge(
  table: string,
  question: string,
  code: string,
  answer: string,
): Promise<Verdict> {
  const ref = tables[table];
  if (!ref) throw new Error(`no table ${table}`);
  const { result, verdict } = await judgeRun(sandbox, question, code, [ref], answer);
  expect(result.ok, result.error?.message).toBe(true);
  return verdict;
}

function failed(verdict: Verdict, aspect?: RegExp): void {
  expect(verdict.pass, JSON.stringify(verdict, null, 1)).toBe(false);
  if (aspect)
    expect(`${verdict.issues.join("\n")}\n${verdict.alignment?.summary ?? ""}`).toMatch(aspect);
}

function passed(verdict: Verdict): void {
  expect(verdict.pass, JSON.stringify(verdict, null, 1)).toBe(true);
}

describe("columns: the measure the question names is the one the result depends on", () => {
  it("refuses the revenue total for a question about units", async () => {
    const v = await judge(
      "sales",
      "How many units were sold in total?",
      "result = df['revenue'].sum()",
      "17300",
    );
    failed(v, /depends on `revenue`, not on `units`/);
    expect(v.alignment?.status).toBe("conflicted");
  });
  it("passes the units total", async () => {
    const v = await judge(
      "sales",
      "How many units were sold in total?",
      "result = df['units'].sum()",
      "525",
    );
    passed(v);
    expect(v.alignment?.summary).toMatch(/`units`/);
  });
});

describe("rows: the rows the question names are the rows the result came from", () => {
  it("refuses a total over every region for 'the South region'", async () => {
    const v = await judge(
      "sales",
      "What was the revenue for the South region?",
      "result = df['revenue'].sum()",
      "15300",
    );
    failed(v, /does not name.*region "south"/);
  });
  it("passes the South total", async () => {
    const code = "result = df[df['region'] == 'South']['revenue'].sum()";
    passed(await judge("sales", "What was the revenue for the South region?", code, "4350"));
  });
  it("refuses a lookup that takes the row after the one named", async () => {
    const code =
      "i = df.index[(df['city'] == 'Porto') & (df['year'] == 2010)][0]\nresult = df.loc[i + 1, 'population']";
    failed(
      await judge("cities", "What was the population of Porto in 2010?", code, "232000"),
      /does not name/,
    );
  });
  it("passes the lookup of the row named", async () => {
    const code =
      "result = df.loc[(df['city'] == 'Porto') & (df['year'] == 2010), 'population'].iloc[0]";
    passed(await judge("cities", "What was the population of Porto in 2010?", code, "237000"));
  });
});

describe("rows: a bound the question states is the bound the code applies", () => {
  const question = "What is the average revenue of the sales with more than 50 units?";
  it("refuses a mean over a stricter bound than the one asked", async () => {
    const code = "result = df[df['units'] > 90]['revenue'].mean()";
    failed(
      await judge("sales", question, code, "2150"),
      /over the rows the question names .* is 2060, not 2150/,
    );
  });
  it("passes the mean over the rows the bound picks", async () => {
    const code = "result = df[df['units'] > 50]['revenue'].mean()";
    passed(await judge("sales", question, code, "2060"));
  });
});

describe("operation: the aggregation asked is the one the code performs", () => {
  it("refuses the mean when the median is asked", async () => {
    const v = await judge(
      "staff",
      "What is the median salary?",
      "result = df['salary'].mean()",
      "67222.22",
    );
    failed(v, /computes the mean; the question asks for the median/);
  });
  it("passes the median", async () => {
    passed(
      await judge("staff", "What is the median salary?", "result = df['salary'].median()", "52000"),
    );
  });
  it("refuses the lowest when the highest is asked (a flipped sort)", async () => {
    const code = "result = df.sort_values('salary').iloc[0]['name']";
    failed(
      await judge("staff", "Who has the highest salary?", code, "Eve"),
      /lowest; the question asks for the highest/,
    );
  });
  it("passes the highest", async () => {
    const code = "result = df.sort_values('salary', ascending=False).iloc[0]['name']";
    passed(await judge("staff", "Who has the highest salary?", code, "Finn"));
  });
});

describe("cardinality: as many items as the question asks", () => {
  it("refuses three names for 'which two'", async () => {
    const code = "result = df.nlargest(3, 'salary')['name'].tolist()";
    failed(
      await judge("staff", "Which two employees earn the most?", code, "Finn, Carla, Dev"),
      /asks for 2 items; the answer gives 3/,
    );
  });
  it("passes two names", async () => {
    const code = "result = df.nlargest(2, 'salary')['name'].tolist()";
    passed(await judge("staff", "Which two employees earn the most?", code, "Finn, Carla"));
  });
});

describe("scale and percent: a number is compared after its scale", () => {
  const total = "result = df['cost'].sum()";
  it("refuses '$74,886 thousand' for 74886", async () => {
    failed(await judge("budget", "What is the total cost?", total, "$74,886 thousand"));
  });
  it("passes '$74.9k' and '$74,886' for 74886", async () => {
    passed(await judge("budget", "What is the total cost?", total, "$74.9k"));
    passed(await judge("budget", "What is the total cost?", total, "$74,886"));
  });
  const share =
    "reds = df[df['team'] == 'Reds']\nresult = reds['wins'].iloc[0] / reds['games'].iloc[0]";
  it("refuses '0.24%' for the fraction 0.2368", async () => {
    failed(
      await judge("shares", "What percentage of their games did the Reds win?", share, "0.24%"),
    );
  });
  it("passes '23.68%' for the fraction 0.2368", async () => {
    passed(
      await judge("shares", "What percentage of their games did the Reds win?", share, "23.68%"),
    );
  });
});

describe("lookups: one row that matches every value named, a cell the code read", () => {
  const question = "What was the population of Porto in 2010?";
  it("refuses another year's cell after code that read only the column names", async () => {
    failed(await judge("cities", question, "print(df.columns.tolist())", "263000"));
  });
  it("refuses a literal in the code", async () => {
    failed(await judge("cities", question, "result = 237000", "237000"));
  });
  it("passes the cell read by printing the rows", async () => {
    passed(await judge("cities", question, "print(df[df['city'] == 'Porto'])", "237000"));
  });
});

describe("results as printed", () => {
  it("reads a printed list as its items", async () => {
    const code = "top = df.nlargest(2, 'salary')['name'].tolist()\nprint(top)";
    passed(await judge("staff", "Which two employees earn the most?", code, "Finn, Carla"));
  });
});

describe("derivation: a perturbed run that fails is unknown, not a change", () => {
  it("gives unknown for code that fails on every perturbed copy and returns a literal", async () => {
    const code =
      "assert (df['city'] == 'Porto').sum() == 3 and (df['population'] == 237000).any()\nresult = 237000";
    const run = await sandbox.execute({ code, tables: [tables.cities as TableRef] });
    expect(run.result?.derived).toBe("unknown");
    expect(run.result?.derivation).toMatch(/failed on perturbed copies/);
  });
  it("still derives a filter on a literal label (its numbers are moved, its text kept)", async () => {
    const code = "result = df.loc[df['city'] == 'Porto', 'population'].iloc[0]";
    const run = await sandbox.execute({ code, tables: [tables.cities as TableRef] });
    expect(run.result?.derived).toBe("yes");
  });
});
