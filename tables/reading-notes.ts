import type { Column, TableRef } from "../blackboard/schemas.js";

/*
 * What the table context tells the model about how a file was read, so that the code it writes
 * matches the table it gets: which rows were the header, the title, the rows left out of the data
 * (totals, notes, hidden ones) and where they went, and per column its header path, its unit and
 * how its cells' text was read.
 */

const MAX_NOTE_CHARS = 160;
const MAX_LISTED = 8;

function places(list: readonly number[], unit: string): string {
  const shown = list.slice(0, MAX_LISTED).join(", ");
  const more = list.length > MAX_LISTED ? ` and ${list.length - MAX_LISTED} more` : "";
  return `${unit}${list.length === 1 ? "" : "s"} ${shown}${more}`;
}

/** The unit a table's origin numbers its rows in. */
export function rowUnit(ref: TableRef): string {
  switch (ref.origin?.format) {
    case "csv":
    case "tsv":
      return "line";
    case "xlsx":
    case "xlsm":
    case "xls":
      return "sheet row";
    default:
      return "row";
  }
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_NOTE_CHARS ? `${flat.slice(0, MAX_NOTE_CHARS - 1)}…` : flat;
}

/** The extra facts of a column, after its dtype: `unit USD; currency "$1,250" -> 1250; formula`. */
export function columnFacts(column: Column): string {
  const facts: string[] = [];
  if (column.unit) facts.push(`unit ${column.unit}`);
  if (column.reading) facts.push(column.reading);
  if (column.formula) facts.push("formulas, read from their stored values");
  if (column.source) facts.push(`renamed: ${column.source}`);
  return facts.join("; ");
}

/**
 * One line on how a table was read: a `fact` the code must know (the header, rows left out and
 * where), or words the file wrote around the data (its `title` and `note` lines), which a tight
 * context gives up before the column names.
 */
export interface ReadingLine {
  text: string;
  kind: "fact" | "title" | "note";
}

/** The line over a table's notes. */
export const NOTES_HEAD = "Notes around the table, left out of the data:";

/** Lines on how the table was read; none for a table read literally with nothing to say. */
export function readingLines(ref: TableRef): string[] {
  return readingPieces(ref).map((line) => line.text);
}

/** readingLines, each with its kind. */
export function readingPieces(ref: TableRef): ReadingLine[] {
  const reading = ref.reading;
  if (!reading) return [];
  const unit = rowUnit(ref);
  const out: ReadingLine[] = [];
  const lines = {
    push: (...texts: string[]) => {
      for (const text of texts) out.push({ text, kind: "fact" });
    },
  };
  if (reading.title?.length) {
    out.push({
      text: `Title above the table: ${reading.title.map((t) => JSON.stringify(clip(t))).join(" / ")}`,
      kind: "title",
    });
  }
  const paths = ref.columns.filter((column) => (column.path?.length ?? 0) > 1);
  if (paths[0]) {
    const depth = Math.max(...paths.map((column) => column.path?.length ?? 0));
    const where = reading.headerRows?.length ? ` (${places(reading.headerRows, unit)})` : "";
    lines.push(
      `Header of ${depth} rows${where}: names are their header paths joined with " / " (e.g. \`${paths[0].name}\`)`,
    );
  }
  if (reading.skipped?.length) lines.push(`Skipped as asked: ${places(reading.skipped, unit)}`);
  if (reading.repeatedHeaders?.length) {
    lines.push(
      `Rows repeating the header left out of the data: ${places(reading.repeatedHeaders, unit)}`,
    );
  }
  if (reading.groupColumn) {
    lines.push(
      `Column \`${reading.groupColumn}\` was added: the section or parent label each row sits under`,
    );
  }
  if (reading.totals) {
    const labels = [...new Set(reading.totals.labels)]
      .slice(0, 3)
      .map((l) => JSON.stringify(clip(l)));
    const where = reading.totals.table
      ? `they are in DataFrame \`${reading.totals.table}\` (same columns)`
      : "left out";
    lines.push(
      `Total rows left out of the data (${places(reading.totals.rows, unit)}: ${labels.join(", ")}): ` +
        `do not add them again; ${where}`,
    );
  }
  if (reading.notes?.length) {
    out.push({ text: NOTES_HEAD, kind: "note" });
    for (const note of reading.notes.slice(0, 5)) {
      out.push({ text: `- ${unit} ${note.row}: ${JSON.stringify(clip(note.text))}`, kind: "note" });
    }
  }
  const hidden = reading.hidden;
  if (hidden?.rows?.length) lines.push(`Hidden ${places(hidden.rows, unit)} left out`);
  if (hidden?.columns?.length) {
    lines.push(
      `Hidden column${hidden.columns.length === 1 ? "" : "s"} ${hidden.columns.join(", ")} left out`,
    );
  }
  if (hidden?.sheets?.length) {
    lines.push(
      `Hidden sheet${hidden.sheets.length === 1 ? "" : "s"} not loaded: ${hidden.sheets.map((s) => JSON.stringify(s)).join(", ")}`,
    );
  }
  const aside = reading.asideSheets ?? [];
  if (aside.length > 0) {
    const listed = aside.map((s) => `${JSON.stringify(s.sheet)} (${s.kind})`).join(", ");
    lines.push(`Sheets of contents and notes, not data, not loaded (--sheet loads one): ${listed}`);
    for (const s of aside.filter((s) => s.kind === "notes")) {
      const first = s.lines.find((line) => line.length > 20) ?? s.lines[0];
      if (first)
        out.push({
          text: `- sheet ${JSON.stringify(s.sheet)}: ${JSON.stringify(clip(first))}`,
          kind: "note",
        });
    }
  }
  if (reading.children?.length) {
    for (const child of reading.children) {
      lines.push(
        `Lists of records in \`${child.column}\` are the rows of DataFrame \`${child.table}\``,
      );
    }
  }
  return out;
}
