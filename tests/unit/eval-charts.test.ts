import { describe, expect, it } from "vitest";
import {
  latencyHistogram,
  reliabilityChart,
  renderSvg,
  riskCoverageChart,
} from "../../evals/charts.js";

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

/** The aria labels of a Vega SVG's marks of one role description (bar, line...). */
const marks = (svg: string, role: string) =>
  [
    ...svg.matchAll(
      /<path aria-label="([^"]*)" role="graphics-symbol" aria-roledescription="([^"]*)"/g,
    ),
  ]
    .filter((m) => m[2] === role)
    .map((m) => m[1] ?? "");

describe("the risk-coverage chart", () => {
  it("draws risk against coverage for each ranking, on 0-100 axes", async () => {
    const svg = await renderSvg(
      riskCoverageChart([
        {
          series: "checker confidence",
          points: [
            { coverage: 50, risk: 0 },
            { coverage: 100, risk: 50 },
          ],
        },
        {
          series: "best possible ranking",
          points: [
            { coverage: 50, risk: 0 },
            { coverage: 100, risk: 50 },
          ],
        },
      ]),
    );
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(texts).toContain("coverage (% of answers taken)");
    expect(texts).toContain("risk (% wrong among them)");
    expect(texts).toContain("best possible ranking");
    expect(texts).toContain("checker confidence");
    expect(marks(svg, "line mark")).toHaveLength(2);
  });
});

describe("the reliability chart", () => {
  it("draws one bar per non-empty bin from 0 to its share right, labelled with its answers", async () => {
    const svg = await renderSvg(
      reliabilityChart([
        { from: 0.2, to: 0.3, n: 3, accuracy: 1 / 3 },
        { from: 0.3, to: 0.4, n: 0, accuracy: null },
        { from: 0.9, to: 1, n: 2, accuracy: 1 },
      ]),
    );
    const bars = marks(svg, "bar");
    expect(bars).toHaveLength(2);
    expect(bars[0]).toContain("confidence: 0.2; share right: 0.333");
    // Bars stand on 0: the full one spans the whole plot's height (320 px).
    expect(svg).toMatch(
      /aria-label="confidence: 0\.9; share right: 1; to: 1"[^>]*d="M\d+,0h\d+v320h/,
    );
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(texts).toEqual(expect.arrayContaining(["3", "2", "share right"]));
  });
});
