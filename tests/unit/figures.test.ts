import { describe, expect, it } from "vitest";
import type { Attempt, Figure, FigureAxes, PlotPoint } from "../../blackboard/schemas.js";
import { currentReading } from "../../evals/metrics/chart.js";
import { drawingLines, evidenceFromExecution } from "../../grounding/evidence.js";
import { describeFigure } from "../../grounding/figure-text.js";
import { asksForChart, chartIssues, verifyChart } from "../../grounding/figures.js";
import { figureFileProblem } from "../../sandbox/figures.js";
import { execResult } from "../support/exec-result.js";

function point(label: string, value: number, derived: PlotPoint["derived"] = "yes"): PlotPoint {
  return { series: 0, label, value, derived, lineage: [] };
}

function axes(points: PlotPoint[], more: Partial<FigureAxes> = {}): FigureAxes {
  return {
    title: "",
    xlabel: "",
    ylabel: "",
    kind: "bar",
    current: true,
    readings: { bar: points.map((p) => p.value) },
    points,
    ...more,
  };
}

function figure(points: PlotPoint[], more: Partial<Figure> = {}): Figure {
  return {
    id: "fig1",
    number: 1,
    title: "Gold",
    current: true,
    axes: [axes(points)],
    files: [],
    derived: "yes",
    derivation: "changed when the tables' values were perturbed: computed from the table",
    lineage: [],
    ...more,
  };
}

function ran(figures: Figure[], code = "fig, ax = plt.subplots()\nax.bar(x, y)"): Attempt {
  return {
    id: "a1",
    code,
    raw: "",
    parseError: null,
    result: execResult({ figures }),
  };
}

const judge = (attempts: Attempt[]) =>
  verifyChart({ question: "Draw a bar chart of gold per nation.", attempts });

describe("chart questions", () => {
  it.each([
    "Please help me draw a bar chart that shows the gold medals of each nation.",
    "Plot the population over the years.",
    "Can you visualize the distribution as a histogram?",
    "Show a pie chart of the shares.",
  ])("asks for a chart: %s", (question) => {
    expect(asksForChart(question)).toBe(true);
  });

  it.each([
    "Which song stayed longest at the top of the chart?",
    "What is the correlation coefficient between the 'draw' and 'points' columns?",
    "How many games ended in a draw?",
    "Which plot of land is the largest?",
  ])("asks for no chart: %s", (question) => {
    expect(asksForChart(question)).toBe(false);
  });
});

describe("judging a chart by what it plots", () => {
  it("supports each point of a derived figure, citing the figure", async () => {
    const { checks, figures } = await judge([ran([figure([point("US", 39), point("CN", 38)])])]);
    expect(figures).toEqual(["a1:fig1"]);
    expect(checks.map((c) => [c.item, c.status, c.support, c.supports])).toEqual([
      ["US: 39", "supported", "derived", ["a1:fig1"]],
      ["CN: 38", "supported", "derived", ["a1:fig1"]],
    ]);
  });

  it("fails a figure whose values do not depend on the table, or could not be traced", async () => {
    const typed = figure([point("US", 39, "no")], { derived: "no", derivation: "unchanged" });
    const [check] = (await judge([ran([typed])])).checks;
    expect(check).toMatchObject({ status: "unsupported", support: "coincidental" });
    expect(check?.note).toMatch(/^a1:fig1 plots values typed into the code/);
    const untraced = figure([point("US", 39, "unknown")], { derived: "unknown" });
    const [none] = (await judge([ran([untraced])])).checks;
    expect(none).toMatchObject({ status: "unsupported", support: "none" });
  });

  it("fails the one point typed in among derived ones", async () => {
    const { checks } = await judge([ran([figure([point("US", 50, "no"), point("CN", 38)])])]);
    expect(checks.map((c) => c.status)).toEqual(["unsupported", "supported"]);
    expect(checks[0]?.note).toMatch(/plots 50 at "US" whatever the table holds/);
  });

  it("judges the figure the answer cites, in the run that drew it", async () => {
    const first = ran([figure([point("US", 1, "no")], { derived: "no" })]);
    const later = { ...ran([figure([point("US", 39)])]), id: "a2" };
    const cited = await verifyChart({
      question: "Plot it.",
      attempts: [first, later],
      cited: ["a1:fig1"],
    });
    expect(cited.figures).toEqual(["a1:fig1"]);
    expect((await judge([first, later])).figures).toEqual(["a2:fig1"]);
  });

  it("fails a chart question when the code drew nothing", async () => {
    const { checks, figures } = await judge([ran([])]);
    expect(figures).toEqual([]);
    expect(checks[0]?.note).toMatch(/^the question asks for a chart and the code drew none/);
  });

  it("judges a long series' points past the first 30 as one item, its worst", async () => {
    const many = Array.from({ length: 40 }, (_, i) => point(`p${i}`, i, i === 35 ? "no" : "yes"));
    const { checks } = await judge([ran([figure(many)])]);
    expect(checks).toHaveLength(31);
    expect(checks.at(-1)).toMatchObject({
      item: "10 more values of a1:fig1",
      status: "unsupported",
    });
  });

  it("says a figure's problems once each, at most four per figure", () => {
    const note = (i: number) => `a1:fig1 plots ${i} at "x${i}", which is its silver`;
    const checks = Array.from({ length: 7 }, (_, i) => ({
      item: `x${i}`,
      kind: "number" as const,
      status: "conflicted" as const,
      support: "none" as const,
      supports: [],
      conflicts: [],
      note: note(i),
    }));
    expect(chartIssues(checks)).toEqual([
      note(0),
      note(1),
      note(2),
      note(3),
      "and 3 more values of a1:fig1 like these",
    ]);
  });
});

