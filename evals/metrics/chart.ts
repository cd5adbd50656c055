import { readFileSync } from "node:fs";
import type { Sandbox } from "../../tools/sandbox/types.js";
import type { ChartRunner, EvalExample } from "../types.js";

export const VERDICT_MARKER = "__TABLEMINDS_CHART__";
/** Upstream gives each of its two runs of the chart code 15 s. */
export const CHART_RUN_SECONDS = 15;
/** The sandbox's limit for the whole script: both runs, and time to start and read back. */
export const CHART_SCRIPT_TIMEOUT_MS = 2 * CHART_RUN_SECONDS * 1000 + 5_000;

let parserSource: string | undefined;

/** chart_parser.py: upstream's Visualization parser, rewritten to behave the same. */
function parser(): string {
  parserSource ??= readFileSync(new URL("./chart_parser.py", import.meta.url), "utf8");
  return parserSource;
}

/**
 * The script that scores one chart as upstream's parser does: table.csv written from the
 * row dicts, then the code run twice in one process with no figure closed in between (the
 * second run with the references and the reading code appended). It prints one marker line.
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
  return `import json\n_REQUEST = json.loads(${JSON.stringify(JSON.stringify(request))})\n${parser()}`;
}

/** What upstream's parser records for a chart: whether the code ran alone, and the verdict. */
export interface ChartVerdict {
  /** ECR@1: the first run, of the code alone, raised nothing. */
  ecr: boolean;
  /** What the second run printed: true or false; null for anything else (Parse@1 fails). */
  verdict: boolean | null;
}

export function readVerdict(stdout: string): ChartVerdict | null {
  const line = stdout.split("\n").findLast((l) => l.startsWith(VERDICT_MARKER));
  if (!line) return null;
  try {
    const parsed = JSON.parse(line.slice(VERDICT_MARKER.length)) as Partial<ChartVerdict>;
    return {
      ecr: parsed.ecr === true,
      verdict: typeof parsed.verdict === "boolean" ? parsed.verdict : null,
    };
  } catch {
    return null;
  }
}

/** Runs the chart code as upstream's parser does; null when the script itself failed. */
export async function judgeChart(
  code: string,
  example: EvalExample,
  run: ChartRunner,
): Promise<ChartVerdict | null> {
  const result = await run(chartScript(code, example), CHART_SCRIPT_TIMEOUT_MS);
  return result.ok ? readVerdict(result.stdout) : null;
}

/** Pass@1 of one chart: upstream's second run printed exactly `True`. */
export async function chartPasses(
  code: string,
  example: EvalExample,
  run: ChartRunner,
): Promise<boolean> {
  return (await judgeChart(code, example, run))?.verdict === true;
}

/** Runs chart scripts in a sandbox (the local pool by default): no network, no stray files. */
export function sandboxChartRunner(sandbox: Sandbox): ChartRunner {
  return async (code, timeoutMs) => {
    const result = await sandbox.execute({ code, tables: [], timeoutMs, outputBytes: 1024 * 1024 });
    return {
      ok: result.ok,
      stdout: result.stdout,
      error: result.error ? `${result.error.type}: ${result.error.message}` : undefined,
    };
  };
}
