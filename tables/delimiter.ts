import { CsvSyntaxError, parseDelimited, raggedTail } from "./csv.js";

/** Separators files named .csv or .tsv are found with, in order of preference after the expected one. */
const CANDIDATES = [",", "\t", ";", "|"];
/** Lines read to decide. */
const SAMPLE_LINES = 50;

const NAMES: Record<string, string> = {
  ",": "comma",
  "\t": "tab",
  ";": "semicolon",
  "|": "pipe",
};

export function delimiterName(delimiter: string): string {
  return NAMES[delimiter] ?? JSON.stringify(delimiter);
}

/** Fields per record of the sample, or null when the sample does not split evenly into 2+. */
function evenFields(sample: string, delimiter: string): number | null {
  let records: ReturnType<typeof parseDelimited>;
  try {
    records = parseDelimited(sample, delimiter);
  } catch (error) {
    if (error instanceof CsvSyntaxError) return null;
    throw error;
  }
  const width = records[0]?.fields.length ?? 0;
  const body = records.slice(0, records.length - raggedTail(records.slice(1), width).length);
  if (width < 2 || body.some((r) => r.fields.length !== width)) return null;
  return width;
}

/**
 * Records of the sample by their most common width of two or more fields (a title line or a
 * note above or below the table has another): that width and how many records have it.
 */
function commonWidth(sample: string, delimiter: string): { width: number; count: number } {
  let records: ReturnType<typeof parseDelimited>;
  try {
    records = parseDelimited(sample, delimiter);
  } catch (error) {
    if (error instanceof CsvSyntaxError) return { width: 0, count: 0 };
    throw error;
  }
  const counts = new Map<number, number>();
  for (const record of records) {
    const width = record.fields.length;
    if (width >= 2) counts.set(width, (counts.get(width) ?? 0) + 1);
  }
  let best = { width: 0, count: 0 };
  for (const [width, count] of counts) {
    if (count > best.count || (count === best.count && width > best.width)) best = { width, count };
  }
  return best;
}

/**
 * The separator of a delimited text: the expected one when it splits the first lines evenly
 * into two or more fields; else the candidate that does, with the most fields; else the
 * expected one (a one-column table). `tolerant`: lines of another width (titles, notes) do not
 * count against a separator; the one that gives most lines one common width of 2+ wins.
 */
export function sniffDelimiter(text: string, expected: string, tolerant = false): string {
  const lines = text.split(/\r?\n/);
  // The last sampled line may be cut inside a quoted field: leave it out when more follow.
  const sample = lines.slice(0, lines.length > SAMPLE_LINES ? SAMPLE_LINES - 1 : SAMPLE_LINES);
  const head = sample.join("\n");
  if (evenFields(head, expected) !== null) return expected;
  if (tolerant) {
    let best = { delimiter: expected, ...commonWidth(head, expected) };
    for (const candidate of CANDIDATES) {
      if (candidate === expected) continue;
      const found = commonWidth(head, candidate);
      if (found.count > best.count) best = { delimiter: candidate, ...found };
    }
    if (best.count >= 2) return best.delimiter;
  }
  let best = expected;
  let bestWidth = 0;
  for (const candidate of CANDIDATES) {
    if (candidate === expected) continue;
    const width = evenFields(head, candidate) ?? 0;
    if (width > bestWidth) {
      best = candidate;
      bestWidth = width;
    }
  }
  return best;
}

/** A one-column header that holds another separator: the file was likely split wrongly. */
export function suspiciousHeader(header: string[]): string | null {
  if (header.length !== 1) return null;
  const separator = [";", "|", "\t", ","].find((s) => header[0]?.includes(s));
  return separator === undefined ? null : delimiterName(separator);
}
