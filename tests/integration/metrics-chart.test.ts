import { afterAll, describe, expect, it } from "vitest";
import { judgeChart, sandboxChartRunner } from "../../evals/metrics/chart.js";
import { tablebenchScorer } from "../../evals/metrics/tablebench.js";
import type { EvalExample } from "../../evals/types.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { useTempHome } from "../support/env.js";

useTempHome();

function chart(chartType: string, gold: string): EvalExample {
  return {
    id: `chart-${chartType}`,
    dataset: "tablebench",
    question: "draw it",
    tables: [
      {
        name: "table",
        columns: ["city", "high", "low"],
        data: [
          ["a", 24, 10],
          ["b", 30, 12],
          ["c", 36, 15],
        ],
      },
    ],
    gold,
    category: "Visualization",
    subcategory: "ChartGeneration",
    chartType,
  };
}

const READ =
  "import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('table.csv')\n";
const fence = (code: string) =>
  `Here is the chart.\n\`\`\`python\n${READ}${code}\nplt.show()\n\`\`\``;
const HIGH = "y_references = [[24, 30, 36]]";

/*
 * Upstream's parser runs the code twice in one process and closes the figures only after
 * the second run, whose drawing it reads. The verdicts for code that reads table.csv itself
 * were also checked against upstream's own parse_chart_code_then_exec (Python 3.11).
 */
describe("TableBench Visualization Pass@1 through the local sandbox", () => {
  afterAll(async () => {
    await closeSandboxes();
  });

  async function score(example: EvalExample, output: string) {
    const runChart = sandboxChartRunner(await getSandbox("local"));
    return await tablebenchScorer.score(example, output, { runChart });
  }
  const pass = async (example: EvalExample, output: string) => (await score(example, output)).score;

  it("fails bars drawn on pyplot's implicit figure: the second run draws them again", async () => {
    const implicit = await score(chart("bar", HIGH), fence("plt.bar(df['city'], df['high'])"));
    // It ran, and its verdict was False (six bars for three references): parsed, not passed.
    expect(implicit).toMatchObject({ score: 0, parsed: true });
    const runChart = sandboxChartRunner(await getSandbox("local"));
    const code = `${READ}plt.bar(df['city'], df['high'])`;
    expect(await judgeChart(code, chart("bar", HIGH), runChart)).toEqual({
      ecr: true,
      verdict: false,
    });
  });

  it("passes the same bars on a figure of the code's own", async () => {
    const subplots = "fig, ax = plt.subplots()\nax.bar(df['city'], df['high'])";
    expect(await score(chart("bar", HIGH), fence(subplots))).toMatchObject({
      score: 1,
      parsed: true,
    });
    const figure = fence("plt.figure()\nplt.bar(df['city'], df['high'])");
    expect(await pass(chart("bar", HIGH), figure)).toBe(1);
    expect(
      await pass(chart("bar", HIGH), fence("plt.figure()\nplt.bar(df['city'], df['low'])")),
    ).toBe(0);
  });

  it("reads lines, pies and scatters the same way", async () => {
    const lines = "y_references = [[24, 30, 36], [10, 12, 15]]";
    const both = "plt.plot(df['city'], df['high'])\nplt.plot(df['city'], df['low'])";
    expect(await pass(chart("line", lines), fence(`plt.figure()\n${both}`))).toBe(1);
    expect(await pass(chart("line", lines), fence(both))).toBe(0);
    const shares = "y_references = [[10, 12, 15]]";
    expect(await pass(chart("pie", shares), fence("plt.figure()\nplt.pie(df['low'])"))).toBe(1);
    expect(await pass(chart("pie", shares), fence("plt.pie(df['low'])"))).toBe(0);
    expect(await pass(chart("pie", shares), fence("plt.figure()\nplt.pie(df['high'])"))).toBe(0);
    const scatter = "fig, ax = plt.subplots()\nax.scatter(df['city'], df['high'])";
    expect(await pass(chart("scatter", HIGH), fence(scatter))).toBe(1);
  });

  it("fails a chart whose code prints: the verdict must be all the second run printed", async () => {
    const printing = fence("plt.figure()\nplt.bar(df['city'], df['high'])\nprint(df)");
    expect(await score(chart("bar", HIGH), printing)).toMatchObject({ score: 0, parsed: false });
  });

  it("runs the code with top-level names as locals, as upstream's exec in a function does", async () => {
    const inFunction = "def draw():\n    plt.figure()\n    plt.bar(df['city'], df['high'])\ndraw()";
    expect(await pass(chart("bar", HIGH), fence(inFunction))).toBe(0);
  });

  it("gives code written for our sandbox the df it expects, read from table.csv", async () => {
    const ours = "```python\nplt.figure()\nplt.bar(df['city'], df['high'])\n```";
    expect(await pass(chart("bar", HIGH), ours)).toBe(1);
  });

  it("fails code that crashes or has no python block", async () => {
    expect(
      await score(chart("bar", HIGH), fence("plt.figure()\nplt.bar(df['city'], df['nope'])")),
    ).toMatchObject({ score: 0, parsed: false });
    expect(await score(chart("bar", HIGH), "Final Answer: a bar chart")).toMatchObject({
      score: 0,
      parsed: false,
    });
  });
});
