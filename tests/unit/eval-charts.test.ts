import { describe, expect, it } from "vitest";
import { latencyHistogram, renderSvg } from "../../evals/charts.js";

/** The labels of the axis titled `title` in a Vega SVG (each axis is a group of text marks). */
function axisLabels(svg: string, title: string): string[] {
  const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1] ?? "");
  const end = texts.indexOf(title);
  const start = texts.lastIndexOf("seconds", end);
  return texts.slice(start + 1, end);
}

describe("the latency chart", () => {
  it("counts questions in whole numbers on its axis", async () => {
    // Three questions, one per bin: a count axis of 0 to 1 that Vega would mark 0.0, 0.1 ...
    const svg = await renderSvg(latencyHistogram([1_000, 2_500, 4_000]));
    const ticks = axisLabels(svg, "questions");
    expect(ticks.length).toBeGreaterThan(1);
    for (const tick of ticks) expect(tick).toMatch(/^\d+$/);
  });
});
