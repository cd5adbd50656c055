import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TopLevelSpec } from "vega-lite";
import {
  latencyHistogram,
  reliabilityChart,
  renderSvg,
  riskCoverageChart,
  scoreBars,
  svgToPng,
} from "./charts.js";
import type { ResultRecord } from "./results-file.js";
import { describeRunConfig, type RunConfig } from "./run-config.js";
import { type RunInfo, readRunInfo, selectionOf } from "./run-info.js";
import { describeSelection } from "./selection.js";
import {
  type CheckerFigures,
  checkedOutcomes,
  checkerFigures,
  optimalRiskCoverage,
  riskCoverage,
} from "./selective.js";
import type { DatasetSummary, EvalExample, Scorer } from "./types.js";

/** What the report says of how its results were made (from run.json). */
export interface ReportRun {
  /** all, first N, or sample N seed S. */
  selection: string;
  config?: RunConfig;
  /** Configuration changes accepted with --allow-config-change, and the results made since. */
  changes: { invocation: number; changes: string[]; results: number }[];
}

export interface Report {
  summary: DatasetSummary;
  /** Questions of the run, and how many have a result. */
  questions: number;
  answered: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number };
  /** Means per question; llmMs and execMs are the time spent in model calls and code runs. */
  perQuestion: {
    promptTokens: number;
    completionTokens: number;
    llmCalls: number;
    /** Of those, calls the replay cache answered. */
    cachedCalls: number;
    llmMs: number;
    execMs: number;
  };
  errors: { count: number; first: { id: string; error: string }[] };
  /**
   * The checker's verdicts against the official scores (evals/selective.ts): pass precision and
   * recall, wrong answers that passed, risk-coverage and AURC, calibration (ECE). Over the
   * results that carry a verdict; absent in reports of older versions.
   */
  checker?: CheckerFigures;
  run?: ReportRun;
}

/** The nearest-rank quantile of ascending values. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

const mean = (values: number[]) =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
const fixed = (n: number, places = 1) => Number(n.toFixed(places));

/** The report's account of a run directory's configuration, from its run.json. */
export function reportRun(info: RunInfo, records: readonly ResultRecord[]): ReportRun {
  return {
    selection: describeSelection(selectionOf(info)),
    ...(info.config ? { config: info.config } : {}),
    changes: (info.configChanges ?? []).map((c) => ({
      invocation: c.invocation,
      changes: c.changes,
      results: records.filter((r) => (r.invocation ?? 0) >= c.invocation).length,
    })),
  };
}

export function buildReport(
  examples: EvalExample[],
  records: ResultRecord[],
  scorer: Scorer,
): Report {
  const wanted = new Set(examples.map((e) => e.id));
  const kept = records.filter((r) => wanted.has(r.id));
  const latencies = kept.map((r) => r.latencyMs).sort((a, b) => a - b);
  const errors = kept.filter((r) => r.error !== null);
  return {
    summary: scorer.summarize(
      examples,
      kept.map((r) => r.score),
    ),
    questions: examples.length,
    answered: kept.length,
    latencyMs: {
      mean: fixed(mean(latencies)),
      p50: quantile(latencies, 0.5),
      p90: quantile(latencies, 0.9),
      p99: quantile(latencies, 0.99),
    },
    perQuestion: {
      promptTokens: fixed(mean(kept.map((r) => r.tokens.prompt))),
      completionTokens: fixed(mean(kept.map((r) => r.tokens.completion))),
      llmCalls: fixed(mean(kept.map((r) => r.llmCalls)), 2),
      cachedCalls: fixed(mean(kept.map((r) => r.cachedCalls ?? 0)), 2),
      llmMs: fixed(mean(kept.map((r) => r.llmMs ?? 0))),
      execMs: fixed(mean(kept.map((r) => r.execMs ?? 0))),
    },
    errors: {
      count: errors.length,
      first: errors.slice(0, 5).map((r) => ({ id: r.id, error: r.error ?? "" })),
    },
    checker: checkerFigures(kept),
  };
}

