import { Overwrite } from "@langchain/langgraph";
import { z } from "zod";
import { EMPTY_BUDGET } from "./reducers.js";
import {
  type Answer,
  type Evidence,
  type TableRef,
  TableRefSchema,
  type Verdict,
} from "./schemas.js";

/*
 * A thread is a conversation: each new question on it is a turn. When a question differs from
 * the one the blackboard holds, the finished turn is archived in `turns` (its question, answer,
 * cited evidence ids and the tables its code left) and what belonged to that question is
 * cleared, while the tables (with those the code left), the sources, the turns and the
 * memories stay.
 */

export const TurnSchema = z.object({
  /** `turn1`, `turn2`, ... in the order asked. */
  id: z.string(),
  question: z.string(),
  /** The final answer as stated (a "Not sure" answer too); null when the turn gave none. */
  answer: z.string().nullable(),
  /** The evidence ids the answer cited, as they were in that turn. */
  evidence: z.array(z.string()),
  /** Whether the answer passed its check; null when it was not checked. */
  passed: z.boolean().nullable(),
  /** The tables the answering code left, under the names later code sees them by. */
  tables: z.array(TableRefSchema),
});
export type Turn = z.infer<typeof TurnSchema>;

/** Names the sandbox gives a meaning of its own (the only table, the result, the libraries). */
const RESERVED = new Set(["df", "result", "pd", "np", "plt"]);

/** The blackboard as a turn opens: every graph's state has these keys. */
export interface TurnView {
  question: string;
  /** The question the per-question keys belong to; null before the first turn opened. */
  asked: string | null;
  turns: Turn[];
  tables: TableRef[];
  answer: Answer | null;
  evidence: Evidence[];
  verdict?: Verdict | null;
}

/**
 * The keys that belong to one question, each with its empty value, for whichever of them a
 * graph's state has. Reduced keys (lists that only grow, the budget) are replaced outright.
 */
const PER_QUESTION: Record<string, () => unknown> = {
  plan: () => [],
  attempts: () => new Overwrite([]),
  evidence: () => new Overwrite([]),
  claims: () => new Overwrite([]),
  edges: () => new Overwrite([]),
  answer: () => null,
  verdict: () => null,
  checked: () => new Overwrite([]),
  reflections: () => new Overwrite([]),
  reviews: () => new Overwrite([]),
  budget: () => new Overwrite(EMPTY_BUDGET),
  branches: () => new Overwrite([]),
  ballot: () => null,
  tree: () => new Overwrite([]),
  subtasks: () => [],
  packets: () => new Overwrite([]),
  round: () => 0,
  dispatching: () => [],
  selection: () => null,
};

/**
 * The attempts the answer rests on: those of the evidence it cites, else the last one whose
 * evidence includes a table.
 */
function answeringAttempts(answer: Answer, evidence: Evidence[]): Set<string> {
  const cited = new Set(answer.evidence);
  const attempts = new Set(
    evidence
      .filter((e) => cited.has(e.id) && e.provenance.attempt !== "source")
      .map((e) => e.provenance.attempt),
  );
  if (attempts.size > 0) return attempts;
  const last = evidence.findLast((e) => e.modality === "table" && isTableRef(e.value));
  return new Set(last ? [last.provenance.attempt] : []);
}

function isTableRef(value: Evidence["value"]): value is TableRef {
  return value !== null && typeof value === "object";
}

/**
 * The tables the answering code left, named as the next turn's code will see them: by their
 * variable, unless the sandbox reserves that name or a table already has it (then
 * `turn<n>_<name>`).
 */
export function tablesLeft(
  id: string,
  answer: Answer,
  evidence: Evidence[],
  taken: readonly TableRef[],
): TableRef[] {
  const attempts = answeringAttempts(answer, evidence);
  const names = new Set(taken.map((t) => t.name));
  const left: TableRef[] = [];
  for (const packet of evidence) {
    if (packet.modality !== "table" || !isTableRef(packet.value)) continue;
    if (!attempts.has(packet.provenance.attempt)) continue;
    const own = packet.value.name;
    const name = RESERVED.has(own) || names.has(own) ? `${id}_${own}` : own;
    if (names.has(name)) continue;
    names.add(name);
    left.push({ ...packet.value, id: `${id}:${name}`, name });
  }
  return left;
}

/** The finished turn on the blackboard, archived; null when it gave no answer. */
export function finishedTurn(state: TurnView): Turn | null {
  if (state.asked === null || !state.answer) return null;
  const id = `turn${state.turns.length + 1}`;
  return {
    id,
    question: state.asked,
    answer: state.answer.final,
    evidence: state.answer.evidence,
    passed: state.verdict ? state.verdict.pass : null,
    tables: tablesLeft(id, state.answer, state.evidence, state.tables),
  };
}

/**
 * What opening a turn writes. The first question only marks itself as asked; the same question
 * again (a resumed or repeated run) changes nothing; a new one archives the finished turn, adds
 * the tables its code left, and clears every per-question key the graph's state has.
 */
export function openTurn(state: TurnView): Record<string, unknown> {
  if (state.asked === state.question) return {};
  // A thread saved before turns were kept has an answer but no `asked`: cleared, not archived.
  if (state.asked === null && !state.answer) return { asked: state.question };
  const finished = finishedTurn(state);
  const cleared = Object.fromEntries(
    Object.entries(PER_QUESTION)
      .filter(([key]) => key in state)
      .map(([key, empty]) => [key, empty()]),
  );
  return {
    ...cleared,
    asked: state.question,
    ...(finished ? { turns: [finished], tables: [...state.tables, ...finished.tables] } : {}),
  };
}
