/**
 * Judges stored trajectories (a real-model run's trajectories.jsonl) with this tree's rules and
 * prints one JSON line a trajectory: `{id, pass}`. Copied into a worktree of an older commit, it
 * judges with that commit's rules, through `ruleVerdict`, which both have; `--without-results`
 * leaves out the evidence packets of code results, which an older executor never posted.
 *
 *   tsx bench/support/judge-trajectories.ts <trajectories.jsonl> [--without-results]
 */
import { readFileSync } from "node:fs";
import { ruleVerdict } from "../../grounding/verdict.js";

type VerdictInput = Parameters<typeof ruleVerdict>[0];
type Stored = Omit<VerdictInput, "answer"> & { id: string; answer?: VerdictInput["answer"] };

const [file, flag] = process.argv.slice(2);
if (!file) throw new Error("usage: judge-trajectories.ts <trajectories.jsonl> [--without-results]");
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const stored = JSON.parse(line) as Stored;
  const evidence =
    flag === "--without-results"
      ? stored.evidence.filter((e) => !e.id.endsWith(":result"))
      : stored.evidence;
  const { verdict } = await ruleVerdict({ ...stored, answer: stored.answer ?? null, evidence });
  process.stdout.write(`${JSON.stringify({ id: stored.id, pass: verdict.pass })}\n`);
}
process.exit(0);
