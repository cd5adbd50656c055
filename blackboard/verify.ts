import { createHash } from "node:crypto";
import { readTable } from "../tools/tables/read.js";
import { answerItems } from "./answer-type.js";
import type { Attempt, Claim, Edge, Evidence, TableRef } from "./schemas.js";

/** How one item of an answer stands against the evidence. */
export interface ItemCheck {
  item: string;
  status: Claim["status"];
  /** Evidence that carries the item. */
  supports: string[];
  /** Evidence that says otherwise (the final printed value, a printed True/False). */
  conflicts: string[];
  /** Why it conflicts, in words, when it does. */
  note?: string;
}

const YES = /^(yes|true)$/i;
const NO = /^(no|false)$/i;
/** Intermediate tables bigger than this are not searched cell by cell. */
const MAX_SEARCHED_ROWS = 100_000;

/** A number written in an answer or a cell: thousands separators, currency, units and % allowed. */
export interface ParsedNumber {
  value: number;
  /** Decimal places as written: the precision the answer claims. */
  places: number;
  percent: boolean;
}

export function parseNumber(text: string): ParsedNumber | null {
  const trimmed = text.trim();
  const match =
    /^[-+]?[$€£¥]?\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?|[-+]?\.\d+)\s*(%|percent)?(?:\s*[a-z$€£¥]{0,12}\.?)?$/i.exec(
      trimmed,
    );
  if (!match?.[1]) return null;
  const negative = /^-|^[$€£¥]\s*-/.test(trimmed) && !match[1].startsWith("-");
  const value = Number(match[1].replace(/,/g, "")) * (negative ? -1 : 1);
  if (!Number.isFinite(value)) return null;
  return { value, places: match[2]?.length ?? 0, percent: Boolean(match[3]) };
}

/** Every number inside a printed line or cell, e.g. "total: 1,062.5 (45%)" gives 1062.5 and 45. */
function numbersIn(text: string): ParsedNumber[] {
  const found = text.match(
    /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?\s*%?|[-+]?\.\d+/g,
  );
  return (found ?? []).flatMap((token) => {
    const value = Number(token.replace(/[,%\s]/g, ""));
    if (!Number.isFinite(value)) return [];
    return [
      { value, places: /\.(\d+)/.exec(token)?.[1]?.length ?? 0, percent: token.includes("%") },
    ];
  });
}

function round(value: number, places: number): number {
  const factor = 10 ** places;
  return Math.round(value * factor + Number.EPSILON * Math.sign(value)) / factor;
}

/**
 * Whether `found` carries the number `claimed`: equal at the precision the answer states
 * (10.6 is carried by 10.57 and 10.6000001, 11 by 10.6), with a fraction and its percent
 * (0.45 and 45%) taken as the same value.
 */
export function numberCarried(claimed: ParsedNumber, found: ParsedNumber): boolean {
  const scales = [1, 100, 0.01];
  return scales.some((scale) => {
    if (scale !== 1 && !claimed.percent && !found.percent) return false;
    const candidate = found.value * scale;
    if (round(candidate, claimed.places) === claimed.value) return true;
    return Math.abs(candidate - claimed.value) <= 1e-9 * Math.max(1, Math.abs(claimed.value));
  });
}

function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Whether a printed line or cell carries a word item: the same words, as whole words. */
export function textCarried(item: string, value: string): boolean {
  const needle = normalizeText(item);
  const hay = normalizeText(value);
  if (!needle) return false;
  return hay === needle || ` ${hay} `.includes(` ${needle} `);
}

function carried(item: string, value: string | number): boolean {
  const claimed = parseNumber(item);
  if (claimed) {
    const found =
      typeof value === "number" ? [{ value, places: 0, percent: false }] : numbersIn(value);
    return found.some((f) => numberCarried(claimed, f));
  }
  return typeof value === "string" && textCarried(item, value);
}

function booleanOf(value: string | number | boolean): boolean | null {
  if (typeof value === "boolean") return value;
  const last =
    String(value)
      .trim()
      .split(/[\s:=]+/)
      .at(-1) ?? "";
  if (YES.test(last)) return true;
  if (NO.test(last)) return false;
  return null;
}

/** What the verifier looks at. */
export interface GroundingInput {
  answer: string;
  evidence: Evidence[];
  attempts: Attempt[];
  /** Whether the question asks for the items in a given order ("in descending order", "rank"). */
  ordered?: boolean;
}

/** Scalar evidence: printed lines and source cells. */
function scalars(evidence: Evidence[]): { id: string; value: string | number | boolean }[] {
  return evidence.flatMap((e) =>
    e.value === null || typeof e.value === "object" ? [] : [{ id: e.id, value: e.value }],
  );
}

/** The last value the last successful attempt printed: what the code itself concluded. */
function finalPrinted(input: GroundingInput): Evidence | undefined {
  const good = input.attempts.findLast((a) => a.result?.ok);
  if (!good) return undefined;
  return input.evidence.findLast(
    (e) =>
      e.provenance.attempt === good.id && e.anchor.kind === "code" && typeof e.value !== "object",
  );
}

async function tableHits(items: string[], evidence: Evidence[]): Promise<Map<string, string[]>> {
  const hits = new Map<string, string[]>();
  for (const e of evidence) {
    const ref = e.value;
    if (ref === null || typeof ref !== "object" || ref.rows > MAX_SEARCHED_ROWS) continue;
    const data = await readTable(ref as TableRef).catch(() => null);
    if (!data) continue;
    for (const item of items) {
      const inTable =
        data.columns.some((c) => carried(item, c)) ||
        data.rows.some((row) => row.some((cell) => cell.trim() !== "" && carried(item, cell)));
      if (inTable) hits.set(item, [...(hits.get(item) ?? []), e.id]);
    }
  }
  return hits;
}

