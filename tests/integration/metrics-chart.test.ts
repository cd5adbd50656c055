import { afterAll, describe, expect, it } from "vitest";
import { sandboxChartRunner } from "../../evals/metrics/chart.js";
import { tablebenchScorer } from "../../evals/metrics/tablebench.js";
import type { EvalExample } from "../../evals/types.js";
import { closeSandboxes, getSandbox } from "../../tools/sandbox/index.js";
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

describe("TableBench Visualization Pass@1 through the local sandbox", () => {
  afterAll(async () => {
    await closeSandboxes();
  });

  async function score(example: EvalExample, output: string) {
    const runChart = sandboxChartRunner(await getSandbox("local"));
    return (await tablebenchScorer.score(example, output, { runChart })).score;
  }

  it("passes a bar chart of the right values and fails one of the wrong column", async () => {
    const gold = "y_references = [[24, 30, 36]]";
    expect(await score(chart("bar", gold), fence("plt.bar(df['city'], df['high'])"))).toBe(1);
    expect(await score(chart("bar", gold), fence("plt.bar(df['city'], df['low'])"))).toBe(0);
  });

  it("reads every line of a line chart", async () => {
    const gold = "y_references = [[24, 30, 36], [10, 12, 15]]";
    const both = "plt.plot(df['city'], df['high'])\nplt.plot(df['city'], df['low'])";
    expect(await score(chart("line", gold), fence(both))).toBe(1);
    expect(await score(chart("line", gold), fence("plt.plot(df['city'], df['high'])"))).toBe(0);
  });

  it("compares a pie chart's shares with the references' shares", async () => {
    const gold = "y_references = [[10, 12, 15]]";
    expect(await score(chart("pie", gold), fence("plt.pie(df['low'])"))).toBe(1);
    expect(await score(chart("pie", gold), fence("plt.pie(df['high'])"))).toBe(0);
  });

  it("fails code that crashes or has no python block", async () => {
    const gold = "y_references = [[24, 30, 36]]";
    expect(await score(chart("bar", gold), fence("plt.bar(df['city'], df['nope'])"))).toBe(0);
    expect(await score(chart("bar", gold), "Final Answer: a bar chart")).toBe(0);
  });
});