const percent = (x: number | null) => (x === null ? "-" : `${x.toFixed(2)}%`);
const fraction = (x: number | null) => (x === null ? "-" : x.toFixed(3));
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The report's section on the checker's verdicts (evals/selective.ts). */
function checkerLines(report: Report): string[] {
  const c = report.checker;
  if (!c || report.answered === 0) return [];
  const head = ["## The checker's verdicts", ""];
  const unanswered = report.questions - report.answered;
  const missing =
    unanswered > 0
      ? [
          `${plural(unanswered, "question")} of the run ${unanswered === 1 ? "has" : "have"} no result (not run yet, or failed on the model endpoint), so ${unanswered === 1 ? "it is" : "they are"} not counted here, and never as wrong answers.`,
        ]
      : [];
  if (c.checked === 0) {
    return [
      ...head,
      `None of the ${plural(report.answered, "result")} carries the checker's verdict (checking was off, the runs failed before their check, or a version that did not record verdicts made them), so there are no figures of it.`,
      ...missing,
      "",
    ];
  }
  const s = c.selective;
  const byKind = c.support.map((k) => `${k.kind} ${k.n} (${percent(k.accuracy)} right)`);
  const binRows = c.calibration.bins.map((b) => {
    const range = `[${b.from.toFixed(1)}, ${b.to.toFixed(1)}${b.to >= 1 ? "]" : ")"}`;
    const gap =
      b.accuracy === null || b.confidence === null
        ? "-"
        : `${b.accuracy >= b.confidence ? "+" : ""}${(b.accuracy - b.confidence).toFixed(3)}`;
    return `| ${range} | ${b.n} | ${fraction(b.confidence)} | ${fraction(b.accuracy)} | ${gap} |`;
  });
  return [
    ...head,
    `${c.checked} of ${plural(report.answered, "result")} carry the checker's verdict; the figures below are over them.` +
      (c.withoutVerdict > 0
        ? ` ${plural(c.withoutVerdict, "result")} without one (checking off, or the run failed before its check) ${c.withoutVerdict === 1 ? "is" : "are"} left out.`
        : ""),
    ...missing,
    `Right or wrong: ${c.rightWhen}. Of the ${c.checked}: ${c.right} right, ${c.wrong} wrong.`,
    "",
    `- **Pass** against the official score: ${c.pass.passed} passed; precision ${percent(c.pass.precision)} (right among the passed), recall ${percent(c.pass.recall)} (passed among the right).`,
    `- **Wrong answers that passed**: ${c.pass.wrongPassed} of ${c.wrong} (${percent(c.pass.wrongPassedRate)}); right answers that failed: ${c.pass.rightFailed}.`,
    `- **Sure** (confidence not below the run's threshold, \`minConfidence\`): ${plural(c.sure.n, "answer")}, ${percent(c.sure.accuracy)} right; not sure: ${plural(c.notSure.n, "answer")}, ${percent(c.notSure.accuracy)} right.`,
    `- **By support**: ${byKind.join(", ")}.`,
    "",
    "### Selective prediction",
    "",
    "Answers taken in decreasing confidence (answers of equal confidence count as in random order):",
    "",
    "| coverage | answers | lowest confidence | accuracy |",
    "| ---: | ---: | ---: | ---: |",
    ...s.atCoverage.map(
      (p) => `| ${p.coverage}% | ${p.k} | ${p.confidence.toFixed(3)} | ${percent(p.accuracy)} |`,
    ),
    "",
    `AURC **${fraction(s.aurc)}**: the area under the risk-coverage curve, the mean share of wrong answers over every coverage (lower is better). The best ranking of these answers gives ${fraction(s.optimalAurc)}; a confidence that ranks nothing gives the error rate, ${fraction(s.randomAurc)}.`,
    "",
    "![risk-coverage](charts/risk-coverage.svg)",
    "",
    "### Calibration",
    "",
    `ECE **${fraction(c.calibration.ece)}**: the expected calibration error over ${c.calibration.bins.length} equal-width confidence bins, |share right − mean confidence| weighted by each bin's answers (0 is calibrated).`,
    "",
    "| confidence | answers | mean confidence | share right | gap |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...binRows,
    "",
    "![reliability](charts/reliability.svg)",
    "",
  ];
}

