import { createHash } from "node:crypto";
import type { Attempt, Claim, Edge, Evidence, TableRef } from "../blackboard/schemas.js";
import { cellEvidence } from "./evidence.js";
import { claimItems, type ItemKind } from "./items.js";
import { type Claimed, carriedBy, claimed, normalizeText } from "./matching.js";
import type { CarryOptions } from "./numbers.js";
import { type FinalLine, finalLine, printedBooleans } from "./printed.js";
import { loadTables, type PreparedCell, tableHits } from "./table-search.js";

/*
 * The deterministic grounding verifier. An answer is cut into items (list entries, "and"
 * parts, the numbers of a sentence) and each item is traced to evidence:
 *   - a line printed by a successful attempt (code evidence), rounding allowed;
 *   - a cell of an intermediate table a successful attempt produced, rounding allowed;
 *   - a source cell, already posted as evidence or found in the run's tables, exactly.
 * An item is `conflicted` when the evidence says otherwise: the last value the last successful
 * attempt printed is a different value of the same kind (and nothing else that attempt printed
 * carries the item), the printed truth value is the opposite of a yes/no answer, or the items
 * come in another order than printed when the question asks for an order. Otherwise it is
 * `supported` when traced, else `unsupported`.
 */

export type { ItemKind };

/** How one item of an answer stands against the evidence. */
export interface ItemCheck {
  item: string;
  kind: ItemKind;
  status: Claim["status"];
  /** Evidence that carries the item. */
  supports: string[];
  /** Evidence that says otherwise. */
  conflicts: string[];
  /** Why it conflicts, in words a reflector can act on, when it does. */
  note?: string;
}

/** What the verifier looks at. */
export interface GroundingInput {
  answer: string;
  evidence: Evidence[];
  attempts: Attempt[];
  /** The run's source tables, searched cell by cell. */
  tables?: TableRef[];
  /** The question: whether it asks for a percentage or an order. */
  question?: string;
  /** Overrides what the question says about order. */
  ordered?: boolean;
  /** Timestamp of the cell evidence the verifier posts (tests pin it). */
  now?: string;
  /** The node posting that cell evidence. */
  source?: string;
}

export interface Grounding {
  checks: ItemCheck[];
  /** Source cells the verifier found that were not evidence yet, ready to post. */
  cells: Evidence[];
}

/** Source cells cited per item and table: enough to show where, not every repeat. */
const MAX_CELL_HITS = 3;

/** Whether a question asks for its items in an order. */
export function asksForOrder(question: string): boolean {
  return /\b(?:in (?:\w+ )?order|rank (?:them|the)|sort(?:ed)?|ascending|descending|from (?:highest|lowest|largest|smallest|most|least|best|worst|oldest|newest|earliest|latest)|chronologically)\b/i.test(
    question,
  );
}

/** A scalar value that can carry an item: a printed line or a posted cell. */
interface Scalar {
  id: string;
  value: string | number | boolean;
  /** Printed by an attempt (rounding allowed), rather than read from a source cell. */
  computed: boolean;
  attempt: string;
}

/**
 * Traces each item of an answer to the evidence (see the comment at the top of this file),
 * and lists the source cells it found that were not evidence yet.
 */
