import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

/** Renders a Vega-Lite spec to SVG headless (no canvas, no browser). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Rasterizes an SVG to PNG at `scale` times its size with resvg, using the system's fonts
 * (DejaVu where Vega asks for a generic family). Loaded on first use: it is a native module.
 */
export async function svgToPng(svg: string, scale = 2): Promise<Buffer> {
  const { Resvg } = await import("@resvg/resvg-js");
  const resvg = new Resvg(svg, {
    fitTo: { mode: "zoom", value: scale },
    background: "white",
    font: {
      loadSystemFonts: true,
      defaultFontFamily: "DejaVu Sans",
      sansSerifFamily: "DejaVu Sans",
    },
  });
  return resvg.render().asPng();
}

/** Horizontal bars of a score per category, in percent. */
export function scoreBars(
  title: string,
  rows: { name: string; score: number; n: number }[],
): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: 420,
    data: { values: rows.map((r) => ({ ...r, label: `${r.name} (${r.n})` })) },
    mark: { type: "bar", tooltip: true },
    encoding: {
      y: { field: "label", type: "nominal", sort: "-x", title: null, axis: { labelLimit: 320 } },
      x: { field: "score", type: "quantitative", scale: { domain: [0, 100] }, title: "score (%)" },
    },
  };
}

/** A histogram of per-question latency, in seconds. */
export function latencyHistogram(latenciesMs: number[]): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "latency per question",
    width: 420,
    data: { values: latenciesMs.map((ms) => ({ seconds: ms / 1000 })) },
    mark: "bar",
    encoding: {
      x: { field: "seconds", type: "quantitative", bin: { maxbins: 30 }, title: "seconds" },
      // Counts are whole questions: no 0.5 ticks when few questions share a bin.
      y: {
        aggregate: "count",
        type: "quantitative",
        title: "questions",
        axis: { tickMinStep: 1, format: "d" },
      },
    },
  };
}

/**
 * Selective risk (percent of wrong answers among those taken) against coverage (percent of the
 * answers taken, most confident first), beside the best possible ranking's curve.
 */
export function riskCoverageChart(
  curves: { series: string; points: { coverage: number; risk: number }[] }[],
): TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "risk-coverage (answers taken in decreasing confidence)",
    width: 420,
    height: 260,
    data: {
      values: curves.flatMap((c) =>
        c.points.map((p) => ({ series: c.series, coverage: p.coverage, risk: p.risk })),
      ),
    },
    mark: { type: "line", interpolate: "step-after", tooltip: true },
    encoding: {
      x: {
        field: "coverage",
        type: "quantitative",
        scale: { domain: [0, 100] },
        title: "coverage (% of answers taken)",
      },
      y: {
        field: "risk",
        type: "quantitative",
        scale: { domain: [0, 100] },
        title: "risk (% wrong among them)",
      },
      color: { field: "series", type: "nominal", title: null, legend: { labelLimit: 320 } },
      strokeDash: { field: "series", type: "nominal", title: null },
    },
  };
}

/**
 * A reliability diagram: the share of right answers in each confidence bin, against the
 * diagonal of a calibrated confidence; each bar is labelled with its number of answers.
 */
export function reliabilityChart(
  bins: { from: number; to: number; n: number; accuracy: number | null }[],
): TopLevelSpec {
  const filled = bins
    .filter((b) => b.n > 0)
    .map((b) => ({ from: b.from, to: b.to, n: b.n, accuracy: b.accuracy ?? 0 }));
  const x = { scale: { domain: [0, 1] }, title: "confidence" };
  const y = { scale: { domain: [0, 1] }, title: "share right" };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "reliability (equal-width confidence bins)",
    width: 320,
    height: 320,
    layer: [
      {
        data: { values: filled },
        mark: { type: "bar", tooltip: true, opacity: 0.8, stroke: "white" },
        encoding: {
          x: { field: "from", type: "quantitative", ...x },
          x2: { field: "to" },
          y: { field: "accuracy", type: "quantitative", ...y },
          y2: { datum: 0 },
        },
      },
      {
        data: { values: filled },
        mark: { type: "text", dy: -6 },
        encoding: {
          x: { field: "mid", type: "quantitative", ...x },
          y: { field: "accuracy", type: "quantitative", ...y },
          text: { field: "n", type: "quantitative" },
        },
        transform: [{ calculate: "(datum.from + datum.to) / 2", as: "mid" }],
      },
      {
        data: {
          values: [
            { confidence: 0, right: 0 },
            { confidence: 1, right: 1 },
          ],
        },
        mark: { type: "line", strokeDash: [4, 4], color: "gray" },
        encoding: {
          x: { field: "confidence", type: "quantitative", ...x },
          y: { field: "right", type: "quantitative", ...y },
        },
      },
    ],
  };
}
