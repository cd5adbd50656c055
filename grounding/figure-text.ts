import type { Figure, FigureAxes, PlotPoint } from "../blackboard/schemas.js";

/* A figure in words, for evidence, prompts and reports. */

/** Points named in a figure's description. */
const DESCRIBED_POINTS = 12;

const KIND_WORDS: Record<string, [string, string]> = {
  bar: ["bar chart", "bars"],
  waterfall: ["bar chart", "bars"],
  hbar: ["horizontal bar chart", "bars"],
  pie: ["pie chart", "wedges"],
  line: ["line chart", "points"],
  radar: ["radar chart", "points"],
  scatter: ["scatter plot", "points"],
  area: ["area chart", "points"],
};

export function plotted(value: PlotPoint["value"]): string {
  return value === null ? "NaN" : String(value);
}

export function pointName(point: PlotPoint): string {
  return point.label === null || point.label === "" ? "" : String(point.label);
}

/** The axes that carry a figure's values: those of a readable kind with points. */
export function drawn(figure: Figure): FigureAxes[] {
  return figure.axes.filter((a) => a.kind !== null && a.points.length > 0);
}

/** A figure in words: its kind, title and first points (`bar chart "Gold": United States 39, ...`). */
export function describeFigure(figure: Figure): string {
  const axes = drawn(figure);
  const first = axes[0];
  if (!first)
    return `figure${figure.title ? ` ${JSON.stringify(figure.title)}` : ""} with no values read`;
  const [kind, unit] = KIND_WORDS[first.kind ?? ""] ?? ["chart", "points"];
  const points = axes.flatMap((a) => a.points);
  const shown = points
    .slice(0, DESCRIBED_POINTS)
    .map((p) => `${pointName(p)} ${plotted(p.value)}`.trim())
    .join(", ");
  const more = points.length > DESCRIBED_POINTS ? ", ..." : "";
  const title = figure.title ? ` ${JSON.stringify(figure.title)}` : "";
  return `${kind}${title}: ${shown}${more} (${points.length} ${unit})`;
}
