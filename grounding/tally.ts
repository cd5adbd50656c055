import type { Ballot, Branch, Verdict } from "../blackboard/schemas.js";
import { normalizeAnswer } from "./normalize.js";

/*
 * Self-consistency over branches' answers, as Mixture-of-Minds votes: the majority of
 * normalized answers wins, ties go to the answer seen first, and the first branch that gave the
 * winner is the one whose trajectory is returned. Where the checker judged, a branch's vote
 * weighs its verdict (see voteWeight); an unchecked branch counts 6. Whole numbers, so that
 * ties are exact.
 */

/** Branch ids in the order branches were made: p2 before p10, p1.c2 before p2.c1. */
export function branchOrder(a: string, b: string): number {
  const parts = (id: string) => id.split(".").map((part) => Number(part.slice(1)));
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? -1) - (y[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * What one branch's answer counts for: 6 when it passed the check (or was not checked), 5 when
 * it is grounded but worded badly, 3 when only partly grounded, 1 when nothing derives it or
 * its own result contradicts it: a value that merely occurs somewhere barely votes.
 */
export function voteWeight(verdict: Verdict | null): number {
  if (!verdict) return 6;
  return 1 + 2 * verdict.scores.grounding + (verdict.pass ? 1 : 0);
}

/** The weighted majority over the answered branches; the ballot of a vote with no answer when none answered. */
export function majorityVote(branches: Branch[]): Ballot {
  const answered = branches
    .filter((b) => b.stage === "answer" && b.answer && b.answer.final.trim())
    .sort((a, b) => branchOrder(a.id, b.id));
  const tally: Ballot["tally"] = [];
  for (const branch of answered) {
    const normalized = normalizeAnswer(branch.answer?.final ?? "");
    let entry = tally.find((t) => t.normalized === normalized);
    if (!entry) {
      entry = { normalized, weight: 0, branches: [] };
      tally.push(entry);
    }
    entry.weight += voteWeight(branch.verdict);
    entry.branches.push(branch.id);
  }
  // Ties keep the first seen: a stable sort by weight alone.
  const best = [...tally].sort((a, b) => b.weight - a.weight)[0];
  const winner = best?.branches[0] ?? null;
  const answer = answered.find((b) => b.id === winner)?.answer?.final ?? null;
  return { answer, winner, method: "majority", tally, matches: [] };
}

/** The share of the vote's weight behind the winning answer; 0 when no branch answered. */
export function winnerShare(ballot: Ballot): number {
  const total = ballot.tally.reduce((sum, t) => sum + t.weight, 0);
  const winner = ballot.tally.find((t) => t.branches.includes(ballot.winner ?? ""));
  return total > 0 ? (winner?.weight ?? 0) / total : 0;
}
