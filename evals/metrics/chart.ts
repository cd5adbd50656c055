import { readFileSync } from "node:fs";
import { z } from "zod";
import {
  type ChartKind,
  ChartKindSchema,
  type ChartReading,
  ChartReadingSchema,
  type Figure,
} from "../../blackboard/schemas.js";
import type { Sandbox } from "../../sandbox/types.js";
import type { ChartRunner, EvalExample } from "../types.js";

export const VERDICT_MARKER = "__TABLEMINDS_CHART__";
const COMPARE_MARKER = "__TABLEMINDS_CHART_COMPARE__";
/** Upstream gives each of its two runs of the chart code 15 s. */
export const CHART_RUN_SECONDS = 15;
/** The sandbox's limit for the whole script: both runs, and time to start and read back. */
export const CHART_SCRIPT_TIMEOUT_MS = 2 * CHART_RUN_SECONDS * 1000 + 5_000;
/** The comparison alone: a few lists of numbers. */
const COMPARE_TIMEOUT_MS = 10_000;

const sources = new Map<string, string>();

/** A Python file's text, read once. */
function source(relative: string): string {
  let text = sources.get(relative);
  if (text === undefined) {
    text = readFileSync(new URL(relative, import.meta.url), "utf8");
    sources.set(relative, text);
  }
  return text;
}

/** The sandbox's reader of drawn values (one engine: the sandbox's figures use it too). */
const READING = "../../sandbox/chart_reading.py";
/** Upstream's comparison (chart_metric_utils). */
const COMPARING = "./chart_compare.py";
/** chart_parser.py: upstream's Visualization parser, rewritten to behave the same. */
const PARSING = "./chart_parser.py";

/**
 * The script that runs one chart as upstream's parser does: table.csv written from the row
 * dicts, then the code run twice in one process with no figure closed in between (the second
 * run with the references appended). It prints one marker line and leaves its figures open:
 * the sandbox reads them as it reads any run's (sandbox/figures.py).
 */
export function chartScript(code: string, example: EvalExample): string {
  const table = example.tables[0];
  const request = {
    code,
    answer: example.gold,
    // Upstream formats the missing chart type of a malformed row as Python would: "None".
    chart_type: example.chartType ?? "None",
    columns: table && "columns" in table ? table.columns : [],
    data: table && "columns" in table ? table.data : [],
  };
  const program = [source(READING), source(COMPARING), source(PARSING)].join("\n\n");
  return `import json\n_REQUEST = json.loads(${JSON.stringify(JSON.stringify(request))})\n${program}`;
}

/** What upstream's parser records for a chart: whether the code ran alone, and the verdict. */
export interface ChartVerdict {
  /** ECR@1: the first run, of the code alone, raised nothing. */
  ecr: boolean;
  /** What the second run printed: true or false; null for anything else (Parse@1 fails). */
  verdict: boolean | null;
}

/** A marker line that already holds a verdict (a runner that judged the chart itself). */
export function readVerdict(stdout: string): ChartVerdict | null {
  const report = readMarker(stdout);
  if (!report || "second" in report) return null;
  return { ecr: report.ecr === true, verdict: report.verdict ?? null };
}

const JudgedSchema = z.object({
  ecr: z.unknown(),
  verdict: z.boolean().nullable().catch(null).optional(),
});

/** The script's own report: the first run's outcome and what the second run left. */
const RunReportSchema = z.object({
  ecr: z.boolean(),
  second: z.object({
    /** It raised nothing. */
    ran: z.boolean(),
    /** The code printed something: upstream's verdict is then not all the run printed. */
    printed: z.boolean(),
    references: ChartReadingSchema,
  }),
});
type RunReport = z.infer<typeof RunReportSchema>;

function readMarker(stdout: string): RunReport | z.infer<typeof JudgedSchema> | null {
  const line = stdout.split("\n").findLast((l) => l.startsWith(VERDICT_MARKER));
  if (!line) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(line.slice(VERDICT_MARKER.length));
  } catch {
    return null;
  }
  const run = RunReportSchema.safeParse(raw);
  if (run.success) return run.data;
  const judged = JudgedSchema.safeParse(raw);
  return judged.success ? judged.data : null;
}

