import { executesByOutput } from "../rewards/execution.js";
import type { MinedNode, MinedQuestion } from "./records.js";

/*
 * Pseudo-gold selection as Mixture-of-Minds' released code does it. A node's correctness is
 * the mean official score of the answers below it (an answer's own score for an answer). One
 * addition: code whose result does not depend on the table (the gold typed in as a literal, or
 * code that reads only metadata) reaches the gold without deriving it, so it is never
 * pseudo-gold, nor are the answers read from its run.
 */

/** Subtypes whose answers are free text: lower bars for code and answers. */
export const OPEN_ENDED = new Set(["CausalAnalysis", "DescriptiveAnalysis", "AnomalyDetection"]);

export const THRESHOLDS = {
  plan: 0.1,
  code: { closed: 0.5, open: 0.3 },
  answer: { closed: 0.7, open: 0.3 },
  answersPerQuestion: 2,
  dpoGap: 0.1,
} as const;

export interface Scored {
  node: MinedNode;
  correctness: number;
}

export interface PseudoGold {
  /** The plan of the best mean downstream correctness (> 0.1), lowest index on ties. */
  plan: Scored | null;
  /** The best error-free code at or above the bar. */
  code: Scored | null;
  /** Code runs whose answerer input is kept (some answer from it reached the bar), at most 2. */
  answers: Scored[];
  /** Best and worst plan, when their correctness differs by at least 0.1. */
  planPair: { chosen: Scored; rejected: Scored } | null;
}

/** Branch order: `p2` before `p10`, a parent before its children. */
export function compareIds(a: string, b: string): number {
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = Number((pa[i] ?? "").slice(1));
    const y = Number((pb[i] ?? "").slice(1));
    if (x !== y) return x - y;
  }
  return pa.length - pb.length;
}

/** Each node's correctness; nodes with no scored answer below them are left out. */
export function correctness(nodes: readonly MinedNode[]): Map<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const leaf of nodes) {
    if (leaf.stage !== "answer" || leaf.score === null) continue;
    for (let node: MinedNode | undefined = leaf; node; ) {
      const acc = sums.get(node.id) ?? { sum: 0, n: 0 };
      sums.set(node.id, { sum: acc.sum + leaf.score, n: acc.n + 1 });
      node = node.parent ? byId.get(node.parent) : undefined;
    }
  }
  return new Map([...sums].map(([id, { sum, n }]) => [id, sum / n]));
}

/** The highest correctness, the lowest index on ties. */
function best(candidates: Scored[]): Scored | null {
  return (
    [...candidates].sort(
      (a, b) => b.correctness - a.correctness || compareIds(a.node.id, b.node.id),
    )[0] ?? null
  );
}

function scoredOf(
  nodes: readonly MinedNode[],
  stage: MinedNode["stage"],
  scores: Map<string, number>,
) {
  return nodes
    .filter((n) => n.stage === stage && scores.has(n.id))
    .map((node) => ({ node, correctness: scores.get(node.id) ?? 0 }))
    .sort((a, b) => compareIds(a.node.id, b.node.id));
}

export function selectPseudoGold(question: Pick<MinedQuestion, "qsubtype" | "nodes">): PseudoGold {
  const open = OPEN_ENDED.has(question.qsubtype ?? "");
  const scores = correctness(question.nodes);
  const plans = scoredOf(question.nodes, "plan", scores);
  const codes = scoredOf(question.nodes, "code", scores).filter((c) => c.node.derived !== "no");
  const plan = best(plans.filter((p) => p.correctness > THRESHOLDS.plan));
  const codeBar = open ? THRESHOLDS.code.open : THRESHOLDS.code.closed;
  const code = best(
    codes.filter((c) => c.correctness >= codeBar && executesByOutput(c.node.execution) === 1),
  );
  const answerBar = open ? THRESHOLDS.answer.open : THRESHOLDS.answer.closed;
  const topAnswer = (c: Scored) =>
    Math.max(
      ...question.nodes
        .filter((n) => n.stage === "answer" && n.parent === c.node.id)
        .map((n) => n.score ?? 0),
    );
  const answers = codes
    .map((c) => ({ ...c, top: topAnswer(c) }))
    .filter((c) => c.top >= answerBar)
    .sort((a, b) => b.top - a.top || compareIds(a.node.id, b.node.id))
    .slice(0, THRESHOLDS.answersPerQuestion)
    .map(({ node, correctness }) => ({ node, correctness }));
  const top = best(plans);
  const worst =
    [...plans].sort(
      (a, b) => a.correctness - b.correctness || compareIds(a.node.id, b.node.id),
    )[0] ?? null;
  const planPair =
    top && worst && top.correctness - worst.correctness >= THRESHOLDS.dpoGap - 1e-9
      ? { chosen: top, rejected: worst }
      : null;
  return { plan, code, answers, planPair };
}
