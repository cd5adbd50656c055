import type { Conflict, Edge, Packet, Selection, Subtask } from "../blackboard/schemas.js";
import { finalSubtasks } from "../blackboard/subtasks.js";
import { claimId } from "./evidence-graph.js";

/*
 * Which packets the answer rests on: greedily the packet that adds the most coverage (a subtask
 * answered, weighted by the worker's score; subtasks that answer the question count double),
 * minus what it conflicts with among those already chosen, minus its share of the run's model
 * calls, while that gain is positive. A second packet that agrees with a chosen one adds a little
 * (corroboration); one that contradicts it costs more than it adds, so it stays out, and the
 * conflict is reported, not hidden.
 */

export const SELECTION_WEIGHTS = { conflict: 1, cost: 0.1, corroboration: 0.25, final: 2 };

export function selectPackets(
  subtasks: Subtask[],
  packets: Packet[],
  edges: Edge[],
  weights = SELECTION_WEIGHTS,
): Selection {
  const finals = new Set(finalSubtasks(subtasks).map((s) => s.id));
  const weightOf = (subtask: string) => (finals.has(subtask) ? weights.final : 1);
  const related = (kind: "conflicts" | "aligns", a: Packet, b: Packet) =>
    edges.some(
      (e) =>
        e.kind === kind &&
        ((e.from === claimId(a) && e.to === claimId(b)) ||
          (e.from === claimId(b) && e.to === claimId(a))),
    );
  const totalCalls = packets.reduce((sum, p) => sum + p.cost.llmCalls, 0);
  const costOf = (p: Packet) => (totalCalls > 0 ? p.cost.llmCalls / totalCalls : 0);

  const chosen: Packet[] = [];
  let candidates = packets.filter((p) => p.answer !== null);
  const gainOf = (p: Packet) => {
    const peers = chosen.filter((c) => c.subtask === p.subtask);
    const aligned = peers.some((c) => related("aligns", c, p));
    const coverage =
      peers.length === 0
        ? weightOf(p.subtask) * p.score
        : aligned
          ? weights.corroboration * weightOf(p.subtask) * p.score
          : 0;
    const conflicts = chosen.filter((c) => related("conflicts", c, p)).length;
    return coverage - weights.conflict * conflicts - weights.cost * costOf(p);
  };
  for (;;) {
    let best: { packet: Packet; gain: number } | null = null;
    for (const packet of candidates) {
      const gain = gainOf(packet);
      if (gain > 0 && (!best || gain > best.gain)) best = { packet, gain };
    }
    if (!best) break;
    chosen.push(best.packet);
    candidates = candidates.filter((p) => p !== best.packet);
  }

  const covered = new Set(chosen.map((p) => p.subtask));
  const totalWeight = subtasks.reduce((sum, s) => sum + weightOf(s.id), 0);
  const coveredWeight = subtasks
    .filter((s) => covered.has(s.id))
    .reduce((sum, s) => sum + weightOf(s.id), 0);
  const conflict = chosen.flatMap((a, i) =>
    chosen.slice(i + 1).filter((b) => related("conflicts", a, b)),
  ).length;
  const cost = chosen.reduce((sum, p) => sum + costOf(p), 0);
  const coverage = totalWeight > 0 ? coveredWeight / totalWeight : 0;
  return {
    packets: chosen.map((p) => p.id),
    coverage,
    conflict,
    cost,
    objective: coverage - weights.conflict * conflict - weights.cost * cost,
    uncovered: subtasks.filter((s) => !covered.has(s.id)).map((s) => s.id),
    conflicts: conflictsOf(subtasks, packets, edges, new Set(chosen.map((p) => p.id))),
  };
}

function conflictsOf(
  subtasks: Subtask[],
  packets: Packet[],
  edges: Edge[],
  chosen: Set<string>,
): Conflict[] {
  return subtasks.flatMap((subtask) => {
    const own = packets.filter((p) => p.subtask === subtask.id && p.answer !== null);
    const ids = new Set(own.map(claimId));
    const disputed = edges.some((e) => e.kind === "conflicts" && ids.has(e.from) && ids.has(e.to));
    if (!disputed) return [];
    return [
      {
        subtask: subtask.id,
        packets: own.map((p) => p.id),
        answers: own.map((p) => p.answer ?? ""),
        kept: own.find((p) => chosen.has(p.id))?.id ?? null,
      },
    ];
  });
}