export async function verifyGrounding(input: GroundingInput): Promise<Grounding> {
  const now = input.now ?? new Date().toISOString();
  const goodAttempts = input.attempts.filter((a) => a.result?.ok);
  const good = new Set(goodAttempts.map((a) => a.id));
  const percentQuestion = /\b(?:percent|percentage)\b|%/i.test(input.question ?? "");
  const computed: CarryOptions = { rounding: true, percentQuestion };
  const exact: CarryOptions = { rounding: false, percentQuestion };

  const scalars = input.evidence.flatMap((e): Scalar[] => {
    if (e.value === null || typeof e.value === "object" || e.modality === "memory") return [];
    const fromCode = e.anchor.kind === "code";
    // Lines printed by a failed attempt show nothing the answer may rest on.
    if (fromCode && !good.has(e.provenance.attempt)) return [];
    return [{ id: e.id, value: e.value, computed: fromCode, attempt: e.provenance.attempt }];
  });
  const tables = await loadTables([
    ...input.evidence.flatMap((e) =>
      e.value !== null && typeof e.value === "object" && good.has(e.provenance.attempt)
        ? [{ evidenceId: e.id, ref: e.value }]
        : [],
    ),
    ...(input.tables ?? []).map((ref) => ({ evidenceId: null, ref })),
  ]);
  const lastGood = goodAttempts.at(-1);
  const final = lastGood ? finalLine(lastGood, input.evidence) : undefined;
  const known = new Set(input.evidence.map((e) => e.id));
  const posted = new Map<string, Evidence>();

  const cellPacket = (table: TableRef, cell: PreparedCell | null, column: string): string => {
    const packet = cellEvidence(
      table.name,
      cell && { row: cell.row, value: cell.raw },
      column,
      input.source ?? "checker",
      now,
    );
    if (!known.has(packet.id) && !posted.has(packet.id)) posted.set(packet.id, packet);
    return packet.id;
  };

  const find = (item: Claimed): string[] => {
    const ids = scalars
      .filter((s) => carriedBy(item, s.value, s.computed ? computed : exact))
      .map((s) => s.id);
    for (const loaded of tables) {
      const hits = tableHits(item, loaded.table, loaded.evidenceId ? computed : exact);
      if (loaded.evidenceId) {
        if (hits.cells.length > 0 || hits.column) ids.push(loaded.evidenceId);
        continue;
      }
      if (hits.column) ids.push(cellPacket(loaded.ref, null, hits.column));
      for (const cell of hits.cells.slice(0, MAX_CELL_HITS)) {
        ids.push(cellPacket(loaded.ref, cell, cell.column));
      }
    }
    return [...new Set(ids)];
  };

  const items = claimItems(input.answer, (text) => find(claimed(text)).length > 0);
  const checks = items.map(({ item, kind }): ItemCheck => {
    if (kind === "yesno") return checkYesNo(item, scalars, goodAttempts, input.evidence);
    if (kind === "prose") return { item, kind, status: "unsupported", supports: [], conflicts: [] };
    const claim = claimed(item);
    const supports = find(claim);
    const conflict =
      items.length === 1 ? finalConflict(claim, kind, supports, final, scalars) : null;
    if (conflict) return { item, kind, status: "conflicted", supports, ...conflict };
    const status = supports.length > 0 ? "supported" : "unsupported";
    return { item, kind, status, supports, conflicts: [] };
  });
  if (input.ordered ?? asksForOrder(input.question ?? "")) {
    markOrder(
      checks,
      scalars.filter((s) => s.attempt === lastGood?.id),
    );
  }
  const used = new Set(checks.flatMap((c) => c.supports));
  return { checks, cells: [...posted.values()].filter((cell) => used.has(cell.id)) };
}

/**
 * A single-item answer that the code's final printed value contradicts: a different value of
 * the same kind, and nothing else the last attempt printed carries the answer.
 */
function finalConflict(
  item: Claimed,
  kind: ItemKind,
  supports: string[],
  final: FinalLine | undefined,
  scalars: Scalar[],
): { conflicts: string[]; note: string } | null {
  if (!final?.value || supports.includes(final.packet.id)) return null;
  const sameKind =
    (kind === "number" && final.value.kind === "number") ||
    (kind === "text" && final.value.kind === "text" && !/\d/.test(item.text));
  if (!sameKind) return null;
  const lastAttempt = final.packet.provenance.attempt;
  if (scalars.some((s) => s.attempt === lastAttempt && supports.includes(s.id))) return null;
  return {
    conflicts: [final.packet.id],
    note: `the answer ${JSON.stringify(item.text)} differs from ${final.packet.id}, the last value the code printed: ${JSON.stringify(final.printed)}`,
  };
}

