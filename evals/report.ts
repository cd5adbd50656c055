import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { latencyHistogram, renderSvg, scoreBars } from "./charts.js";
import type { ResultRecord } from "./results-file.js";
import type { DatasetSummary, EvalExample, Scorer } from "./types.js";

export interface Report {
  summary: DatasetSummary;
  latencyMs: { mean: number; p50: number; p90: number; p99: number };
  perQuestion: { promptTokens: number; completionTokens: number; llmCalls: number };
  errors: { count: number; first: { id: string; error: string }[] };
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

const mean = (values: number[]) =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
const fixed = (n: number, places = 1) => Number(n.toFixed(places));

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
    },
    errors: {
      count: errors.length,
      first: errors.slice(0, 5).map((r) => ({ id: r.id, error: r.error ?? "" })),
    },
  };
}

export function renderMarkdown(name: string, report: Report): string {
  const s = report.summary;
  const table = (rows: { name: string; n: number; metric: string; score: number }[]) =>
    [
      "| group | questions | metric | score |",
      "| --- | ---: | --- | ---: |",
      ...rows.map((g) => `| ${g.name} | ${g.n} | ${g.metric} | ${g.score.toFixed(2)} |`),
    ].join("\n");
  return [
    `# ${name}: ${s.dataset}`,
    "",
    `Overall: **${s.overall.toFixed(2)}** over ${s.n} questions. Parse@1: ${s.parseRate.toFixed(2)}%.`,
    "",
    "## By category",
    "",
    table(s.groups),
    "",
    "![scores per category](charts/categories.svg)",
    "",
    "## By subcategory",
    "",
    table(s.subgroups),
    "",
    "![scores per subcategory](charts/subcategories.svg)",
    "",
    "## Cost",
    "",
    `Latency per question: mean ${report.latencyMs.mean} ms, p50 ${report.latencyMs.p50} ms, p90 ${report.latencyMs.p90} ms, p99 ${report.latencyMs.p99} ms.`,
    `Per question: ${report.perQuestion.llmCalls} model calls, ${report.perQuestion.promptTokens} prompt and ${report.perQuestion.completionTokens} completion tokens.`,
    "",
    "![latency](charts/latency.svg)",
    "",
    "## Errors",
    "",
    report.errors.count === 0
      ? "None."
      : [
          `${report.errors.count} questions failed to run; the first:`,
          ...report.errors.first.map((e) => `- \`${e.id}\`: ${e.error}`),
        ].join("\n"),
    "",
  ].join("\n");
}

/** Writes report.json, report.md and charts/*.svg into a run directory. */
export async function writeReport(
  outDir: string,
  examples: EvalExample[],
  records: ResultRecord[],
  scorer: Scorer,
): Promise<Report> {
  const report = buildReport(examples, records, scorer);
  const charts = path.join(outDir, "charts");
  mkdirSync(charts, { recursive: true });
  writeFileSync(path.join(outDir, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(outDir, "report.md"), renderMarkdown(path.basename(outDir), report));
  writeFileSync(
    path.join(charts, "categories.svg"),
    await renderSvg(scoreBars("score per category", report.summary.groups)),
  );
  writeFileSync(
    path.join(charts, "subcategories.svg"),
    await renderSvg(scoreBars("score per subcategory", report.summary.subgroups)),
  );
  writeFileSync(
    path.join(charts, "latency.svg"),
    await renderSvg(latencyHistogram(records.map((r) => r.latencyMs))),
  );
  return report;
}

/** Per-group deltas of two runs and, over shared questions, who won each. */
export function compareRuns(
  a: { name: string; report: Report; records: ResultRecord[] },
  b: { name: string; report: Report; records: ResultRecord[] },
): string {
  const groups = new Map(b.report.summary.groups.map((g) => [g.name, g]));
  const rows = a.report.summary.groups.map((g) => {
    const other = groups.get(g.name);
    const delta = other ? other.score - g.score : Number.NaN;
    return `| ${g.name} | ${g.score.toFixed(2)} | ${other?.score.toFixed(2) ?? "-"} | ${Number.isNaN(delta) ? "-" : (delta >= 0 ? "+" : "") + delta.toFixed(2)} |`;
  });
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
  const overall = b.report.summary.overall - a.report.summary.overall;
  return [
    `# ${a.name} vs ${b.name}`,
    "",
    `Overall: ${a.report.summary.overall.toFixed(2)} -> ${b.report.summary.overall.toFixed(2)} (${overall >= 0 ? "+" : ""}${overall.toFixed(2)}).`,
    `On the ${wins + losses + ties} questions both answered, ${b.name} is better on ${wins}, worse on ${losses}, equal on ${ties}.`,
    "",
    `| group | ${a.name} | ${b.name} | delta |`,
    "| --- | ---: | ---: | ---: |",
    ...rows,
    "",
  ].join("\n");
}
