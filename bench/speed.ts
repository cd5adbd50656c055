/**
 * The speed figures before and after, side by side in one run (not a test): each benchmark
 * below runs on a base commit (a worktree beside this tree, with this tree's bench scripts
 * copied in, so both sides are measured by the same script) and on this tree, alternately,
 * one after the other, with the machine's load average printed beside each run.
 *
 *   npm run bench:speed [base=HEAD~1] [rounds=1] [only=overhead,sandbox,search,search-1s,large]
 *
 * The figures are read off each benchmark's own lines; a figure one side does not print is "-".
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { baselineWorktree, git, ROOT, TSX } from "./support/baseline.js";

const BASE = process.argv[2] ?? "HEAD~1";
const ROUNDS = Number(process.argv[3] ?? 1);
const ONLY = process.argv[4]?.split(",");

interface Figure {
  name: string;
  pattern: RegExp;
  goal?: string;
}

interface Bench {
  id: string;
  script: string;
  args: string[];
  figures: Figure[];
}

const number = String.raw`([-\d.]+)`;
const BENCHES: Bench[] = [
  {
    id: "overhead",
    script: "bench/overhead.ts",
    args: ["30"],
    figures: [
      {
        name: "table_qa overhead / bare graph of as many steps",
        pattern: new RegExp(String.raw`overhead / floor\s+${number}x`),
        goal: "<= 2x",
      },
      {
        name: "steps a table_qa run took",
        pattern: new RegExp(String.raw`steps a run took\s+${number}`),
      },
      {
        name: "overhead, ms a run",
        pattern: new RegExp(String.raw`^\s+orchestration overhead\s+${number} ms \(`, "m"),
      },
      {
        name: "overhead share of wall at 200 ms a call",
        pattern: new RegExp(String.raw`overhead share of wall\s+${number}%`),
        goal: "<= 2%",
      },
    ],
  },
  {
    id: "sandbox",
    script: "bench/sandbox.ts",
    args: ["300"],
    figures: [
      {
        name: "warm round trip vs cold spawn, back to back (p50)",
        pattern: new RegExp(`ratio back to back: p50 ${number}x`),
        goal: ">= 100x",
      },
      {
        name: "warm round trip vs cold spawn, 20 ms apart (p50)",
        pattern: new RegExp(`20 ms apart: p50 ${number}x`),
      },
      {
        name: "1,000 rows: lineage on / off (p50)",
        pattern: new RegExp(`1,000 rows, ratio on/off: p50 ${number}x`),
        goal: "~1.5x",
      },
      {
        name: "1,000 rows: lineage on, p50 ms",
        pattern: new RegExp(String.raw`1,000 rows, lineage on:\s+p50 ${number} ms`),
      },
      {
        name: "1,000 rows: lineage on, code seen before, p50 ms",
        pattern: new RegExp(String.raw`1,000 rows, lineage on, seen before:\s+p50 ${number} ms`),
      },
      {
        name: "20 rows: lineage on / off (p50)",
        pattern: new RegExp(String.raw`20 rows\s*, ratio on/off: p50 ${number}x`),
      },
    ],
  },
  ...[200, 1000].map(
    (latency): Bench => ({
      id: latency === 200 ? "search" : "search-1s",
      script: "bench/search.ts",
      args: ["3", String(latency), "no-eval"],
      figures: [
        {
          name: `mom, 8 plans / one plan, ${latency} ms a call`,
          pattern: new RegExp(String.raw`eight / one\s+${number}x`),
          goal: "<= 1.25x",
        },
        {
          name: `mcts wall / latency-bound ideal, ${latency} ms a call`,
          pattern: new RegExp(String.raw`wall / latency-bound ideal\s+${number}x`),
        },
        {
          name: `mcts wall / ideal counting the sandbox's CPU, ${latency} ms a call`,
          pattern: new RegExp(String.raw`wall / ideal counting CPU\s+${number}x`),
          goal: "<= 1.3x",
        },
        {
          name: `mcts slot time in the sandbox, ${latency} ms a call`,
          pattern: new RegExp(String.raw`slot time in the sandbox\s+${number}%`),
        },
      ],
    }),
  ),
  {
    id: "large",
    script: "bench/large-tables.ts",
    args: ["100000", "300000"],
    figures: [
      {
        name: "300,000 x 50 CSV: ask / pandas' read",
        pattern: new RegExp(String.raw`300000 x 50: ask .* ${number}x \(goal`),
        goal: "<= 3x",
      },
      {
        name: "300,000 x 50 CSV: ask, s (best of 2)",
        pattern: new RegExp(`300000 x 50: ask ${number} s`),
      },
    ],
  },
];

function load(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

/** Runs `script` in `cwd` with tsx, its output kept (and its last lines shown on failure). */
function run(cwd: string, script: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(TSX, [script, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("close", (code) => {
      if (code !== 0)
        console.log(`  (exit ${code}) ${out.trim().split("\n").slice(-3).join(" | ")}`);
      resolve(out);
    });
  });
}

const benchFiles = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|py)$/.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));

const baseSha = git(["rev-parse", "--short", `${BASE}^{commit}`]);
const headSha = git(["rev-parse", "--short", "HEAD"]);
const dirty = git(["status", "--porcelain", "--untracked-files=no"]) !== "";
const baseDir = baselineWorktree(BASE, benchFiles("bench"));
// The CLI runs the checkout's build when it matches the sources, as after `npm run setup`: each
// side is built first, so that neither pays for compiling its sources at every start.
for (const dir of [baseDir, ROOT]) {
  try {
    execFileSync(process.execPath, ["scripts/build.mjs", "--checkout"], {
      cwd: dir,
      stdio: "ignore",
    });
  } catch {
    console.log(`(no build in ${dir}: its CLI runs the sources)`);
  }
}
const sides = [
  { label: `before (${baseSha})`, dir: baseDir },
  { label: `after (${headSha}${dirty ? "+changes" : ""})`, dir: ROOT },
];

const logs = mkdtempSync(path.join(os.tmpdir(), "tableminds-speed-"));
console.log(`speed, before and after: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ""}`);
console.log(`each run's whole output: ${logs}`);
const rows: { figure: Figure; cells: string[] }[] = [];
for (const bench of BENCHES.filter((b) => !ONLY || ONLY.includes(b.id))) {
  const values: string[][] = bench.figures.map(() => sides.map(() => ""));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternated: the first side of one round is the second of the next.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) {
      const at = load();
      const started = performance.now();
      const out = await run(sides[side]?.dir ?? ROOT, bench.script, bench.args);
      writeFileSync(
        path.join(logs, `${bench.id}-${side === 0 ? "before" : "after"}-${round}.log`),
        out,
      );
      const secs = ((performance.now() - started) / 1000).toFixed(0);
      console.log(`${bench.id}, ${sides[side]?.label}: ${secs} s, load ${at} -> ${load()}`);
      bench.figures.forEach((figure, i) => {
        const found = figure.pattern.exec(out)?.[1] ?? "-";
        const cell = values[i];
        if (cell) cell[side] = cell[side] ? `${cell[side]}, ${found}` : found;
      });
    }
  }
  bench.figures.forEach((figure, i) => {
    rows.push({ figure, cells: values[i] ?? [] });
  });
}

console.log(`\n| figure | ${sides.map((s) => s.label).join(" | ")} | goal |`);
console.log(`| --- | ${sides.map(() => "---").join(" | ")} | --- |`);
for (const { figure, cells } of rows) {
  console.log(`| ${figure.name} | ${cells.join(" | ")} | ${figure.goal ?? ""} |`);
}