/**
 * What upstream's `get_<type>_y_predictions(plt)` reads at the end of its second run: the
 * sandbox's reading of pyplot's current axes. With no figure open, `plt.gca()` makes an empty
 * one (every reading empty); a current figure with no axes gets one the same way.
 */
export function currentReading(figures: readonly Figure[], kind: ChartKind): ChartReading {
  const read = kind === "waterfall" ? "bar" : kind;
  const current = figures.find((f) => f.current)?.axes.find((a) => a.current);
  if (!current) return [];
  return current.readings[read] ?? null;
}

/** The comparison script: upstream's metric over the references and the values read. */
export function compareScript(
  kind: ChartKind,
  references: NonNullable<ChartReading>,
  predictions: NonNullable<ChartReading>,
): string {
  const request = { chart_type: kind, references, predictions };
  return `import json\n_COMPARE = json.loads(${JSON.stringify(JSON.stringify(request))})\n${source(COMPARING)}`;
}

/** Runs upstream's comparison in Python (its rounding and NaN sorting are Python's). */
async function compared(
  run: ChartRunner,
  kind: ChartKind,
  references: NonNullable<ChartReading>,
  predictions: NonNullable<ChartReading>,
): Promise<boolean | null> {
  const result = await run(compareScript(kind, references, predictions), COMPARE_TIMEOUT_MS);
  const line = result.ok
    ? result.stdout.split("\n").findLast((l) => l.startsWith(COMPARE_MARKER))
    : undefined;
  if (!line) return null;
  const parsed = z
    .object({ verdict: z.boolean().nullable() })
    .safeParse(JSON.parse(line.slice(COMPARE_MARKER.length)));
  return parsed.success ? parsed.data.verdict : null;
}

/**
 * Judges chart code as upstream's parser does, through the sandbox's own figure reading: the
 * script runs the code twice; the sandbox reads the figures it leaves (as for any run); the
 * current axes' reading of the chart type is compared with the references. The verdict is
 * null (no Parse@1) when the second run raised, printed anything of its own, names no chart
 * type upstream reads, or its reading raised. Null altogether when the script itself failed.
 */
export async function judgeChart(
  code: string,
  example: EvalExample,
  run: ChartRunner,
): Promise<ChartVerdict | null> {
  const result = await run(chartScript(code, example), CHART_SCRIPT_TIMEOUT_MS);
  if (!result.ok) return null;
  const report = readMarker(result.stdout);
  if (!report) return null;
  if (!("second" in report)) return readVerdict(result.stdout);
  const { ecr, second } = report;
  const kind = ChartKindSchema.safeParse(example.chartType ?? "None");
  if (!second.ran || second.printed || !kind.success || second.references === null) {
    return { ecr, verdict: null };
  }
  const predictions = currentReading(result.figures ?? [], kind.data);
  if (predictions === null) return { ecr, verdict: null };
  return { ecr, verdict: await compared(run, kind.data, second.references, predictions) };
}

/** Pass@1 of one chart: upstream's second run printed exactly `True`. */
export async function chartPasses(
  code: string,
  example: EvalExample,
  run: ChartRunner,
): Promise<boolean> {
  return (await judgeChart(code, example, run))?.verdict === true;
}

/**
 * Runs chart scripts in a sandbox (the local pool by default): no network, no stray files.
 * The figures a script leaves come back read, as from any run.
 */
export function sandboxChartRunner(sandbox: Sandbox): ChartRunner {
  return async (code, timeoutMs) => {
    const result = await sandbox.execute({ code, tables: [], timeoutMs, outputBytes: 1024 * 1024 });
    return {
      ok: result.ok,
      stdout: result.stdout,
      error: result.error ? `${result.error.type}: ${result.error.message}` : undefined,
      ...(result.figures ? { figures: result.figures } : {}),
    };
  };
}