const signed = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(2)}`;

function groupTable(rows: { name: string; n: number; metric: string; score: number }[]): string {
  return [
    "| group | questions | metric | score |",
    "| --- | ---: | --- | ---: |",
    ...rows.map((g) => `| ${g.name} | ${g.n} | ${g.metric} | ${g.score.toFixed(2)} |`),
  ].join("\n");
}

/** Every metric's mean when the dataset has more than its headline one (TableBench, FinQA). */
function metricsLine(metrics: Record<string, number>): string[] {
  const entries = Object.entries(metrics);
  if (entries.length < 2) return [];
  return [`Metrics: ${entries.map(([name, v]) => `${name} ${v.toFixed(2)}`).join(", ")}.`, ""];
}

function runLines(run: ReportRun | undefined): string[] {
  if (!run) return [];
  const head = run.config
    ? `Run: ${describeRunConfig(run.config)}.`
    : `Questions: ${run.selection}.`;
  const settings = run.config
    ? [
        `Configuration: ${Object.entries(run.config.settings)
          .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
          .join(", ")}.`,
      ]
    : [];
  const changes = run.changes.map(
    (c) =>
      `The configuration changed at invocation ${c.invocation} (--allow-config-change; ${c.results} results since): ${c.changes.join("; ")}.`,
  );
  return [head, ...settings, ...changes, ""];
}

export function renderMarkdown(name: string, report: Report): string {
  const s = report.summary;
  const p = report.perQuestion;
  const partial =
    report.answered < report.questions
      ? [`Results for ${report.answered} of ${report.questions} questions so far.`, ""]
      : [];
  // Predictions scored with `eval score` have no cost figures.
  const cost =
    report.latencyMs.mean > 0 || p.llmCalls > 0
      ? [
          "## Cost",
          "",
          `Latency per question: mean ${report.latencyMs.mean} ms, p50 ${report.latencyMs.p50} ms, p90 ${report.latencyMs.p90} ms, p99 ${report.latencyMs.p99} ms`,
          `(model calls ${p.llmMs} ms and code runs ${p.execMs} ms on average).`,
          `Per question: ${p.llmCalls} model calls${p.cachedCalls > 0 ? ` (${p.cachedCalls} from the replay cache)` : ""}, ${p.promptTokens} prompt and ${p.completionTokens} completion tokens.`,
          "",
          "![latency](charts/latency.svg)",
          "",
        ]
      : [];
  return [
    `# ${name}: ${s.dataset}`,
    "",
    ...partial,
    ...runLines(report.run),
    `Overall: **${s.overall.toFixed(2)}** over ${s.n} questions${
      s.overallPassPercent === undefined
        ? ""
        : ` (upstream's formula, chart Pass@1 counted as a fraction 0-1; corrected, with Pass@1 as a percent: ${s.overallPassPercent.toFixed(2)})`
    }. Parse@1: ${s.parseRate.toFixed(2)}%.`,
    "",
    ...metricsLine(s.metrics),
    "## By category",
    "",
    groupTable(s.groups),
    "",
    "![scores per category](charts/categories.svg)",
    "",
    ...(s.subgroups.length > 0
      ? [
          "## By subcategory",
          "",
          groupTable(s.subgroups),
          "",
          "![scores per subcategory](charts/subcategories.svg)",
          "",
        ]
      : []),
    ...checkerLines(report),
    ...cost,
    "## Errors",
    "",
    report.errors.count === 0
      ? "None."
      : [
          `${report.errors.count} questions ended in an error (scored as unanswered); the first:`,
          ...report.errors.first.map((e) => `- \`${e.id}\`: ${e.error}`),
        ].join("\n"),
    "",
  ].join("\n");
}

