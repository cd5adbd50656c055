import type { Evidence } from "../blackboard/schemas.js";

/** The items of an answer: a list answer "a, b" has two. */
export function answerItems(answer: string): string[] {
  return answer
    .split(/\s*[,;]\s*|\s+and\s+/)
    .map((item) => item.trim())
    .filter(Boolean);
}

function asNumber(text: string): number | null {
  const cleaned = text.replace(/[,%$€£\s]/g, "");
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(cleaned)) return null;
  return Number(cleaned);
}

function decimalsOf(text: string): number {
  const match = /\.(\d+)/.exec(text);
  return match?.[1]?.length ?? 0;
}

/** Whether a value (cell text or printed line) carries `item`: same number at the item's precision, or the same words. */
export function valueMatches(item: string, value: string | number): boolean {
  const itemNumber = asNumber(item);
  if (itemNumber !== null) {
    const candidates =
      typeof value === "number"
        ? [value]
        : (String(value).match(/[-+]?\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?/g) ?? []).map((t) =>
            Number(t.replace(/,/g, "")),
          );
    const places = decimalsOf(item);
    return candidates.some((n) => Number.isFinite(n) && Number(n.toFixed(places)) === itemNumber);
  }
  const needle = item.toLowerCase();
  const haystack = String(value).toLowerCase();
  if (needle.length < 2) return haystack === needle;
  return haystack.includes(needle);
}

/** Evidence packets (scalar values only) that carry some item of the answer. */
export function matchingEvidence(answer: string, evidence: Evidence[]): string[] {
  const items = answerItems(answer);
  return evidence
    .filter((e) => {
      const value = e.value;
      if (value === null || typeof value === "object" || typeof value === "boolean") return false;
      return items.some((item) => valueMatches(item, value));
    })
    .map((e) => e.id);
}

export interface CellHit {
  row: number;
  column: string;
  value: string;
}

/** Cells of a table equal to an answer item (exact text, or the same number). */
export function findCells(
  items: string[],
  columns: string[],
  rows: string[][],
  limit = 5,
): CellHit[] {
  const hits: CellHit[] = [];
  for (const [r, row] of rows.entries()) {
    for (const [c, cell] of row.entries()) {
      const column = columns[c];
      if (column === undefined || !cell.trim()) continue;
      const matched = items.some((item) => {
        const a = asNumber(item);
        const b = asNumber(cell);
        if (a !== null && b !== null) return a === b;
        return cell.trim().toLowerCase() === item.toLowerCase();
      });
      if (matched) {
        hits.push({ row: r, column, value: cell });
        if (hits.length >= limit) return hits;
      }
    }
  }
  return hits;
}
