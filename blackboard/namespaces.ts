import type { Attempt, Evidence } from "./schemas.js";

/*
 * Two workers of one run both number their attempts a1, a2, ...: before their work meets on the
 * blackboard, each attempt and the evidence it produced is renamed under the worker's prefix
 * (`s1.pandas.a1`, `s1.pandas.a1:out2`). Source cells keep their ids: the same cell is the same
 * evidence whoever found it.
 */

export interface Trajectory {
  attempts: Attempt[];
  evidence: Evidence[];
}

function renamer(prefix: string, attempts: Attempt[]) {
  const renamed = new Map(attempts.map((a) => [a.id, `${prefix}.${a.id}`]));
  const attempt = (id: string) => renamed.get(id) ?? id;
  const evidenceId = (id: string) => {
    const colon = id.indexOf(":");
    const owner = colon < 0 ? undefined : renamed.get(id.slice(0, colon));
    return owner ? owner + id.slice(colon) : id;
  };
  return { attempt, evidenceId };
}

/** The trajectory with its attempts and their evidence under `prefix`; plus the id mapping. */
export function namespaced(
  prefix: string,
  trajectory: Trajectory,
): Trajectory & { evidenceId: (id: string) => string } {
  const { attempt, evidenceId } = renamer(prefix, trajectory.attempts);
  const attempts = trajectory.attempts.map((a) => ({ ...a, id: attempt(a.id) }));
  const evidence = trajectory.evidence.map((e): Evidence => {
    const value =
      e.value !== null && typeof e.value === "object"
        ? { ...e.value, id: evidenceId(e.value.id) }
        : e.value;
    const anchor =
      e.anchor.kind === "code" ? { ...e.anchor, attempt: attempt(e.anchor.attempt) } : e.anchor;
    return {
      ...e,
      id: evidenceId(e.id),
      anchor,
      value,
      provenance: {
        attempt: attempt(e.provenance.attempt),
        parents: e.provenance.parents.map(evidenceId),
      },
    };
  });
  return { attempts, evidence, evidenceId };
}
