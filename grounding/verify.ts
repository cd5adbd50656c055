import { createHash } from "node:crypto";
import type {
  Alignment,
  Attempt,
  Claim,
  CodeResult,
  Edge,
  Evidence,
  Packet,
  SupportKind,
  TableRef,
} from "../blackboard/schemas.js";
import { alignmentOf } from "./alignment.js";
import { type CodeOperations, codeOperations, columnsInCode } from "./code-operations.js";
import {
  comparable,
  matchResult,
  needsDerivation,
  resultElements,
  resultOf,
} from "./derivation.js";
import { claimedDirection, directionWords } from "./direction.js";
import { cellEvidence } from "./evidence.js";
import { claimItems, type ItemKind, isProse } from "./items.js";
import { type Claimed, carriedBy, claimed, containsWords, normalizeText } from "./matching.js";
import { type CarryOptions, scaleOfUnit } from "./numbers.js";
import { pickedRows, selectorsOf } from "./question-asks.js";
import { type LoadedTable, loadTables, type PreparedCell, tableHits } from "./table-search.js";

/*
 * The deterministic grounding verifier. An answer is cut into items (list entries, "and"
 * parts, the numbers of a sentence) and each item gets a kind of support:
 *   - derived: it equals the code's result (the value the code assigned to `result`, else the
 *     last value it printed) of the last successful attempt, and that result depends on the
 *     tables (the sandbox re-ran the code on perturbed tables and the result changed);
 *   - looked up: for a question that needs no computation, it is a source cell in a column the
 *     question names or the code selected, in a row the question identifies;
 *   - coincidental: the value merely occurs in a cell or a printed line. Never support.
 * An item is `conflicted` when the result says otherwise: a different value of the same kind,
 * a different truth value, or another order when the question asks for one. Superlatives,
 * aggregates, counts, comparisons and arithmetic can only be supported by derivation.
 */

export type { ItemKind };

/** How one item of an answer stands against the evidence. */
export interface ItemCheck {
  item: string;
  kind: ItemKind;
  status: Claim["status"];
  /** What holds it up: derived, looked up; coincidental or none when nothing does. */
  support: SupportKind;
  /** Evidence that supports the item. */
  supports: string[];
  /** Evidence that says otherwise. */
  conflicts: string[];
  /** Why it is not supported, in words a reflector can act on, when it is not. */
  note?: string;
}

/** What the verifier looks at. */
export interface GroundingInput {
  answer: string;
  evidence: Evidence[];
  attempts: Attempt[];
  /** The run's source tables, searched cell by cell. */
  tables?: TableRef[];
  /** The question: whether it asks for a computation, a percentage, an order, which rows. */
  question?: string;
  /** Overrides what the question says about order. */
  ordered?: boolean;
  /** Evidence the answer cites: the run whose result it cites is the one it is judged against. */
  cited?: readonly string[];
  /** Timestamp of the cell evidence the verifier posts (tests pin it). */
  now?: string;
  /** The node posting that cell evidence. */
  source?: string;
}

export interface Grounding {
  checks: ItemCheck[];
  /** Source cells the verifier found that were not evidence yet, ready to post. */
  cells: Evidence[];
  /** Whether the computation the answer rests on answers the question (alignment.ts). */
  alignment?: Alignment;
}

/** Source cells cited per item and table: enough to show where, not every repeat. */
const MAX_CELL_HITS = 3;

/** Whether a question asks for its items in an order. */
export function asksForOrder(question: string): boolean {
  return /\b(?:in (?:\w+ )?order|rank (?:them|the)|sort(?:ed)?|ascending|descending|from (?:highest|lowest|largest|smallest|most|least|best|worst|oldest|newest|earliest|latest)|chronologically)\b/i.test(
    question,
  );
}

/** An item's standing without the item itself; supports and conflicts default to none. */
type Judged = Pick<ItemCheck, "status" | "support" | "note"> &
  Partial<Pick<ItemCheck, "supports" | "conflicts">>;

function unsupported(support: SupportKind, note: string): Judged {
  return { status: "unsupported", support, note };
}

/**
 * How the numbers of a result are to be read: a share the code computed without a factor of
 * 100 is a fraction (0.2368 is 23.68%, not 0.24%), and the units of the columns it rests on or
 * a scale the question states ("in thousands") are scales it may be counted in.
 */
