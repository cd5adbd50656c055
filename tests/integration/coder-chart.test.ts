import { afterAll, describe, expect, it } from "vitest";
import { sandboxChartRunner } from "../../evals/metrics/chart.js";
import { tablebenchScorer } from "../../evals/metrics/tablebench.js";
import type { EvalExample } from "../../evals/types.js";
import { CODER_SYSTEM } from "../../nodes/coder.js";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { useTempHome } from "../support/env.js";

useTempHome();

/*
 * The coder's chart rules are the ones upstream's double-run parser (TableBench's Pass@1)
 * rewards: each rule below, broken, fails a chart that is otherwise right.
 */

const EXAMPLE: EvalExample = {
  id: "chart-bar",
  dataset: "tablebench",
  question: "Draw a bar chart of each city's high temperature.",
  tables: [
    {
      name: "table",
      columns: ["city", "high"],
      data: [
        ["a", 24],
        ["b", 30],
        ["c", 36],
      ],
    },
  ],
  gold: "y_references = [[24, 30, 36]]",
  category: "Visualization",
  subcategory: "ChartGeneration",
  chartType: "bar",
};

const fenced = (lines: string[]) => `\`\`\`python\n${lines.join("\n")}\n\`\`\``;

describe("the coder's chart rules pass TableBench's double-run parser", () => {
  afterAll(async () => {
    await closeSandboxes();
  });

  async function pass(lines: string[]): Promise<number> {
    const runChart = sandboxChartRunner(await getSandbox("local"));
    return (await tablebenchScorer.score(EXAMPLE, fenced(lines), { runChart })).score;
  }

  it("asks for a figure of its own, plt.show(), no prints, no functions on outer names", () => {
    expect(CODER_SYSTEM).toContain("fig, ax = plt.subplots()");
    expect(CODER_SYSTEM).toContain("plt.show()");
    expect(CODER_SYSTEM).toMatch(/print nothing/);
    expect(CODER_SYSTEM).toMatch(/functions that rely on names defined outside them/);
  });

  it("passes code that follows them and fails code that breaks any one", async () => {
    const own = ["import matplotlib.pyplot as plt", "fig, ax = plt.subplots()"];
    expect(await pass([...own, "ax.bar(df['city'], df['high'])", "plt.show()"])).toBe(1);
    // pyplot's implicit figure: the second run draws the bars again on the same axes.
    expect(
      await pass([
        "import matplotlib.pyplot as plt",
        "plt.bar(df['city'], df['high'])",
        "plt.show()",
      ]),
    ).toBe(0);
    // A print: the parser's verdict is no longer all the second run prints.
    expect(
      await pass([...own, "ax.bar(df['city'], df['high'])", "print('done')", "plt.show()"]),
    ).toBe(0);
    // A function reading top-level names: they are locals of the parser's wrapper.
    expect(
      await pass([
        ...own,
        "def draw():",
        "    ax.bar(df['city'], df['high'])",
        "draw()",
        "plt.show()",
      ]),
    ).toBe(0);
  });
});
