import type { Packet, Subtask } from "./schemas.js";

/*
 * Reading the orchestrator's subtasks and packets: which subtask can run, what it gets from
 * the subtasks it depends on, and which subtasks end the question.
 */

export function packetId(subtask: string, worker: string): string {
  return `${subtask}.${worker}`;
}

/** The packet of a worker that gave no answer, and why (with what it cost before failing). */
export function unanswered(
  subtask: string,
  worker: string,
  error: string,
  cost: Packet["cost"] = { llmCalls: 0, ms: 0 },
): Packet {
  const id = packetId(subtask, worker);
  return { id, subtask, worker, answer: null, evidence: [], trajectory: [], score: 0, cost, error };
}

/** The packet whose answer a subtask settled on so far: its first worker's that answered. */
export function answeringPacket(subtask: Subtask, packets: Packet[]): Packet | null {
  for (const worker of subtask.workers) {
    const packet = packets.find((p) => p.id === packetId(subtask.id, worker));
    if (packet?.answer != null) return packet;
  }
  return null;
}

/** The answer a subtask settled on so far: its first worker's that answered. */
export function answerOf(subtask: Subtask, packets: Packet[]): string | null {
  return answeringPacket(subtask, packets)?.answer ?? null;
}

/** Whether every worker of the subtask has returned its packet. */
export function isDone(subtask: Subtask, packets: Packet[]): boolean {
  const ids = new Set(packets.map((p) => p.id));
  return subtask.workers.every((worker) => ids.has(packetId(subtask.id, worker)));
}

/** Subtasks not yet done whose dependencies all are. */
export function readySubtasks(subtasks: Subtask[], packets: Packet[]): Subtask[] {
  const done = new Set(subtasks.filter((s) => isDone(s, packets)).map((s) => s.id));
  return subtasks.filter((s) => !done.has(s.id) && s.dependsOn.every((d) => done.has(d)));
}

/**
 * The answers of the subtasks `subtask` depends on, in its order, each with whether it is
 * derived from the tables (its packet's `derived`).
 */
export function inputsOf(subtask: Subtask, subtasks: Subtask[], packets: Packet[]) {
  return subtask.dependsOn.flatMap((id) => {
    const dependency = subtasks.find((s) => s.id === id);
    if (!dependency) return [];
    const packet = answeringPacket(dependency, packets);
    const derived = packet?.derived ?? "unknown";
    return [{ id, task: dependency.task, answer: packet?.answer ?? null, derived }];
  });
}

/** Subtasks no other depends on: their answers answer the question. */
export function finalSubtasks(subtasks: Subtask[]): Subtask[] {
  const needed = new Set(subtasks.flatMap((s) => s.dependsOn));
  return subtasks.filter((s) => !needed.has(s.id));
}