function resultReading(
  question: string,
  sources: readonly LoadedTable[],
  result: CodeResult | undefined,
  ops: CodeOperations | null,
): Pick<CarryOptions, "fraction" | "scales"> {
  const used = new Set(result?.lineage.flatMap((l) => l.columns ?? []) ?? []);
  const columns = sources.flatMap((t) => t.ref.columns).filter((c) => used.has(c.name));
  const unitText = (c: { name: string; unit?: string }) =>
    `${c.unit ?? ""} ${/\(([^)]*)\)\s*$/.exec(c.name)?.[1] ?? ""}`;
  const percentColumn = columns.some((c) =>
    /%|percent|pct|\brate\b|\bshare\b/i.test(`${c.name} ${c.unit ?? ""}`),
  );
  const stated = /\bin (thousands|millions|billions)\b/i.exec(question)?.[1] ?? "";
  const scales = [...columns.map((c) => scaleOfUnit(unitText(c))), scaleOfUnit(stated)].filter(
    (s): s is number => s !== null,
  );
  return {
    fraction: Boolean(ops?.perHundred || (ops?.divides && !ops.hundred && !percentColumn)),
    scales: [...new Set(scales)],
  };
}

/** A value written into the code itself: a literal is never a cell the code read. */
function literalIn(item: Claimed, ops: CodeOperations): boolean {
  if (item.number) {
    const value = item.number.value * item.number.scale;
    return ops.literals.some((l) => l === value && Math.abs(l) > 1);
  }
  return item.norm !== "" && ops.strings.includes(item.norm);
}

/**
 * Traces each item of an answer to the evidence (see the comment at the top of this file),
 * and lists the source cells it looked up that were not evidence yet.
 */
