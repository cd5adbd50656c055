import type { Sandbox } from "../../tools/sandbox/types.js";
import type { ChartRunner, EvalExample } from "../types.js";

export const Y_MARKER = "__TABLEMINDS_Y__";

/** How the y values of each TableBench chart type are read back from matplotlib. */
const EXTRACT: Record<string, string> = {
  line: "[list(l.get_ydata()) for l in ax.get_lines()]",
  bar: "[p.get_height() for p in ax.patches]",
  hbar: "[p.get_width() for p in ax.patches]",
  pie: "[round((p.theta2 - p.theta1) / 360.0, 2) for p in ax.patches]",
  area: "[[v for v in c.get_paths()[0].vertices[:, 1] if v != 0] for c in ax.collections if c.get_paths()]",
  radar: "[list(l.get_ydata())[:-1] for l in ax.get_lines()]",
  scatter: "[[o[1] for o in c.get_offsets()] for c in ax.collections]",
};
/** Waterfall charts are drawn as bars. */
const ALIASES: Record<string, string> = { waterfall: "bar" };

export function chartKind(chartType: string | undefined): string {
  const kind = ALIASES[chartType ?? ""] ?? chartType ?? "bar";
  return kind in EXTRACT ? kind : "bar";
}

/**
 * The script that runs chart code as upstream does (table.csv beside it, the Agg backend,
 * show() a no-op) and prints the drawn y values as JSON on a marker line.
 */
export function chartScript(code: string, example: EvalExample): string {
  const table = example.tables[0];
  const data =
    table && "columns" in table
      ? { columns: table.columns, data: table.data }
      : { columns: [], data: [] };
  return [
    "import json, math",
    "import matplotlib",
    'matplotlib.use("Agg")',
    "import matplotlib.pyplot as plt",
    "import pandas as pd",
    "plt.show = lambda *args, **kwargs: None",
    `_t = json.loads(${JSON.stringify(JSON.stringify(data))})`,
    'pd.DataFrame(_t["data"], columns=_t["columns"]).to_csv("table.csv", index=False)',
    // Upstream's chart code reads table.csv itself; code written for our sandbox expects df.
    'df = pd.read_csv("table.csv")',
    code,
    "ax = plt.gca()",
    `_y = ${EXTRACT[chartKind(example.chartType)]}`,
    "def _clean(v):",
    "    if isinstance(v, (list, tuple)): return [_clean(x) for x in v]",
    "    f = float(v)",
    "    return None if math.isnan(f) else f",
    `print(${JSON.stringify(Y_MARKER)} + json.dumps(_clean(_y)))`,
  ].join("\n");
}

type Nested = number | null | Nested[];

function flatten(values: Nested[]): (number | null)[] {
  return values.flatMap((v) => (Array.isArray(v) ? flatten(v) : [v]));
}

const round2 = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);

/** Upstream's compare: sort both, same length, equal at 2 decimals (NaN only matches NaN). */
export function sameValues(a: (number | null)[], b: (number | null)[]): boolean {
  if (a.length !== b.length) return false;
  const order = (x: number | null, y: number | null) =>
    (x ?? Number.NEGATIVE_INFINITY) - (y ?? Number.NEGATIVE_INFINITY);
  const sa = a.map(round2).sort(order);
  const sb = b.map(round2).sort(order);
  return sa.every((v, i) => v === sb[i]);
}

/** The gold `y_references = [[...], ...]` as numbers. */
export function parseReferences(gold: string): Nested[] | null {
  const body = /y_references\s*=\s*(\[[\s\S]*\])/.exec(gold)?.[1];
  if (!body) return null;
  try {
    return JSON.parse(body.replace(/\b(?:np\.)?nan\b/gi, "null")) as Nested[];
  } catch {
    return null;
  }
}

/** Pass@1 of one chart: the drawn y values match the references (pie: as shares of the total). */
export function chartMatches(kind: string, references: Nested[], drawn: Nested[]): boolean {
  const refs = flatten(references);
  const preds = flatten(drawn);
  if (kind === "pie") {
    const total = refs.reduce<number>((sum, v) => sum + (v ?? 0), 0);
    return sameValues(
      refs.map((v) => (v === null || total === 0 ? null : v / total)),
      preds,
    );
  }
  return sameValues(refs, preds);
}

export async function chartPasses(
  code: string,
  example: EvalExample,
  run: ChartRunner,
): Promise<boolean> {
  const references = parseReferences(example.gold);
  if (!references) return false;
  const result = await run(chartScript(code, example), 15_000);
  if (!result.ok) return false;
  const line = result.stdout.split("\n").findLast((l) => l.startsWith(Y_MARKER));
  if (!line) return false;
  try {
    const drawn = JSON.parse(line.slice(Y_MARKER.length)) as Nested[];
    return chartMatches(chartKind(example.chartType), references, drawn);
  } catch {
    return false;
  }
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
