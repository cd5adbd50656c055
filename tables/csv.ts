/**
 * A small RFC-4180 reader and writer. Written here rather than taken from csv-parse
 * because load errors must name the exact line a record starts on, also when quoted
 * fields span lines or lines end in CRLF.
 */

const QUOTE = 34;
const LF = 10;
const CR = 13;

export interface CsvRecord {
  fields: string[];
  /** 1-based line of the file on which the record starts. */
  line: number;
}

export class CsvSyntaxError extends Error {
  override name = "CsvSyntaxError";
}

/**
 * Splits delimited text into records. Like pandas' reader: blank lines are skipped,
 * quotes inside an unquoted field are literal, and text after a closing quote is
 * appended to the field.
 */
export function parseDelimited(text: string, delimiter: string): CsvRecord[] {
  const sep = delimiter.charCodeAt(0);
  const n = text.length;
  const records: CsvRecord[] = [];
  const isFieldEnd = (c: number) => c === sep || c === LF || c === CR;
  let i = 0;
  let line = 1;
  while (i < n) {
    const startLine = line;
    const fields: string[] = [];
    let blank = true;
    for (;;) {
      let value: string;
      if (text.charCodeAt(i) === QUOTE) {
        blank = false;
        const openedOn = line;
        value = "";
        let from = ++i;
        for (;;) {
          if (i >= n) {
            throw new CsvSyntaxError(`a quoted field opened on line ${openedOn} is never closed`);
          }
          const c = text.charCodeAt(i);
          if (c === QUOTE) {
            if (text.charCodeAt(i + 1) === QUOTE) {
              value += text.slice(from, i + 1);
              i += 2;
              from = i;
              continue;
            }
            value += text.slice(from, i);
            i++;
            break;
          }
          if (c === LF || (c === CR && text.charCodeAt(i + 1) !== LF)) line++;
          i++;
        }
        const rest = i;
        while (i < n && !isFieldEnd(text.charCodeAt(i))) i++;
        value += text.slice(rest, i);
      } else {
        const from = i;
        while (i < n && !isFieldEnd(text.charCodeAt(i))) i++;
        value = text.slice(from, i);
        if (i > from) blank = false;
      }
      fields.push(value);
      if (i < n && text.charCodeAt(i) === sep) {
        blank = false;
        i++;
        continue;
      }
      break;
    }
    if (i < n) {
      i += text.charCodeAt(i) === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
      line++;
    }
    if (!blank) records.push({ fields, line: startLine });
  }
  return records;
}

const NEEDS_QUOTES = /[",\r\n]/;

function formatField(value: string, aloneOnLine: boolean): string {
  if (NEEDS_QUOTES.test(value)) return `"${value.replaceAll('"', '""')}"`;
  // An empty value alone on its line would read back as a skipped blank line.
  return aloneOnLine && value === "" ? '""' : value;
}

/** The canonical stored form: header and rows, comma separated, `\n` after every line. */
export function formatCsv(
  columns: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const lines: string[] = [];
  for (const row of [columns, ...rows]) {
    lines.push(row.map((value) => formatField(value, row.length === 1)).join(","));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Trailing lines of words narrower than the header (or of one filled field), under at least as
 * many lines of its width: a footer (a rule, a source, a copyright line), not rows. A ragged line
 * with full-width lines after it, or of numbers alone (a cut row), is still an error.
 */
export function raggedTail(records: readonly CsvRecord[], width: number): CsvRecord[] {
  const footerLine = (fields: readonly string[]) => {
    const filled = fields.filter((field) => field.trim() !== "");
    const worded = filled.some((field) => /[\p{L}_=]/u.test(field));
    return worded && (fields.length < width || (fields.length !== width && filled.length <= 1));
  };
  let start = records.length;
  while (start > 0 && footerLine(records[start - 1]?.fields ?? [])) start--;
  const tail = records.length - start;
  return tail > 0 && start >= tail ? records.slice(start) : [];
}