export async function verifyGrounding(input: GroundingInput): Promise<Grounding> {
  const now = input.now ?? new Date().toISOString();
  const question = input.question ?? "";
  const percentQuestion = /\b(?:percent|percentage)\b|%/i.test(question);
  const computed = needsDerivation(
    question,
    (input.tables ?? []).flatMap((t) => t.columns.map((c) => c.name)),
  );
  const good = new Set(input.attempts.filter((a) => a.result?.ok).map((a) => a.id));
  const ran = resultOf(input.attempts, input.cited);
  const elements = ran ? resultElements(ran.result) : null;
  const resultId = ran ? `${ran.attempt.id}:result` : null;
  const known = new Set(input.evidence.map((e) => e.id));
  const posted = new Map<string, Evidence>();
  const sources = await loadTables((input.tables ?? []).map((ref) => ({ evidenceId: null, ref })));
  const ops = ran ? codeOperations(ran.attempt.code) : null;
  const reading = resultReading(question, sources, ran?.result, ops);
  const goodAttempts = input.attempts.filter((a) => a.result?.ok);
  const goodOps = goodAttempts.map((a) => codeOperations(a.code));
  const selected = new Set<string>([
    ...(ran?.result.lineage.flatMap((l) => l.columns ?? []) ?? []),
    ...(ran
      ? columnsInCode(
          ran.attempt.code,
          sources.flatMap((t) => t.ref.columns.map((c) => c.name)),
        )
      : []),
  ]);
  const questionNorm = normalizeText(question);

  const cellPacket = (table: TableRef, cell: PreparedCell): string => {
    const packet = cellEvidence(
      table.name,
      { row: cell.row, value: cell.raw },
      cell.column,
      input.source ?? "checker",
      now,
    );
    if (!known.has(packet.id) && !posted.has(packet.id)) posted.set(packet.id, packet);
    return packet.id;
  };

  /** Whether a successful run's result rests on a source cell. */
  const restsOn = (table: string, cell: PreparedCell): boolean =>
    goodAttempts.some((a) =>
      (a.result?.result?.lineage ?? []).some(
        (l) =>
          l.table === table &&
          (l.columns ?? []).includes(cell.column) &&
          (l.rows === null || l.rows.includes(cell.row)),
      ),
    );

  /**
   * Source cells that carry the item exactly, in a column the question names or the code
   * selected, in the one row that holds every value the question picks rows by, and read by
   * the code.
   */
  // The values and rows the question names, per source table: found once, asked for each item.
  const selectors = sources.map((loaded) =>
    selectorsOf(loaded.table, question, loaded.ref.columns),
  );
  const questionRows = selectors.map((s) => pickedRows(s) ?? new Set<number>());
  const lookedUp = (item: Claimed): string[] => {
    const ids: string[] = [];
    // The code read the cell: its result rests on it, or it printed the value (not a literal).
    if (goodOps.some((o) => literalIn(item, o))) return ids;
    const printed = printedBy(item).length > 0;
    for (const [i, loaded] of sources.entries()) {
      const rows = questionRows[i] ?? new Set<number>();
      const hits = tableHits(item, loaded.table, { rounding: false, percentQuestion }).cells.filter(
        (cell) =>
          rows.has(cell.row) &&
          !containsWords(questionNorm, cell.norm) &&
          (selected.has(cell.column) || containsWords(questionNorm, normalizeText(cell.column))) &&
          (printed || restsOn(loaded.ref.name, cell)),
      );
      for (const cell of hits.slice(0, MAX_CELL_HITS)) ids.push(cellPacket(loaded.ref, cell));
    }
    return ids;
  };

  /** Printed lines of good attempts that carry the item. */
  const printedBy = (item: Claimed): string[] =>
    input.evidence
      .filter(
        (e) =>
          e.anchor.kind === "code" &&
          good.has(e.provenance.attempt) &&
          e.value !== null &&
          typeof e.value !== "object" &&
          carriedBy(item, e.value, { rounding: true, percentQuestion }),
      )
      .map((e) => e.id);

  /** Where the item merely occurs: a printed line of a good attempt or any source cell. */
  const occurrences = (item: Claimed): string[] => {
    const printed = printedBy(item);
    const cells = sources.flatMap((loaded) =>
      tableHits(item, loaded.table, { rounding: false, percentQuestion })
        .cells.slice(0, 1)
        .map((cell) => `${loaded.ref.name}:r${cell.row}:${cell.column}`),
    );
    return [...printed, ...cells];
  };

  const items = claimItems(input.answer, (text) => {
    const whole = claimed(text);
    return (
      (elements !== null &&
        matchResult(whole, elements, { percentQuestion, yesno: false, ...reading })) ||
      occurrences(whole).length > 0
    );
  });
  const prose = items.some((i) => i.kind === "prose") || isProse(input.answer);
  // A direction claimed in words ("a positive correlation", "an increasing trend") is an item
  // of its own, checked against the sign of the result.
  const direction = claimedDirection(input.answer);
  const oneNumber = (elements?.values ?? []).filter((e) => e.number).length === 1;
  const directionItem =
    (direction === 1 || direction === -1) && oneNumber ? directionWords(input.answer) : null;
  if (directionItem && !items.some((i) => i.item === directionItem)) {
    const at = items.findIndex((i) => i.kind === "prose" || claimedDirection(i.item) !== null);
    if (at >= 0) items.splice(at, 1, { item: directionItem, kind: "text" });
    else items.push({ item: directionItem, kind: "text" });
  }
  /** How a direction claim stands against the sign of a one-number result. */
  const judgeDirection = (item: string): Judged | null => {
    if (item !== directionItem || !direction || !ran || !elements || !resultId) return null;
    const numbers = elements.values.flatMap((e) => (e.number ? [e.number.value] : []));
    if (numbers.length !== 1) return null;
    const sign = Math.sign(numbers[0] ?? 0);
    if (sign === direction) {
      return ran.result.derived === "yes"
        ? { status: "supported", support: "derived", supports: [resultId] }
        : unsupported(
            "coincidental",
            `${resultId} has that sign, but it is not derived from the table: ${ran.result.derivation}`,
          );
    }
    return {
      status: "conflicted",
      support: "none",
      conflicts: [resultId],
      note: `the answer says ${JSON.stringify(item)}, but ${resultId} is ${ran.result.text}, of the other sign`,
    };
  };
  /** How one item stands: the result first, then a lookup, else coincidence or nothing. */
  const judge = (item: string, kind: ItemKind): Judged => {
    const directed = judgeDirection(item);
    if (directed) return directed;
    if (kind === "prose") {
      return unsupported(
        "none",
        "the answer is a sentence with no value in it to trace to the evidence",
      );
    }
    const claim = claimed(item);
    const yesno = kind === "yesno";
    const lookup = (): Judged | null => {
      const cells = !computed && !yesno ? lookedUp(claim) : [];
      return cells.length > 0
        ? { status: "supported", support: "looked-up", supports: cells }
        : null;
    };
    if (ran && elements && resultId) {
      const matches = matchResult(claim, elements, { percentQuestion, yesno, ...reading });
      // A list answer must name the result's values, not pick one of several.
      const named = ran.result.kind === "frame" || elements.size === items.length;
      const singled = prose || yesno || elements.size <= 1 || (items.length > 1 && named);
      if (matches && singled) {
        if (ran.result.derived === "yes") {
          return { status: "supported", support: "derived", supports: [resultId] };
        }
        return (
          lookup() ??
          unsupported(
            "coincidental",
            `${JSON.stringify(item)} equals ${resultId}, but that result is not derived from the table: ${ran.result.derivation}`,
          )
        );
      }
      if (!matches && comparable(claim, elements, yesno) && !prose) {
        const from = ran.result.from === "declared" ? "declared result" : "last printed value";
        return {
          status: "conflicted",
          support: "none",
          conflicts: [resultId],
          note: `the answer ${JSON.stringify(item)} differs from ${resultId}, the code's ${from}: ${ran.result.text}`,
        };
      }
      if (matches) {
        return unsupported(
          "coincidental",
          `${resultId} holds ${elements.size} values and ${JSON.stringify(item)} is only one of them; make the code's result the answer itself`,
        );
      }
    }
    const found = lookup();
    if (found) return found;
    const seen = occurrences(claim);
    const why = computed
      ? "the question asks for a computation, so only the code's result can support it"
      : "no source cell in a column and row the question identifies holds it";
    if (seen.length > 0) {
      return unsupported(
        "coincidental",
        `${JSON.stringify(item)} merely occurs in ${seen.slice(0, 3).join(", ")}: ${why}`,
      );
    }
    return unsupported(
      "none",
      ran
        ? `nothing the code computed and no source cell carries ${JSON.stringify(item)}`
        : `${JSON.stringify(item)} has no evidence: no code attempt succeeded and ${why}`,
    );
  };

  const checks = items.map(({ item, kind }): ItemCheck => {
    const verdict = judge(item, kind);
    return { item, kind, conflicts: [], supports: [], ...verdict };
  });
  if (ran && elements && (input.ordered ?? asksForOrder(question)))
    markOrder(checks, ran.result, resultId ?? "");
  const alignment =
    ran && resultId
      ? alignmentOf({
          question,
          sources,
          code: ran.attempt.code,
          result: ran.result,
          items: checks.filter((c) => c.kind !== "prose").map((c) => c.item),
          selectors,
        })
      : undefined;
  if (alignment?.status === "conflicted" && resultId) markMisaligned(checks, alignment, resultId);
  const used = new Set(checks.flatMap((c) => c.supports));
  const cells = [...posted.values()].filter((cell) => used.has(cell.id));
  return alignment ? { checks, cells, alignment } : { checks, cells };
}

