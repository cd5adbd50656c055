/**
 * Public statistics files no one here wrote (tests/fixtures/wild: election results, a
 * statistics database's exports, structural data in Windows-1252, a nested JSON of prizes),
 * read by the baseline commit's reader and by this tree's, side by side in one run: per file,
 * the header paths, title lines, totals and notes found (and rows taken wrongly), cells with
 * letters decoded wrongly; per question, the obvious code's answer, whether it is right, whether
 * the checker passed it, whether its evidence names source cells.
 *
 *   npm run bench:wild [-- --baseline <commit>] [-- --no-baseline]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { baselineWorktree, git, ROOT, TSX } from "./support/baseline.js";
import { option, table } from "./support/checker-engines.js";
import type { WildOutput } from "./support/wild-runner.js";

const RUNNER = "bench/support/wild-runner.ts";
/** The reader before issue 34. */
const BASELINE = "120e231";

function run(name: string, cwd: string, work: string): Promise<WildOutput> {
  const out = path.join(work, `${name}.json`);
  return new Promise((resolve, reject) => {
    const wild = path.join(ROOT, "tests/fixtures/wild");
    const child = spawn(TSX, [RUNNER, "--out", out, "--wild", wild], {
      cwd,
      env: { ...process.env, TABLEMINDS_HOME: path.join(work, `home-${name}`) },
      stdio: ["ignore", "inherit", "pipe"],
    });
    let tail = "";
    child.stderr.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`the ${name} runner exited with ${code}:\n${tail}`));
      else resolve(JSON.parse(readFileSync(out, "utf8")) as WildOutput);
    });
  });
}

const of = (n: number, total: number) => `${n}/${total}`;
const rows = (s: { expected: number; found: number; wrong: number }) =>
  `${of(s.found, s.expected)} (${s.wrong})`;

const work = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-wild-"));
const baseline = option("--baseline", BASELINE);
const runs: { label: string; output: WildOutput }[] = [];
if (!process.argv.includes("--no-baseline")) {
  process.stderr.write(`reading with the baseline ${baseline} ...\n`);
  const dir = baselineWorktree(baseline, [
    RUNNER,
    "bench/support/obvious-coder.ts",
    "bench/support/reading-score.ts",
  ]);
  runs.push({ label: `before (${baseline})`, output: await run("baseline", dir, work) });
}
const head = git(["rev-parse", "--short", "HEAD"]);
process.stderr.write(`reading with this tree (${head}) ...\n`);
runs.push({ label: `after (${head})`, output: await run("current", ROOT, work) });

console.log(
  `Files (totals and notes: found/expected (taken wrongly)); ${runs.map((r) => r.label).join(" | ")}\n`,
);
const files = runs[0]?.output.files ?? [];
console.log(
  table(
    [
      "file",
      ...runs.flatMap((r) => [
        `loads ${r.label}`,
        "paths",
        "titles",
        "totals",
        "notes",
        "C1 cells",
      ]),
    ],
    files.map((f) => [
      f.file,
      ...runs.flatMap((r) => {
        const g = r.output.files.find((x) => x.file === f.file);
        if (!g) return ["?", "", "", "", "", ""];
        return [
          g.error ? "no" : `${g.rows}x${g.columns}`,
          of(...g.paths),
          of(...g.titles),
          rows(g.totals),
          rows(g.notes),
          String(g.c1Cells),
        ];
      }),
    ]),
  ),
);
for (const r of runs) {
  for (const f of r.output.files)
    if (f.error) console.log(`${r.label}: ${f.file}: ${f.error.slice(0, 160)}`);
}

console.log(
  "\nQuestions (the obvious code for each; skipped: one step over one column cannot answer it)\n",
);
const questions = runs[0]?.output.questions ?? [];
console.log(
  table(
    ["question", ...runs.flatMap((r) => [`${r.label}: printed`, "right", "passed", "cited"])],
    questions
      .filter((q) => q.skipped === null)
      .map((q) => [
        `${q.file.slice(0, 14)}: ${q.question.slice(0, 50)}`,
        ...runs.flatMap((r) => {
          const o = r.output.questions.find((x) => x.question === q.question);
          if (!o) return ["?", "", "", ""];
          return [
            o.printed.slice(0, 22),
            o.right ? "yes" : "no",
            o.pass ? "yes" : "no",
            o.cited ? "yes" : "no",
          ];
        }),
      ]),
  ),
);
console.log();
const summary = runs.map((r) => {
  const asked = r.output.questions.filter((q) => q.skipped === null);
  const right = asked.filter((q) => q.right);
  const wrongPassed = asked.filter((q) => !q.right && q.pass);
  const rightPassed = right.filter((q) => q.pass);
  const cited = right.filter((q) => q.cited);
  return [
    r.label,
    `${r.output.files.filter((f) => !f.error).length}/${r.output.files.length}`,
    of(right.length, asked.length),
    of(rightPassed.length, right.length),
    of(wrongPassed.length, asked.length - right.length),
    of(cited.length, right.length),
  ];
});
console.log(
  table(
    ["reader", "files loaded", "right", "right passed", "wrong passed", "right cited"],
    summary,
  ),
);