function checkYesNo(
  item: string,
  scalars: Scalar[],
  goodAttempts: Attempt[],
  evidence: Evidence[],
): ItemCheck {
  const claimedYes = /^(?:yes|true)$/i.test(item);
  const base = { item, kind: "yesno" as const };
  // The newest successful attempt that printed a truth value decides.
  for (const attempt of [...goodAttempts].reverse()) {
    const lines = scalars
      .filter((s) => s.attempt === attempt.id && s.computed)
      .map((s) => ({ id: s.id, values: printedBooleans(s.value) }))
      .filter((line) => line.values.length > 0);
    if (lines.length === 0) continue;
    const final = finalLine(attempt, evidence);
    const stated = final ? printedBooleans(final.packet.value as string | number | boolean) : [];
    if (final && stated.length === 1) {
      const said = stated[0] === true;
      if (said === claimedYes) {
        return { ...base, status: "supported", supports: [final.packet.id], conflicts: [] };
      }
      return {
        ...base,
        status: "conflicted",
        supports: [],
        conflicts: [final.packet.id],
        note: `the answer ${item} contradicts ${final.packet.id}, which printed ${JSON.stringify(final.printed)} (${said ? "yes" : "no"})`,
      };
    }
    const agree = lines.filter((l) => l.values.every((v) => v === claimedYes)).map((l) => l.id);
    const disagree = lines.filter((l) => l.values.every((v) => v !== claimedYes)).map((l) => l.id);
    if (agree.length > 0 && disagree.length === 0) {
      return { ...base, status: "supported", supports: agree, conflicts: [] };
    }
    if (disagree.length > 0 && agree.length === 0) {
      return {
        ...base,
        status: "conflicted",
        supports: [],
        conflicts: disagree,
        note: `the answer ${item} contradicts ${disagree.join(", ")}, which printed ${claimedYes ? "False" : "True"}`,
      };
    }
    return { ...base, status: "unsupported", supports: agree, conflicts: disagree };
  }
  return { ...base, status: "unsupported", supports: [], conflicts: [] };
}

/** For ordered questions: items printed together in another order than the answer's conflict. */
function markOrder(checks: ItemCheck[], printed: Scalar[]): void {
  if (checks.length < 2) return;
  for (const line of [...printed].reverse()) {
    const hay = ` ${normalizeText(String(line.value))} `;
    const positions = checks.map((c) => hay.indexOf(` ${normalizeText(c.item)} `));
    if (positions.some((p) => p < 0)) continue;
    if (positions.every((p, i) => i === 0 || p > (positions[i - 1] ?? -1))) return;
    for (const check of checks) {
      check.status = "conflicted";
      check.conflicts = [...new Set([...check.conflicts, line.id])];
      check.note = `the question asks for an order and ${line.id} printed the items in another order: ${JSON.stringify(String(line.value))}`;
    }
    return;
  }
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
      evidence: [...new Set([...check.supports, ...check.conflicts])],
      status: check.status,
    });
    for (const from of check.supports) edges.push({ from, to: id, kind: "supports" });
    for (const from of check.conflicts) edges.push({ from, to: id, kind: "conflicts" });
  });
  return { claims, edges };
}

/**
 * 2 when every item is supported; 0 on any conflict, or when no item is supported (except a
 * sentence with no value in it to trace, which gets 1: only a model can judge it); else 1.
 */
export function groundingScore(checks: ItemCheck[]): 0 | 1 | 2 {
  if (checks.length === 0) return 0;
  if (checks.some((c) => c.status === "conflicted")) return 0;
  const supported = checks.filter((c) => c.status === "supported").length;
  if (supported === checks.length) return 2;
  if (supported > 0) return 1;
  return checks.every((c) => c.kind === "prose") ? 1 : 0;
}
