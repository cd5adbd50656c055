import { CsvSyntaxError, parseDelimited } from "./csv.js";
import { delimiterName, sniffDelimiter } from "./delimiter.js";
import { TableLoadError } from "./errors.js";
import { plural } from "./grid.js";
import { cellKindOfText, type RawSheet } from "./structure.js";

/** A delimited text as a sheet, and the field count of each of its records. */
export interface TextSheet {
  sheet: RawSheet;
  /** Fields each row had before the rows were padded to one width; 0 for a blank line. */
  widths: number[];
  warnings: string[];
}

/**
 * A CSV or TSV file as a sheet, for the structure reader: every record a row (a title line or a
 * note may have fewer fields: rows are padded to the widest), a blank line between two records
 * an empty row, each row's place the line its record starts on.
 */
export function textSheet(text: string, extension: string, file: string): TextSheet {
  const expected = extension === ".tsv" ? "\t" : ",";
  const delimiter = sniffDelimiter(text, expected, true);
  const warnings: string[] = [];
  if (delimiter !== expected) {
    warnings.push(
      `read as ${delimiterName(delimiter)}-separated: a ${extension} file, but its lines split on ${delimiterName(delimiter)}s, not ${delimiterName(expected)}s`,
    );
  }
  let records: ReturnType<typeof parseDelimited>;
  try {
    records = parseDelimited(text, delimiter);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new TableLoadError(file, error.message);
    throw error;
  }
  const lines = text.split(/\r\n|\r|\n/);
  const blank = (line: number) => (lines[line - 1] ?? "").trim() === "";
  const fields: string[][] = [];
  const places: number[] = [];
  const widths: number[] = [];
  for (const [i, record] of records.entries()) {
    const previous = records[i - 1];
    // A blank line next to a title or a note (one filled field) sets it apart; between two rows
    // of the table it is nothing, as pandas reads it.
    const apart = previous && (filled(previous.fields) <= 1 || filled(record.fields) <= 1);
    if (apart && record.line - 1 > previous.line && blank(record.line - 1)) {
      fields.push([]);
      places.push(record.line - 1);
      widths.push(0);
    }
    fields.push(record.fields);
    places.push(record.line);
    widths.push(record.fields.length);
  }
  const width = widths.reduce((widest, w) => Math.max(widest, w), 0);
  const cells = fields.map((row) =>
    Array.from({ length: width }, (_, c) => {
      const value = row[c] ?? "";
      return { text: value, kind: cellKindOfText(value) };
    }),
  );
  return {
    sheet: { cells, rowNumbers: places, merges: [], hiddenRows: [], hiddenColumns: [] },
    widths,
    warnings,
  };
}

function filled(fields: readonly string[]): number {
  return fields.filter((field) => field.trim() !== "").length;
}

/**
 * Refuses a table whose data rows do not have the header's field count, as a literal reading
 * does: the first such row, by its line.
 */
export function checkRagged(
  sheet: TextSheet,
  headerRow: number,
  rows: readonly number[],
  file: string,
): void {
  const expected = sheet.widths[headerRow] ?? 0;
  for (const r of rows) {
    const got = sheet.widths[r] ?? 0;
    if (got !== expected) {
      throw new TableLoadError(
        file,
        `ragged rows: line ${sheet.sheet.rowNumbers[r]} has ${plural(got, "field")}, the header has ${expected}`,
      );
    }
  }
}
