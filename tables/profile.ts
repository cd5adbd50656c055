import { stat } from "node:fs/promises";
import type { TableRef } from "../blackboard/schemas.js";
import { localArtifact } from "../storage/artifacts.js";
import { WorkCache } from "../storage/bounded-cache.js";
import { inferDtype, isMissing, isNumericDtype, isTrue, numericValue } from "./dtypes.js";
import { readTable } from "./read.js";
import { columnFacts, readingLines } from "./reading-notes.js";
import { renderTable } from "./render.js";

export { renderTable } from "./render.js";

export const EXAMPLES_PER_COLUMN = 3;
/** Past either size a table is profiled by DuckDB instead of being parsed whole in Node. */
export const LARGE_TABLE_ROWS = 200_000;
export const LARGE_TABLE_BYTES = 20 * 1024 * 1024;

/** What a column's present (non-missing) values look like. */
export type ValueSummary =
  | { kind: "no-values" }
  | { kind: "range"; low: string; high: string }
  /** A numeric column none of whose values reads as a number. */
  | { kind: "unranged" }
  | { kind: "booleans"; trueCount: number; falseCount: number }
  /** Distinct count and the first distinct values in row order. */
  | { kind: "examples"; distinct: number; examples: string[] };

export interface ColumnSummary {
  name: string;
  dtype: string;
  missing: number;
  values: ValueSummary;
}

/** Everything a profile shows, however it was computed. */
export interface TableSummary {
  rowCount: number;
  columns: ColumnSummary[];
  /** The first rows as stored (missing cells empty); one more than shown marks a cut. */
  firstRows: string[][];
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function shorten(value: string, maxWidth: number): string {
  const chars = Array.from(value);
  return chars.length > maxWidth ? `${chars.slice(0, Math.max(maxWidth - 1, 0)).join("")}…` : value;
}

function summarizeValues(values: string[], dtype: string): Omit<ColumnSummary, "name" | "dtype"> {
  const present = values.filter((value) => !isMissing(value));
  const missing = values.length - present.length;
  if (present.length === 0) return { missing, values: { kind: "no-values" } };
  if (isNumericDtype(dtype)) {
    let low: { n: number; text: string } | null = null;
    let high: { n: number; text: string } | null = null;
    for (const text of present) {
      const n = numericValue(text);
      if (n === null || Number.isNaN(n)) continue;
      if (low === null || n < low.n) low = { n, text: text.trim() };
      if (high === null || n > high.n) high = { n, text: text.trim() };
    }
    return {
      missing,
      values:
        low && high ? { kind: "range", low: low.text, high: high.text } : { kind: "unranged" },
    };
  }
  if (dtype === "bool") {
    const yes = present.filter(isTrue).length;
    return {
      missing,
      values: { kind: "booleans", trueCount: yes, falseCount: present.length - yes },
    };
  }
  const distinct = new Set(present);
  return {
    missing,
    values: {
      kind: "examples",
      distinct: distinct.size,
      examples: [...distinct].slice(0, EXAMPLES_PER_COLUMN),
    },
  };
}

/** Summarizes a table parsed whole in Node. */
export async function summarizeInNode(ref: TableRef, sampleRows: number): Promise<TableSummary> {
  const data = await readTable(ref);
  const columns = data.columns.map((name, i) => {
    const dtype = ref.columns[i]?.dtype ?? inferDtype(data.rows, i);
    const values = data.rows.map((row) => row[i] ?? "");
    return { name, dtype, ...summarizeValues(values, dtype) };
  });
  return {
    rowCount: data.rows.length,
    columns,
    firstRows: data.rows.slice(0, Math.max(sampleRows, 0) + 1),
  };
}

/** What one column holds: a range for numbers, counts for booleans, examples otherwise. */
function describeColumn(column: ColumnSummary, maxWidth: number): string {
  const notes: string[] = [];
  const values = column.values;
  switch (values.kind) {
    case "no-values":
      notes.push("no values");
      break;
    case "range":
      notes.push(`${values.low} to ${values.high}`);
      break;
    case "booleans":
      notes.push(`${values.trueCount} true, ${values.falseCount} false`);
      break;
    case "examples": {
      const examples = values.examples.map((value) => JSON.stringify(shorten(value, maxWidth)));
      notes.push(`${values.distinct} distinct, e.g. ${examples.join(", ")}`);
      break;
    }
    case "unranged":
      break;
  }
  if (column.missing > 0) notes.push(`${column.missing} missing`);
  return notes.join("; ");
}

/** The profile text of a summary; see profileTable. */
export function formatProfile(
  ref: TableRef,
  summary: TableSummary,
  opts: { sampleRows?: number; maxWidth?: number } = {},
): string {
  const { sampleRows = 5, maxWidth = 40 } = opts;
  const { rowCount, columns } = summary;
  const lines = [
    `Table \`${ref.name}\` (pandas DataFrame \`${ref.name}\`): ` +
      `${count(rowCount, "row")}, ${count(columns.length, "column")}`,
    ...readingLines(ref),
    "Columns:",
  ];
  const facts = new Map(ref.columns.map((column) => [column.name, columnFacts(column)]));
  for (const column of columns) {
    const extra = facts.get(column.name);
    const described = [describeColumn(column, maxWidth), extra].filter(Boolean).join("; ");
    lines.push(`- \`${column.name}\` (${column.dtype}): ${described}`);
  }
  const shown = Math.min(Math.max(sampleRows, 0), rowCount);
  if (rowCount === 0) {
    lines.push("The table has no rows.");
  } else if (shown > 0) {
    lines.push(
      shown < rowCount ? `First ${shown} of ${rowCount} rows:` : `All ${count(rowCount, "row")}:`,
    );
    const names = columns.map((column) => column.name);
    lines.push(renderTable(names, summary.firstRows, { maxRows: shown, maxWidth }));
  }
  return lines.join("\n");
}

/** Whether a table is too big to parse whole in Node for a profile. */
export async function isLargeTable(ref: TableRef): Promise<boolean> {
  if (ref.rows > LARGE_TABLE_ROWS) return true;
  try {
    return (await stat(await localArtifact(ref))).size > LARGE_TABLE_BYTES;
  } catch {
    // A missing artifact is reported by the reader with a proper message.
    return false;
  }
}

const profiles = new WorkCache<string>(64);

/**
 * A compact description of a table for prompts: name, size, each column with its
 * dtype and a summary of its values, then the first `sampleRows` rows (default 5)
 * with cells cut to `maxWidth` characters (default 40). Large tables are summarized
 * by DuckDB rather than parsed whole in Node; the text is the same. The planner, coder and
 * answerer each ask for it, so the last few are kept, keyed by the reference (content hash
 * included) and the options.
 */
export function profileTable(
  ref: TableRef,
  opts: { sampleRows?: number; maxWidth?: number } = {},
): Promise<string> {
  const key = JSON.stringify([ref, opts.sampleRows ?? null, opts.maxWidth ?? null]);
  return profiles.obtain(key, () => computeProfile(ref, opts));
}

async function computeProfile(
  ref: TableRef,
  opts: { sampleRows?: number; maxWidth?: number },
): Promise<string> {
  const sampleRows = opts.sampleRows ?? 5;
  const summary = (await isLargeTable(ref))
    ? // DuckDB's native module takes ~200 ms to load: only tables this large pay for it.
      await (await import("./profile-duckdb.js")).summarizeWithDuckDb(ref, {
        sampleRows,
        examples: EXAMPLES_PER_COLUMN,
      })
    : await summarizeInNode(ref, sampleRows);
  return formatProfile(ref, summary, opts);
}
