import type { Claim, Edge, Packet, Subtask } from "../blackboard/schemas.js";
import { sameAnswer } from "./agreement.js";

/*
 * The evidence graph of an orchestrated run: each worker's answer is a claim, supported by the
 * evidence its packet cites; two workers' claims on one subtask align when they agree and
 * conflict when they do not; a subtask's claims depend on those of the subtasks it used.
 */

export function claimId(packet: Pick<Packet, "id">): string {
  return `claim:${packet.id}`;
}

function pairs<T>(items: T[]): [T, T][] {
  return items.flatMap((a, i) => items.slice(i + 1).map((b): [T, T] => [a, b]));
}

export function evidenceGraph(
  subtasks: Subtask[],
  packets: Packet[],
): { claims: Claim[]; edges: Edge[] } {
  const answered = packets.filter((p) => p.answer !== null);
  const edges: Edge[] = [];
  for (const packet of answered) {
    for (const id of packet.evidence)
      edges.push({ from: id, to: claimId(packet), kind: "supports" });
  }
  const conflicted = new Set<string>();
  for (const subtask of subtasks) {
    const own = answered.filter((p) => p.subtask === subtask.id);
    for (const [a, b] of pairs(own)) {
      const agree = sameAnswer(a.answer ?? "", b.answer ?? "");
      edges.push({ from: claimId(a), to: claimId(b), kind: agree ? "aligns" : "conflicts" });
      if (!agree) for (const p of [a, b]) conflicted.add(p.id);
    }
    for (const dependency of subtask.dependsOn) {
      for (const from of own) {
        for (const to of answered.filter((p) => p.subtask === dependency)) {
          edges.push({ from: claimId(from), to: claimId(to), kind: "depends" });
        }
      }
    }
  }
  const claims = answered.map(
    (packet): Claim => ({
      id: claimId(packet),
      text: packet.answer ?? "",
      evidence: packet.evidence,
      status: conflicted.has(packet.id)
        ? "conflicted"
        : packet.evidence.length > 0
          ? "supported"
          : "unsupported",
    }),
  );
  return { claims, edges };
}
