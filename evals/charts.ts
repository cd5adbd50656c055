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
