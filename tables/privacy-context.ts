import type { TableRef } from "../blackboard/schemas.js";
import type { ColumnFacts, TableFacts } from "./privacy-facts.js";

/*
 * A table as a prompt shows it under a privacy mode: `values`, its size and each column's name,
 * type and aggregates (counts, missing, min/max/mean of numbers); `schema`, the names and types
 * alone. Neither shows a cell, nor anything the reader took from the file's cells (titles, total
 * labels, notes, examples of how a column was read).
 */

export type PrivateMode = "values" | "schema";

const HEADLINE: Record<PrivateMode, string> = {
  values:
    "Privacy (values): the cells stay on this machine; this shows the columns with their types and aggregates only.",
  schema:
    "Privacy (schema): the cells stay on this machine; this shows the names and types of the columns only.",
};

/** A number as the context writes it, and as the scrub reads it back: six significant digits. */
export function shownNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(6)));
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function aggregates(column: ColumnFacts): string[] {
  const notes: string[] = [];
  if (column.numbers) {
    const { min, max, mean } = column.numbers;
    notes.push(`${shownNumber(min)} to ${shownNumber(max)}, mean ${shownNumber(mean)}`);
  } else if (column.booleans) {
    notes.push(`${column.booleans.trueCount} true, ${column.booleans.falseCount} false`);
  } else if (column.distinct !== undefined) {
    notes.push(`${plural(column.distinct, "distinct value")}`);
  }
  if (column.missing > 0) notes.push(`${column.missing} missing`);
  return notes;
}

/** What the reader found, without any text taken from cells. */
function readingFacts(ref: TableRef, mode: PrivateMode): string[] {
  const reading = ref.reading;
  if (!reading) return [];
  const lines: string[] = [];
  const depth = Math.max(0, ...ref.columns.map((c) => c.path?.length ?? 0));
  if (depth > 1)
    lines.push(`Header of ${depth} rows: names are their header paths joined with " / "`);
  if (reading.groupColumn) {
    lines.push(`Column \`${reading.groupColumn}\` was added: the section each row sits under`);
  }
  if (reading.totals) {
    const where = reading.totals.table ? `; they are in DataFrame \`${reading.totals.table}\`` : "";
    const count =
      mode === "values" ? plural(reading.totals.rows.length, "total row") : "Total rows";
    lines.push(`${count} left out of the data: do not add them again${where}`);
  }
  for (const child of reading.children ?? []) {
    lines.push(
      `Lists of records in \`${child.column}\` are the rows of DataFrame \`${child.table}\``,
    );
  }
  return lines;
}

function columnLine(column: ColumnFacts, ref: TableRef, mode: PrivateMode): string {
  const declared = ref.columns.find((c) => c.name === column.name);
  const unit = declared?.unit ? `; unit ${declared.unit}` : "";
  const base = `- \`${column.name}\` (${column.dtype}${unit})`;
  if (mode === "schema") return base;
  const notes = aggregates(column);
  return notes.length > 0 ? `${base}: ${notes.join("; ")}` : base;
}

/**
 * The context of one table under `mode`, cut to about `budgetChars` characters (a column line
 * at a time). `schema` leaves out the row count too: it shows names and types only.
 */
export function privateContext(
  ref: TableRef,
  facts: TableFacts,
  mode: PrivateMode,
  budgetChars: number,
): string {
  const size =
    mode === "values"
      ? `: ${plural(facts.rows, "row")}, ${plural(facts.columns.length, "column")}`
      : "";
  const head = [
    `Table \`${ref.name}\` (pandas DataFrame \`${ref.name}\`)${size}`,
    HEADLINE[mode],
    ...readingFacts(ref, mode),
    "Columns:",
  ];
  const lines = [...head];
  let used = head.join("\n").length;
  for (const [i, column] of facts.columns.entries()) {
    const line = columnLine(column, ref, mode);
    if (used + line.length + 1 > budgetChars && i > 0) {
      lines.push(`- ... and ${facts.columns.length - i} more columns`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.join("\n");
}

/** The numbers a `values` context shows: the scrub lets them through. */
export function contextNumbers(facts: TableFacts): number[] {
  const shown: number[] = [facts.rows, facts.columns.length];
  for (const column of facts.columns) {
    shown.push(column.missing);
    if (column.numbers) {
      for (const n of [column.numbers.min, column.numbers.max, column.numbers.mean]) {
        shown.push(n, Number(shownNumber(n)));
      }
    }
    if (column.booleans) shown.push(column.booleans.trueCount, column.booleans.falseCount);
    if (column.distinct !== undefined) shown.push(column.distinct);
  }
  return shown;
}
