/**
 * How a reading of a sheet or a TableBench table compares with the structure a careful analyst
 * records (tests/fixtures/messy): header paths present among the loaded columns, titles, total
 * and note rows found and taken wrongly. Used by bench/messy-tables.ts.
 */
import type { TableRef } from "../../blackboard/schemas.js";

/** Text as compared here: NFKC, one space for any run of white space, trimmed, lower case. */
export function norm(text: string): string {
  return text.normalize("NFKC").replace(/\s+/g, " ").trim().toLowerCase();
}

/** The data tables of one sheet or source: not the `<name>_totals` tables beside them. */
export function dataTables(tables: readonly TableRef[]): TableRef[] {
  const totals = new Set(tables.map((t) => t.reading?.totals?.table).filter(Boolean));
  return tables.filter((t) => !totals.has(t.name));
}

/**
 * What a column can be called: its header path joined, its name, and for a repeated name the
 * loader renamed (`League_2` beside `League`) the name it repeats.
 */
function labelsOf(column: TableRef["columns"][number], names: ReadonlySet<string>): string[] {
  const labels = [column.name];
  if (column.path) labels.push(column.path.join(" / "));
  const repeated = /^(.*)_\d+$/.exec(column.name)?.[1];
  if (repeated !== undefined && names.has(repeated)) labels.push(repeated);
  return labels.map(norm);
}

/**
 * How many expected header paths are found, each on a column of its own: a column whose label
 * is the path joined with " / ", or, in a table whose title line is the path's first level, the
 * rest of it. `upperOnly` judges only the first level (the lower one is the annotator's).
 */
export function pathsFound(
  expected: readonly (readonly string[])[],
  tables: readonly TableRef[],
  upperOnly = false,
): number {
  const used = new Set<string>();
  let found = 0;
  for (const path of expected) {
    const whole = norm(path.join(" / "));
    const rest = norm(path.slice(1).join(" / "));
    const top = norm(path[0] ?? "");
    const hit = tables.some((table) => {
      const names = new Set(table.columns.map((c) => c.name));
      const titled = (table.reading?.title ?? []).some((line) => norm(line) === top);
      return table.columns.some((column, c) => {
        const key = `${table.name}\0${c}`;
        if (used.has(key)) return false;
        const labels = labelsOf(column, names);
        const upper = norm(column.path?.[0] ?? column.name);
        const match = upperOnly
          ? upper === top || labels.includes(top)
          : labels.includes(whole) || (titled && path.length > 1 && labels.includes(rest));
        if (match) used.add(key);
        return match;
      });
    });
    if (hit) found++;
  }
  return found;
}

/** Whether a title is among the title lines the reading gives (one line, or inside one). */
export function titleFound(title: string, tables: readonly TableRef[]): boolean {
  const wanted = norm(title);
  return tables.some((t) => (t.reading?.title ?? []).some((line) => norm(line).includes(wanted)));
}

export interface RowsScore {
  expected: number;
  found: number;
  /** Rows so taken that the expectation does not list. */
  wrong: number;
}

/** Expected rows against the rows a reading took (both as places: sheet rows, 1-based). */
export function rowsScore(expected: readonly number[], taken: readonly number[]): RowsScore {
  const want = new Set(expected);
  const got = new Set(taken);
  return {
    expected: want.size,
    found: [...want].filter((row) => got.has(row)).length,
    wrong: [...got].filter((row) => !want.has(row)).length,
  };
}

/** The rows the reading of these tables took as totals (places). */
export function totalRows(tables: readonly TableRef[]): number[] {
  return tables.flatMap((t) => t.reading?.totals?.rows ?? []);
}

/** The rows the reading of these tables took as notes (places). */
export function noteRows(tables: readonly TableRef[]): number[] {
  return tables.flatMap((t) => (t.reading?.notes ?? []).map((note) => note.row));
}
