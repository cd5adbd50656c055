import { CsvSyntaxError, parseDelimited } from "./csv.js";

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
  if (width < 2 || records.some((r) => r.fields.length !== width)) return null;
  return width;
}

/**
 * The separator of a delimited text: the expected one when it splits the first lines evenly
 * into two or more fields; else the candidate that does, with the most fields; else the
 * expected one (a one-column table).
 */
export function sniffDelimiter(text: string, expected: string): string {
  const lines = text.split(/\r?\n/);
  // The last sampled line may be cut inside a quoted field: leave it out when more follow.
  const sample = lines.slice(0, lines.length > SAMPLE_LINES ? SAMPLE_LINES - 1 : SAMPLE_LINES);
  const head = sample.join("\n");
  if (evenFields(head, expected) !== null) return expected;
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
