import type { CsvRecord } from "./csv.js";
import { sniffDelimiter } from "./delimiter.js";
import { delimitedRecords, delimiterWarning, expectedDelimiter, raggedRow } from "./grid.js";
import { type RawSheet, rawSheetFromRows } from "./structure.js";

/** A delimited text as a sheet, and the field count of each of its records. */
export interface TextSheet {
  sheet: RawSheet;
  /** Fields each row had before the rows were padded to one width; 0 for a blank line. */
  widths: number[];
  warnings: string[];
  /** The records as parsed, and the separator they were split on (for a literal reading). */
  parsed: { delimiter: string; records: CsvRecord[] };
}

/**
 * A CSV or TSV file as a sheet, for the structure reader: every record a row (a title line or a
 * note may have fewer fields: rows are padded to the widest), a blank line between two records
 * an empty row, each row's place the line its record starts on.
 */
export function textSheet(text: string, extension: string, file: string): TextSheet {
  const delimiter = sniffDelimiter(text, expectedDelimiter(extension), true);
  const resplit = delimiterWarning(extension, delimiter, "mostly");
  const records = delimitedRecords(text, delimiter, file);
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
  const [header = [], ...rows] = fields;
  const sheet = rawSheetFromRows(header, rows, { header: places[0] ?? 1, rows: places.slice(1) });
  return { sheet, widths, warnings: resplit ? [resplit] : [], parsed: { delimiter, records } };
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
      throw raggedRow(file, sheet.sheet.rowNumbers[r] ?? r + 1, got, expected);
    }
  }
}
