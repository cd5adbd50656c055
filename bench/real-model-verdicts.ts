/**
 * Wrong answers that passed, before and after: the answers of a real-model run (its
 * trajectories.jsonl, written by bench/real-model.ts) judged by this tree's checker and, on the
 * same trajectories, by the checker of an earlier commit (a git worktree of it), side by side.
 * An answer is right when its official score says so (evals/selective.ts).
 *
 *   npx tsx bench/real-model-verdicts.ts <run directory of one system> [--baseline 8cb955a]
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadResults } from "../evals/results-file.js";
import { isRight } from "../evals/selective.js";
import { baselineWorktree, ROOT, TSX } from "./support/baseline.js";

const JUDGE = "bench/support/judge-trajectories.ts";

/** Whether each trajectory passed, judged by the checker of the tree at `cwd`. */
function judge(cwd: string, trajectories: string, extra: string[]): Map<string, boolean> {
  const run = spawnSync(TSX, [JUDGE, trajectories, ...extra], { cwd, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`the judge in ${cwd} failed:\n${run.stderr.slice(-2000)}`);
  const lines = run.stdout.split("\n").filter((l) => l.startsWith("{"));
  return new Map(
    lines.map((l) => {
      const { id, pass } = JSON.parse(l) as { id: string; pass: boolean };
      return [id, pass];
    }),
  );
}

const { values, positionals } = parseArgs({
  options: { baseline: { type: "string", default: "8cb955a" } },
  allowPositionals: true,
});
const dir = positionals[0];
if (!dir) throw new Error("usage: real-model-verdicts.ts <run directory> [--baseline <commit>]");
const commit = values.baseline;
const trajectories = path.resolve(dir, "trajectories.jsonl");
const right = new Map(
  loadResults(path.resolve(dir, "results.jsonl")).records.map((r) => [r.id, isRight(r.score)]),
);
const after = judge(ROOT, trajectories, []);
const before = judge(baselineWorktree(commit, [JUDGE]), trajectories, ["--without-results"]);
const ids = [...after.keys()].filter((id) => right.has(id));
const count = (verdicts: Map<string, boolean>, wanted: boolean) =>
  ids.filter((id) => right.get(id) === wanted && verdicts.get(id) === true).length;
const wrong = ids.filter((id) => right.get(id) === false).length;
const rights = ids.length - wrong;
const row = (label: string, a: string, b: string) =>
  `${label.padEnd(28)} ${a.padStart(16)} ${b.padStart(16)}`;
const lines = [
  `${ids.length} answers of ${path.basename(path.resolve(dir))} (${rights} right, ${wrong} wrong by the official score)`,
  row("", `before ${commit}`, "after (this tree)"),
  row(
    "wrong answers that passed",
    `${count(before, false)}/${wrong}`,
    `${count(after, false)}/${wrong}`,
  ),
  row(
    "right answers that passed",
    `${count(before, true)}/${rights}`,
    `${count(after, true)}/${rights}`,
  ),
];
process.stdout.write(`${lines.join("\n")}\n`);