/** Writes report.json, report.md and charts/*.svg (and .png) into a run directory. */
export async function writeReport(
  outDir: string,
  examples: EvalExample[],
  records: ResultRecord[],
  scorer: Scorer,
): Promise<Report> {
  const info = readRunInfo(outDir);
  const report = buildReport(examples, records, scorer);
  if (info?.kind === "run") report.run = reportRun(info, records);
  const wanted = new Set(examples.map((e) => e.id));
  const charts = path.join(outDir, "charts");
  mkdirSync(charts, { recursive: true });
  writeFileSync(path.join(outDir, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(outDir, "report.md"), renderMarkdown(path.basename(outDir), report));
  const { groups, subgroups } = report.summary;
  const kept = records.filter((r) => wanted.has(r.id));
  const outcomes = checkedOutcomes(kept);
  const checked = outcomes.length > 0 && report.checker;
  const specs: [string, TopLevelSpec | null][] = [
    ["categories", scoreBars("score per category", groups)],
    ["subcategories", subgroups.length > 0 ? scoreBars("score per subcategory", subgroups) : null],
    ["latency", latencyHistogram(kept.map((r) => r.latencyMs))],
    [
      "risk-coverage",
      checked
        ? riskCoverageChart([
            { series: "checker confidence", points: riskCoverage(outcomes) },
            { series: "best possible ranking", points: optimalRiskCoverage(outcomes) },
          ])
        : null,
    ],
    ["reliability", checked ? reliabilityChart(report.checker?.calibration.bins ?? []) : null],
  ];
  for (const [name, spec] of specs) {
    if (!spec) continue;
    const svg = await renderSvg(spec);
    writeFileSync(path.join(charts, `${name}.svg`), svg);
    writeFileSync(path.join(charts, `${name}.png`), await svgToPng(svg));
  }
  return report;
}

interface RunSide {
  name: string;
  report: Report;
  records: ResultRecord[];
}

function deltaRows(
  a: { name: string; score: number }[],
  b: { name: string; score: number }[],
): string[] {
  const left = new Map(a.map((g) => [g.name, g.score]));
  const right = new Map(b.map((g) => [g.name, g.score]));
  const names = [...new Set([...left.keys(), ...right.keys()])].sort();
  return names.map((name) => {
    const x = left.get(name);
    const y = right.get(name);
    const delta = x === undefined || y === undefined ? "-" : signed(y - x);
    return `| ${name} | ${x?.toFixed(2) ?? "-"} | ${y?.toFixed(2) ?? "-"} | ${delta} |`;
  });
}

/** Per-group deltas of two runs and, over the questions both answered, who won each. */
export function compareRuns(a: RunSide, b: RunSide): string {
  const scoreOf = new Map(b.records.map((r) => [r.id, r.score.score]));
  let wins = 0;
  let losses = 0;
  let ties = 0;
  for (const r of a.records) {
    const other = scoreOf.get(r.id);
    if (other === undefined) continue;
    if (other > r.score.score) wins += 1;
    else if (other < r.score.score) losses += 1;
    else ties += 1;
  }
  const shared = wins + losses + ties;
  const sa = a.report.summary;
  const sb = b.report.summary;
  const header = [`| group | ${a.name} | ${b.name} | delta |`, "| --- | ---: | ---: | ---: |"];
  const onlyOne =
    shared < Math.max(sa.n, sb.n)
      ? [
          `${a.name} has ${sa.n} questions and ${b.name} ${sb.n}; the groups compare different question sets.`,
        ]
      : [];
  return [
    `# ${a.name} vs ${b.name}`,
    "",
    `Overall: ${sa.overall.toFixed(2)} -> ${sb.overall.toFixed(2)} (${signed(sb.overall - sa.overall)}). Parse@1: ${sa.parseRate.toFixed(2)}% -> ${sb.parseRate.toFixed(2)}%.`,
    `On the ${shared} questions both answered, ${b.name} is better on ${wins}, worse on ${losses}, equal on ${ties}.`,
    ...onlyOne,
    "",
    "## By category",
    "",
    ...header,
    ...deltaRows(sa.groups, sb.groups),
    "",
    "## By subcategory",
    "",
    ...header,
    ...deltaRows(sa.subgroups, sb.subgroups),
    "",
  ].join("\n");
}