describe("a figure as evidence", () => {
  it("is a packet of its own: what it plots, the lines that draw, the cells it rests on", () => {
    const fig = figure([point("US", 39), point("CN", 38)], {
      lineage: [{ table: "medals", rows: [0, 1], columns: ["gold"] }],
    });
    const code =
      "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(x, y)\nprint(1)";
    const attempt = ran([fig], code);
    const packets = evidenceFromExecution(attempt, attempt.result as never, "executor", "t");
    const packet = packets.find((p) => p.id === "a1:fig1");
    expect(packet).toMatchObject({
      modality: "figure",
      value: 'bar chart "Gold": US 39, CN 38 (2 bars)',
      anchor: { kind: "code", lines: [2, 3], stdout: [0, 0] },
      provenance: { parents: ["medals:r0:gold", "medals:r1:gold"] },
    });
    expect(drawingLines("x = 1\ndf.plot(kind='bar')")).toEqual([2, 2]);
    expect(drawingLines("print(1)")).toEqual([0, 0]);
  });

  it("names a figure with nothing readable as such", () => {
    const empty = figure([], { axes: [axes([], { kind: null })] });
    expect(describeFigure(empty)).toBe('figure "Gold" with no values read');
  });
});

describe("the evaluation reads what plt.gca() would", () => {
  it("takes the current figure's current axes, an empty reading without one", () => {
    const old = figure([point("a", 1)], { current: false });
    const now = figure([point("a", 2), point("b", 3)], { number: 2 });
    expect(currentReading([old, now], "bar")).toEqual([2, 3]);
    expect(currentReading([old, now], "waterfall")).toEqual([2, 3]);
    expect(currentReading([old], "bar")).toEqual([]);
    expect(currentReading([], "line")).toEqual([]);
    // A reading that raised (a pie read off bars) stays null: no verdict.
    expect(currentReading([now], "pie")).toBeNull();
  });
});

describe("figure files a browser may be given", () => {
  const svg = (body: string) =>
    Buffer.from(
      `<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"\n  "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns:xlink="http://www.w3.org/1999/xlink" xmlns="http://www.w3.org/2000/svg">${body}</svg>`,
    );

  it("takes a PNG and matplotlib's SVG", () => {
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.from("rest")]);
    expect(figureFileProblem("png", png)).toBeNull();
    const plain = '<use xlink:href="#DejaVuSans-47"/><g clip-path="url(#p5396bed9)"/>';
    expect(figureFileProblem("svg", svg(plain))).toBeNull();
    const image = '<image xlink:href="data:image/png;base64,iVBORw0KGgo="/>';
    expect(figureFileProblem("svg", svg(image))).toBeNull();
  });

  it.each([
    ["png", Buffer.from("<svg></svg>"), /not a PNG/],
    ["svg", Buffer.from("GIF89a"), /not an SVG/],
    ["svg", svg("<script>alert(1)</script>"), /script/],
    ["svg", svg('<rect onload="alert(1)"/>'), /script/],
    ["svg", svg('<a xlink:href="javascript:alert(1)"><text>x</text></a>'), /script/],
    ["svg", svg('<image href="https://example.com/track.png"/>'), /refers outside itself/],
    ["svg", svg('<g style="fill: url(https://example.com/x)"/>'), /refers outside itself/],
    ["svg", svg("<foreignObject><div/></foreignObject>"), /active element/],
  ] as const)("refuses a %s that is not a safe figure", (format, bytes, problem) => {
    expect(figureFileProblem(format, bytes)).toMatch(problem);
  });
});