/** Derived items of a computation that answers another question conflict with it. */
function markMisaligned(checks: ItemCheck[], alignment: Alignment, resultId: string): void {
  // A wrong number of items is the answer's fault, not each item's (groundingScore caps it).
  const why = alignment.findings
    .filter((f) => f.conflict && f.aspect !== "cardinality")
    .map((f) => f.text)
    .join("; ");
  if (!why) return;
  for (const check of checks) {
    if (check.support !== "derived") continue;
    check.status = "conflicted";
    check.support = "none";
    check.supports = [];
    check.conflicts = [resultId];
    check.note = `${resultId} does not answer the question: ${why}`;
  }
}

/** For ordered questions: derived items in another order than the result's conflict. */
function markOrder(checks: ItemCheck[], result: CodeResult, resultId: string): void {
  if (checks.length < 2 || checks.some((c) => c.support !== "derived")) return;
  const order = [...result.values, ...result.labels].map((v) => normalizeText(String(v)));
  const positions = checks.map((c) => order.indexOf(normalizeText(c.item)));
  if (positions.some((p) => p < 0)) return;
  if (positions.every((p, i) => i === 0 || p > (positions[i - 1] ?? -1))) return;
  for (const check of checks) {
    check.status = "conflicted";
    check.support = "none";
    check.supports = [];
    check.conflicts = [resultId];
    check.note = `the question asks for an order and ${resultId} holds the items in another order: ${result.text}`;
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
export function groundingScore(checks: ItemCheck[], alignment?: Alignment): 0 | 1 | 2 {
  const score = itemsScore(checks);
  const counted = alignment?.findings.some((f) => f.conflict && f.aspect === "cardinality");
  return counted ? (Math.min(score, 1) as 0 | 1) : score;
}

function itemsScore(checks: ItemCheck[]): 0 | 1 | 2 {
  if (checks.length === 0) return 0;
  if (checks.some((c) => c.status === "conflicted")) return 0;
  const supported = checks.filter((c) => c.status === "supported").length;
  if (supported === checks.length) return 2;
  if (supported > 0) return 1;
  return checks.every((c) => c.kind === "prose") ? 1 : 0;
}

/**
 * Whether a worker's answer is derived from the tables, as the checker would find it: every
 * item of the answer is the derived result of the worker's own last successful run. "no"
 * when that result is not derived or the answer is not it; "unknown" without such a result.
 */
export async function answerDerived(
  answer: string | null,
  attempts: Attempt[],
  task: string,
): Promise<NonNullable<Packet["derived"]>> {
  const ran = resultOf(attempts);
  if (answer === null || !ran) return "unknown";
  if (ran.result.derived !== "yes") return ran.result.derived;
  const { checks } = await verifyGrounding({ answer, evidence: [], attempts, question: task });
  return checks.length > 0 && checks.every((c) => c.support === "derived") ? "yes" : "no";
}
