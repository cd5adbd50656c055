import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Attempt, TableRef, Verdict } from "../../blackboard/schemas.js";
import { evidenceFromExecution } from "../../grounding/evidence.js";
import { ruleVerdict } from "../../grounding/verdict.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { loadTable } from "../../tables/load.js";
import { CHART_QUESTION } from "../support/chart-team.js";
import { EXAMPLES, useTempHome } from "../support/env.js";

useTempHome();

/*
 * The checker judges a chart by what its figure plots, as the sandbox read it and traced it:
 * right charts pass whatever way they are drawn; charts whose values are typed in, taken from
 * another column, moved to other rows or not drawn at all fail, each with a reason.
 */

let medals: TableRef;

beforeAll(async () => {
  medals = (await loadTable({ path: `${EXAMPLES}/olympics_2020_medals.csv` })).table;
});

afterAll(async () => {
  await closeSandboxes();
});

const FIGURE = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n";

async function judge(code: string, question = CHART_QUESTION): Promise<Verdict> {
  const sandbox = await getSandbox("local");
  const result = await sandbox.execute({ code, tables: [medals] });
  expect(result.ok, result.stderr).toBe(true);
  const attempt: Attempt = { id: "a1", code, raw: "", result, parseError: null };
  const evidence = evidenceFromExecution(attempt, result, "executor", "2026-01-01T00:00:00Z");
  const answer = { raw: "", final: "a bar chart of the gold medals", evidence: ["a1:fig1"] };
  const { verdict } = await ruleVerdict({
    question,
    answer,
    evidence,
    attempts: [attempt],
    tables: [medals],
  });
  return verdict;
}

describe("the checker passes charts whose plotted values come from the table", () => {
  const lines = "Draw a line chart of the gold and silver medals of each nation.";
  it.each([
    ["bars on an axes of their own", `${FIGURE}ax.bar(df["nation"], df["gold"])`, CHART_QUESTION],
    ["pandas' own bar plot", 'df.plot(x="nation", y="gold", kind="bar")', CHART_QUESTION],
    ["horizontal bars", `${FIGURE}ax.barh(df["nation"], df["gold"])`, CHART_QUESTION],
    [
      "a line per column asked for",
      `${FIGURE}ax.plot(df["nation"], df["gold"])\nax.plot(df["nation"], df["silver"])`,
      lines,
    ],
    [
      "bars of a count per value",
      `${FIGURE}c = df["gold"].value_counts()\nax.bar(c.index.astype(str), c.values)`,
      "Plot how many nations won each number of gold medals.",
    ],
    [
      "a pie of the shares",
      `${FIGURE}ax.pie(df["gold"], labels=df["nation"])`,
      "Draw a pie chart of each nation's share of the gold medals.",
    ],
  ])("%s", async (_, code, question) => {
    const verdict = await judge(code, question);
    expect(verdict.issues).toEqual([]);
    expect(verdict).toMatchObject({ pass: true, support: "derived" });
  });
});

describe("the checker fails charts that plot what the table does not say", () => {
  it("fails the right numbers typed into the code", async () => {
    const verdict = await judge(
      `${FIGURE}ax.bar(df["nation"], [39, 38, 27, 22, 20, 17, 10, 10, 10, 10])`,
    );
    expect(verdict).toMatchObject({ pass: false, support: "coincidental" });
    expect(verdict.issues.join("\n")).toMatch(/a1:fig1 plots values typed into the code/);
  });

  it("fails names from the table over numbers typed in", async () => {
    const verdict = await judge(`${FIGURE}ax.bar(df["nation"].head(3), [39, 38, 27])`);
    expect(verdict.pass).toBe(false);
    expect(verdict.issues.join("\n")).toMatch(/typed into the code/);
  });

  it("fails one bar typed in among bars from the table", async () => {
    const verdict = await judge(
      `${FIGURE}gold = df["gold"].tolist()\ngold[0] = 50\nax.bar(df["nation"], gold)`,
    );
    expect(verdict.pass).toBe(false);
    expect(verdict.issues).toEqual([
      'a1:fig1 plots 50 at "United States" whatever the table holds: typed into the code, not computed',
    ]);
  });

  it("fails bars of another column than the one asked for", async () => {
    const verdict = await judge(`${FIGURE}ax.bar(df["nation"], df["silver"])`);
    expect(verdict).toMatchObject({ pass: false, support: "none" });
    // One line of each: the silver one is what the question did not ask for.
    const both = `${FIGURE}ax.plot(df["nation"], df["gold"])\nax.plot(df["nation"], df["silver"])`;
    expect((await judge(both)).issues[0]).toMatch(/which is its silver \(41\), not its gold/);
    expect(verdict.issues[0]).toBe(
      'a1:fig1 plots 41 at "United States", which is its silver (41), not its gold (39)',
    );
    expect(verdict.issues.at(-1)).toMatch(/^and \d+ more values of a1:fig1 like these$/);
  });

  it("fails the asked column's values put at other rows' names", async () => {
    const verdict = await judge(`${FIGURE}ax.bar(df["nation"], df["gold"].sort_values().values)`);
    expect(verdict.pass).toBe(false);
    expect(verdict.issues[0]).toBe(
      'a1:fig1 plots 10 at "United States", but its gold is 39; 10 is the gold of another row',
    );
  });

  it("fails a chart question answered with no figure", async () => {
    const verdict = await judge('print(df[["nation", "gold"]].to_string(index=False))');
    expect(verdict).toMatchObject({ pass: false, scores: { type: 0, grounding: 0 } });
    expect(verdict.issues[0]).toMatch(/^the question asks for a chart and the code drew none/);
  });
});

it("judges a question that asks for no chart as before, though the code drew one", async () => {
  const code = `${FIGURE}ax.bar(df["nation"], df["gold"])\nresult = int(df["gold"].sum())`;
  const sandbox = await getSandbox("local");
  const result = await sandbox.execute({ code, tables: [medals] });
  const attempt: Attempt = { id: "a1", code, raw: "", result, parseError: null };
  const { verdict } = await ruleVerdict({
    question: "How many gold medals did these ten nations win in total?",
    answer: { raw: "", final: "203", evidence: ["a1:result"] },
    evidence: evidenceFromExecution(attempt, result, "executor", "2026-01-01T00:00:00Z"),
    attempts: [attempt],
    tables: [medals],
  });
  expect(verdict).toMatchObject({ pass: true, support: "derived", expectedType: "number" });
});
