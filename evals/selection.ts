import { createHash } from "node:crypto";
import { z } from "zod";
import type { EvalExample } from "./types.js";

/** The seed of `--sample N` when no `--seed` is given. */
export const DEFAULT_SEED = 0;

/** Which of a dataset's questions a run covers. */
export const SelectionSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("all") }),
  z.object({ kind: z.literal("first"), n: z.number().int().positive() }),
  z.object({
    kind: z.literal("sample"),
    n: z.number().int().positive(),
    seed: z.number().int().nonnegative(),
  }),
]);
export type Selection = z.infer<typeof SelectionSchema>;

export function describeSelection(selection: Selection): string {
  if (selection.kind === "all") return "all";
  if (selection.kind === "first") return `first ${selection.n}`;
  return `sample ${selection.n} seed ${selection.seed}`;
}

/** The stratum of an example: its subcategory, else its category, else one for all. */
const stratumOf = (e: EvalExample) => e.subcategory ?? e.category ?? "";

/** A per-example rank fixed by the seed and the id alone, so file order does not matter. */
const rankOf = (seed: number, id: string) =>
  createHash("sha256").update(`${seed}\u0000${id}`).digest("hex");

/**
 * How many questions each stratum gives to a sample of `n`: one each while `n` allows, the
 * rest in proportion to the strata's sizes (largest remainders; ties drawn by the seed).
 */
function quotas(sizes: Map<string, number>, n: number, seed: number): Map<string, number> {
  const names = [...sizes.keys()].sort();
  const quota = new Map(names.map((s) => [s, 0]));
  let left = n;
  if (n >= names.length) {
    for (const s of names) quota.set(s, 1);
    left -= names.length;
  }
  const room = (s: string) => (sizes.get(s) ?? 0) - (quota.get(s) ?? 0);
  const total = names.reduce((sum, s) => sum + room(s), 0);
  if (left <= 0 || total === 0) return quota;
  const shares = names.map((s) => ({ s, exact: (left * room(s)) / total }));
  for (const { s, exact } of shares) quota.set(s, (quota.get(s) ?? 0) + Math.floor(exact));
  let rest = left - shares.reduce((sum, x) => sum + Math.floor(x.exact), 0);
  const remainder = (x: { exact: number }) => x.exact - Math.floor(x.exact);
  const byRemainder = [...shares].sort(
    (a, b) =>
      remainder(b) - remainder(a) ||
      (rankOf(seed, `stratum:${a.s}`) < rankOf(seed, `stratum:${b.s}`) ? -1 : 1),
  );
  for (const { s } of byRemainder) {
    if (rest <= 0) break;
    if (room(s) <= 0) continue;
    quota.set(s, (quota.get(s) ?? 0) + 1);
    rest -= 1;
  }
  return quota;
}

/**
 * A sample of `n` questions stratified by subcategory (else category), the same for the same
 * seed and dataset; within a stratum the questions whose hash of (seed, id) is smallest are
 * taken. The sample keeps the dataset's order.
 */
export function stratifiedSample(
  examples: readonly EvalExample[],
  n: number,
  seed: number,
): EvalExample[] {
  if (n >= examples.length) return [...examples];
  const strata = new Map<string, EvalExample[]>();
  for (const e of examples) {
    const list = strata.get(stratumOf(e));
    if (list) list.push(e);
    else strata.set(stratumOf(e), [e]);
  }
  const quota = quotas(new Map([...strata].map(([s, list]) => [s, list.length])), n, seed);
  const rank = new Map(examples.map((e) => [e.id, rankOf(seed, e.id)]));
  const byRank = (a: EvalExample, b: EvalExample) =>
    (rank.get(a.id) ?? "") < (rank.get(b.id) ?? "") ? -1 : 1;
  const chosen = new Set<string>();
  for (const [s, list] of strata) {
    for (const e of [...list].sort(byRank).slice(0, quota.get(s) ?? 0)) chosen.add(e.id);
  }
  return examples.filter((e) => chosen.has(e.id));
}

/** The questions a selection takes from a dataset, in the dataset's order. */
export function selectExamples(
  examples: readonly EvalExample[],
  selection: Selection,
): EvalExample[] {
  if (selection.kind === "all") return [...examples];
  if (selection.kind === "first") return examples.slice(0, selection.n);
  return stratifiedSample(examples, selection.n, selection.seed);
}
