/**
 * Running a checker engine over a case file in its own process (bench/support/checker-runner.ts)
 * and printing figures side by side: shared by the checker benchmarks (bench/checker.ts,
 * bench/checker-mutations.ts).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { baselineWorktree, git, ROOT, TSX } from "./baseline.js";
import type { RunnerOutput } from "./checker-runner.js";

export const CHECKER_RUNNER = "bench/support/checker-runner.ts";

export const ratio = (a: number, b: number) => (b === 0 ? null : a / b);
export const fixed = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));

export function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

/** Runs the case runner in `cwd` (its own artifact store), streaming its progress. */
export function runEngine(
  name: string,
  cwd: string,
  casesFile: string,
  work: string,
): Promise<RunnerOutput & { wallMs: number }> {
  const out = path.join(work, `${name}.json`);
  const home = path.join(work, `home-${name}`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [CHECKER_RUNNER, "--in", casesFile, "--out", out], {
      cwd,
      env: { ...process.env, TABLEMINDS_HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tail = "";
    const relay = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split("\n"))
        if (line.trim()) process.stderr.write(`[${name}] ${line}\n`);
    };
    child.stdout.on("data", relay);
    child.stderr.on("data", relay);
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new Error(`the ${name} runner exited with ${code}:\n${tail}`));
        return;
      }
      const output = JSON.parse(readFileSync(out, "utf8")) as RunnerOutput;
      resolve({ ...output, wallMs: performance.now() - started });
    });
  });
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** One engine's run over a case file: its name, label and output. */
export interface EngineRun {
  name: "baseline" | "current";
  label: string;
  output: RunnerOutput & { wallMs: number };
}

/**
 * Judges `casesFile` with the baseline commit's engine (a worktree of it, unless `withBaseline`
 * is false) and with this tree's, one after the other, each in its own process.
 */
export async function runEngines(
  casesFile: string,
  work: string,
  baselineCommit: string,
  withBaseline: boolean,
): Promise<EngineRun[]> {
  const runs: EngineRun[] = [];
  if (withBaseline) {
    const dir = baselineWorktree(baselineCommit, [CHECKER_RUNNER]);
    const output = await runEngine("baseline", dir, casesFile, work);
    runs.push({ name: "baseline", label: `baseline ${baselineCommit}`, output });
  }
  const head = git(["rev-parse", "--short", "HEAD"]);
  const output = await runEngine("current", ROOT, casesFile, work);
  runs.push({ name: "current", label: `current ${head}${engineDirty() ? "+wt" : ""}`, output });
  return runs;
}

/** Whether this tree's engine has changes not committed. */
export function engineDirty(): boolean {
  return (
    git([
      "status",
      "--porcelain",
      "--",
      "grounding",
      "tables",
      "sandbox",
      "models",
      "nodes",
      "blackboard",
    ]) !== ""
  );
}
