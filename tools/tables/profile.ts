import type { TableRef } from "../../blackboard/schemas.js";
import { inferDtype, isMissing, isNumericDtype, isTrue, numericValue } from "./dtypes.js";
import { readTable } from "./read.js";
import { renderTable } from "./render.js";

export { renderTable } from "./render.js";

const EXAMPLES_PER_COLUMN = 3;

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function shorten(value: string, maxWidth: number): string {
  const chars = Array.from(value);
  return chars.length > maxWidth ? `${chars.slice(0, Math.max(maxWidth - 1, 0)).join("")}…` : value;
}

/** What one column holds: a range for numbers, counts for booleans, examples otherwise. */
function describeColumn(values: string[], dtype: string, maxWidth: number): string {
  const present = values.filter((value) => !isMissing(value));
  const missing = values.length - present.length;
  const notes: string[] = [];
  if (present.length === 0) {
    notes.push("no values");
  } else if (isNumericDtype(dtype)) {
    let low: { n: number; text: string } | null = null;
    let high: { n: number; text: string } | null = null;
    for (const text of present) {
      const n = numericValue(text);
      if (n === null || Number.isNaN(n)) continue;
      if (low === null || n < low.n) low = { n, text: text.trim() };
      if (high === null || n > high.n) high = { n, text: text.trim() };
    }
    if (low && high) notes.push(`${low.text} to ${high.text}`);
  } else if (dtype === "bool") {
    const yes = present.filter(isTrue).length;
    notes.push(`${yes} true, ${present.length - yes} false`);
  } else {
    const distinct = new Set(present);
    const examples = [...distinct]
      .slice(0, EXAMPLES_PER_COLUMN)
      .map((value) => JSON.stringify(shorten(value, maxWidth)));
    notes.push(`${distinct.size} distinct, e.g. ${examples.join(", ")}`);
  }
  if (missing > 0) notes.push(`${missing} missing`);
  return notes.join("; ");
}

/**
 * A compact description of a table for prompts: name, size, each column with its
 * dtype and a summary of its values, then the first `sampleRows` rows (default 5)
 * with cells cut to `maxWidth` characters (default 40).
 */
export async function profileTable(
  ref: TableRef,
  opts: { sampleRows?: number; maxWidth?: number } = {},
): Promise<string> {
  const { sampleRows = 5, maxWidth = 40 } = opts;
  const data = await readTable(ref);
  const rowCount = data.rows.length;
  const lines = [
    `Table \`${ref.name}\` (pandas DataFrame \`${ref.name}\`): ` +
      `${count(rowCount, "row")}, ${count(data.columns.length, "column")}`,
    "Columns:",
  ];
  for (const [i, column] of data.columns.entries()) {
    const dtype = ref.columns[i]?.dtype ?? inferDtype(data.rows, i);
    const values = data.rows.map((row) => row[i] ?? "");
    lines.push(`- \`${column}\` (${dtype}): ${describeColumn(values, dtype, maxWidth)}`);
  }
  const shown = Math.min(Math.max(sampleRows, 0), rowCount);
  if (rowCount === 0) {
    lines.push("The table has no rows.");
  } else if (shown > 0) {
    lines.push(
      shown < rowCount ? `First ${shown} of ${rowCount} rows:` : `All ${count(rowCount, "row")}:`,
    );
    lines.push(renderTable(data.columns, data.rows, { maxRows: shown, maxWidth }));
  }
  return lines.join("\n");
}
