/**
 * The small embedded model on simple TableBench questions (not a test): the first N questions
 * of each of four simple subtypes (FactChecking/MatchBased, NumericalReasoning/Aggregation,
 * Counting, Ranking) run through `tableminds eval run` with no endpoint configured, so the
 * installed local model answers (the 98 MB fallback here), the sandbox included. It reports,
 * per arm: how many right (TableBench's own metric), how many wrong answers the check passed,
 * errors, and seconds per question; with --before <rev>, the same questions on that commit
 * too (a worktree of it under .tmp-before, sharing node_modules), side by side.
 *
 *   npm run bench:small-model [-- --per-subtype 10] [--before <rev>] [--before-per-subtype 5]
 *                               [--timeout-ms 150000] [--out <dir>]
 *
 * Arms run one after the other, one question at a time, so their seconds compare.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";

const ROOT = path.resolve(import.meta.dirname, "..");
const DATA = path.resolve(ROOT, "../shared/datasets/tablebench/tablebench_test.jsonl");
const SUBTYPES = ["MatchBased", "Aggregation", "Counting", "Ranking"];

const { values: args } = parseArgs({
  options: {
    "per-subtype": { type: "string", default: "10" },
    before: { type: "string" },
    "before-per-subtype": { type: "string" },
    "timeout-ms": { type: "string", default: "150000" },
    out: { type: "string" },
  },
});
const perSubtype = Number(args["per-subtype"]);
const beforePer = Number(args["before-per-subtype"] ?? perSubtype);
const out = args.out ?? path.join(os.tmpdir(), `tableminds-small-model-${process.pid}`);

const Question = z.looseObject({ id: z.string(), qsubtype: z.string() });
const Result = z.object({
  id: z.string(),
  score: z.object({ score: z.number() }),
  latencyMs: z.number(),
  error: z.string().nullable(),
  verdict: z.object({ pass: z.boolean(), sure: z.boolean() }).optional(),
});
type Result = z.infer<typeof Result>;

if (!existsSync(DATA)) {
  console.error(`bench:small-model needs TableBench's test set at ${DATA}`);
  process.exit(1);
}
const all = readFileSync(DATA, "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as unknown);
const chosen = (n: number) =>
  SUBTYPES.flatMap((subtype) =>
    all.filter((q) => Question.parse(q).qsubtype === subtype).slice(0, n),
  );

function writeSet(name: string, questions: unknown[]): string {
  const dir = path.join(out, `data-${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "tablebench_test.jsonl"),
    questions.map((q) => `${JSON.stringify(q)}\n`).join(""),
  );
  return dir;
}

function run(cwd: string, data: string, dir: string): Promise<number> {
  const env = { ...process.env, OPENAI_API_KEY: "", OPENAI_BASE_URL: "", TABLEMINDS_MODEL: "" };
  const argv = ["cli/bin.js", "eval", "run", "-d", "tablebench", "--data", data, "-o", dir];
  argv.push("-c", "1", "--timeout", String(args["timeout-ms"]));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ["ignore", "inherit", "pipe"] });
    child.stderr.on("data", () => {});
    child.on("close", (code) => resolve(code ?? 1));
  });
}

function results(dir: string): Result[] {
  const file = path.join(dir, "results.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => Result.parse(JSON.parse(line)));
}

function figures(rows: Result[]) {
  const seconds = rows.map((r) => r.latencyMs / 1000).sort((a, b) => a - b);
  const median = seconds[Math.floor(seconds.length / 2)] ?? 0;
  const mean = seconds.reduce((a, b) => a + b, 0) / Math.max(1, seconds.length);
  return {
    n: rows.length,
    right: rows.filter((r) => r.score.score === 1).length,
    wrongPassed: rows.filter((r) => r.score.score < 1 && r.verdict?.pass && r.verdict.sure).length,
    passed: rows.filter((r) => r.verdict?.pass && r.verdict.sure).length,
    errors: rows.filter((r) => r.error).length,
    mean,
    median,
  };
}

const arms: { name: string; rows: Result[] }[] = [];
mkdirSync(out, { recursive: true });
const afterData = writeSet("after", chosen(perSubtype));
process.stderr.write(`after: ${perSubtype * SUBTYPES.length} questions on this checkout\n`);
await run(ROOT, afterData, path.join(out, "after"));
arms.push({ name: "after", rows: results(path.join(out, "after")) });

if (args.before) {
  const tree = path.join(ROOT, ".tmp-before");
  await new Promise((resolve) =>
    spawn("git", ["worktree", "add", "-f", tree, args.before as string], {
      cwd: ROOT,
      stdio: "ignore",
    }).on("close", resolve),
  );
  if (!existsSync(path.join(tree, "node_modules"))) {
    symlinkSync(path.join(ROOT, "node_modules"), path.join(tree, "node_modules"));
  }
  const beforeData = writeSet("before", chosen(beforePer));
  process.stderr.write(`before: ${beforePer * SUBTYPES.length} questions on ${args.before}\n`);
  await run(tree, beforeData, path.join(out, "before"));
  arms.push({ name: `before (${args.before})`, rows: results(path.join(out, "before")) });
  await new Promise((resolve) =>
    spawn("git", ["worktree", "remove", "--force", tree], { cwd: ROOT, stdio: "ignore" }).on(
      "close",
      resolve,
    ),
  );
  rmSync(tree, { recursive: true, force: true });
}

const fmt = (name: string, rows: Result[]) => {
  const f = figures(rows);
  return `| ${name} | ${f.n} | ${f.right} | ${f.passed} | ${f.wrongPassed} | ${f.errors} | ${f.mean.toFixed(1)} | ${f.median.toFixed(1)} |`;
};
console.log(`\nTableBench, ${SUBTYPES.join(" / ")}, the embedded model; results in ${out}\n`);
console.log(
  "| arm | questions | right | passed | wrong passed | errors | s each (mean) | s each (median) |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const arm of arms) console.log(fmt(arm.name, arm.rows));
const before = arms[1];
if (before) {
  const common = new Set(before.rows.map((r) => r.id));
  const after = arms[0]?.rows.filter((r) => common.has(r.id)) ?? [];
  console.log(fmt("after, on the before's questions", after));
}