/**
 * Traces each item of an answer to the evidence: printed values, intermediate tables and
 * source cells. An item the code's own final output contradicts is a conflict; one found
 * nowhere is unsupported.
 */
export async function verifyGrounding(input: GroundingInput): Promise<ItemCheck[]> {
  const items = answerItems(input.answer);
  const values = scalars(input.evidence);
  const inTables = await tableHits(items, input.evidence);
  const last = finalPrinted(input);
  const checks = items.map((item): ItemCheck => {
    const claimedBool = YES.test(item) ? true : NO.test(item) ? false : null;
    if (claimedBool !== null) return checkYesNo(item, claimedBool, values, last);
    const supports = [
      ...values
        .filter((v) => typeof v.value !== "boolean" && carried(item, v.value))
        .map((v) => v.id),
      ...(inTables.get(item) ?? []),
    ];
    if (supports.length > 0) return { item, status: "supported", supports, conflicts: [] };
    if (last && items.length === 1 && typeof last.value !== "boolean" && last.value !== null) {
      const lastValue = String(last.value);
      const sameKind = (parseNumber(item) !== null) === numbersIn(lastValue).length > 0;
      if (sameKind) {
        return {
          item,
          status: "conflicted",
          supports: [],
          conflicts: [last.id],
          note: `the answer ${JSON.stringify(item)} differs from ${last.id}, the last value the code printed: ${JSON.stringify(lastValue)}`,
        };
      }
    }
    return { item, status: "unsupported", supports: [], conflicts: [] };
  });
  if (input.ordered) markOrder(checks, last);
  return checks;
}

function checkYesNo(
  item: string,
  claimed: boolean,
  values: { id: string; value: string | number | boolean }[],
  last: Evidence | undefined,
): ItemCheck {
  const printed = values.flatMap((v) => {
    const b = booleanOf(v.value);
    return b === null ? [] : [{ id: v.id, value: b }];
  });
  const lastBool = last && typeof last.value !== "object" ? booleanOf(last.value as string) : null;
  if (lastBool !== null && last) {
    return lastBool === claimed
      ? { item, status: "supported", supports: [last.id], conflicts: [] }
      : {
          item,
          status: "conflicted",
          supports: [],
          conflicts: [last.id],
          note: `the answer ${item} contradicts ${last.id}, which printed ${lastBool ? "True" : "False"}`,
        };
  }
  const agree = printed.filter((p) => p.value === claimed).map((p) => p.id);
  const disagree = printed.filter((p) => p.value !== claimed).map((p) => p.id);
  if (agree.length > 0 && disagree.length === 0) {
    return { item, status: "supported", supports: agree, conflicts: [] };
  }
  if (disagree.length > 0 && agree.length === 0) {
    return {
      item,
      status: "conflicted",
      supports: [],
      conflicts: disagree,
      note: `the answer ${item} contradicts ${disagree.join(", ")}`,
    };
  }
  return { item, status: "unsupported", supports: agree, conflicts: disagree };
}

/** For ordered questions, a list printed in another order than the answer's is a conflict. */
function markOrder(checks: ItemCheck[], last: Evidence | undefined): void {
  if (checks.length < 2 || !last || typeof last.value !== "string") return;
  const printed = normalizeText(last.value);
  const positions = checks.map((c) => printed.indexOf(normalizeText(c.item)));
  if (positions.some((p) => p < 0)) return;
  const inOrder = positions.every((p, i) => i === 0 || p > (positions[i - 1] ?? -1));
  if (inOrder) return;
  for (const check of checks) {
    check.status = "conflicted";
    check.conflicts = [...new Set([...check.conflicts, last.id])];
    check.note = `the answer lists the items in another order than ${last.id} printed them (${JSON.stringify(last.value)})`;
  }
}

/** Whether a question asks for its items in an order. */
export function asksForOrder(question: string): boolean {
  return /\b(order|rank(?:ed|ing)?|sort(?:ed)?|ascending|descending|from (?:highest|lowest|largest|smallest|most|least))\b/i.test(
    question,
  );
}

/** Claims (one per item) and their supports/conflicts edges, with ids stable for an answer. */
export function claimsFrom(
  answer: string,
  checks: ItemCheck[],
): { claims: Claim[]; edges: Edge[] } {
  const key = createHash("sha256").update(answer).digest("hex").slice(0, 8);
  const claims: Claim[] = [];
  const edges: Edge[] = [];
  checks.forEach((check, i) => {
    const id = `claim:${key}:${i + 1}`;
    claims.push({
      id,
      text: check.item,
      evidence: [...check.supports, ...check.conflicts],
      status: check.status,
    });
    for (const from of check.supports) edges.push({ from, to: id, kind: "supports" });
    for (const from of check.conflicts) edges.push({ from, to: id, kind: "conflicts" });
  });
  return { claims, edges };
}

/** 2 when every item is supported, 0 on any conflict or when nothing is, else 1. */
export function groundingScore(checks: ItemCheck[]): 0 | 1 | 2 {
  if (checks.length === 0) return 0;
  if (checks.some((c) => c.status === "conflicted")) return 0;
  const supported = checks.filter((c) => c.status === "supported").length;
  if (supported === checks.length) return 2;
  return supported === 0 ? 0 : 1;
}
