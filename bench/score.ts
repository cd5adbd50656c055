/**
 * Time to score all of TableBench (not a test): the 886 questions of the shared copy, once
 * with the gold answers as predictions and once with every prediction perturbed, so both
 * the matching and the failing paths run. Charts run through the local sandbox, timed apart.
 *
 *   npx tsx bench/score.ts [path/to/tablebench_test.jsonl]
 */
import { loadDataset } from "../evals/datasets/index.js";
import { sandboxChartRunner } from "../evals/metrics/chart.js";
import { getScorer } from "../evals/metrics/index.js";
import type { EvalExample } from "../evals/types.js";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";

const examples = await loadDataset("tablebench", { path: process.argv[2] });
const scorer = getScorer("tablebench");
const text = examples.filter((e) => e.category !== "Visualization");
const charts = examples.filter((e) => e.category === "Visualization");

async function timeText(label: string, predict: (e: EvalExample) => string) {
  const started = performance.now();
  const scores = await Promise.all(text.map((e) => scorer.score(e, predict(e))));
  const ms = performance.now() - started;
  const summary = scorer.summarize(text, scores);
  console.log(
    `  ${label}: ${ms.toFixed(1)} ms for ${text.length} (${((1000 * ms) / text.length).toFixed(1)} us each); overall ${summary.overall}`,
  );
}

/**
 * Chart code that draws the reference values with the chart type's own call, on a figure of
 * its own: upstream runs the code twice without closing figures in between.
 */
function chartCode(e: EvalExample): string {
  const refs = /y_references\s*=\s*(\[[\s\S]*\])/.exec(e.gold)?.[1] ?? "[[]]";
  const draw: Record<string, string> = {
    line: "for ys in refs: plt.plot(range(len(ys)), ys)",
    pie: "plt.pie([v for ys in refs for v in ys])",
    hbar: "for ys in refs: plt.barh(range(len(ys)), ys)",
    scatter: "for ys in refs: plt.scatter(range(len(ys)), ys)",
    area: "for ys in refs: plt.fill_between(range(len(ys)), ys)",
    radar: "for ys in refs: plt.plot(range(len(ys) + 1), ys + ys[:1])",
  };
  const body =
    draw[e.chartType ?? ""] ??
    "for i, ys in enumerate(refs): plt.bar(np.arange(len(ys)) + 0.3 * i, ys, width=0.3)";
  return `\`\`\`python\nimport matplotlib.pyplot as plt\nimport numpy as np\nnan = float("nan")\nrefs = ${refs}\nrefs = refs if isinstance(refs[0], list) else [refs]\nplt.figure()\n${body}\nplt.show()\n\`\`\``;
}

console.log(
  `scoring TableBench: ${examples.length} questions (${text.length} text, ${charts.length} charts)`,
);
await timeText("gold answers     ", (e) => `Final Answer: ${e.gold}`);
await timeText("perturbed answers", (e) => `Final Answer: ${e.gold}x`);
const runChart = sandboxChartRunner(await getSandbox("local"));
const started = performance.now();
const chartScores = [];
for (const e of charts) {
  const s = await scorer.score(e, chartCode(e), { runChart });
  chartScores.push(s);
  if (process.env.SHOW_FAILS && s.score !== 1)
    console.log("  fail:", e.chartType, e.gold.slice(0, 70));
}
const ms = performance.now() - started;
const passed = chartScores.filter((s) => s.score === 1).length;
console.log(
  `  charts drawn from their references: ${ms.toFixed(0)} ms for ${charts.length} (${(ms / charts.length).toFixed(1)} ms each); ${passed}/${charts.length} pass`,
);
await closeSandboxes();
