/**
 * Evaluation runner throughput against its latency-bound ideal (not a test): TableBench
 * questions with a stub model answering every call after 200 ms, 16 at a time. The ideal is
 * every model call's latency spread perfectly over the 16 slots; the goal is a measured rate
 * of at least 80% of it.
 *
 * Two runs, side by side: the runner driving a graph that only makes table_qa's three model
 * calls (what the runner itself costs), then the whole table_qa agent (what a question costs
 * on this machine, tables, sandbox and checks included).
 *
 * A few questions run first, untimed, so the timed run starts with the graph's modules
 * loaded and the sandbox's interpreters warm; that start-up is printed on its own. The CPU the
 * runtime, the sandbox and the stub use is printed too: on a small machine their sum over
 * the cores, not the model latency, bounds the rate.
 *
 *   npx tsx bench/eval-throughput.ts [questions=128] [concurrency=16] [latencyMs=200]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadDataset } from "../evals/datasets/index.js";
import { getScorer } from "../evals/metrics/index.js";
import type { ResultRecord } from "../evals/results-file.js";
import { type EvalGraph, runEvaluation } from "../evals/runner.js";
import type { EvalExample } from "../evals/types.js";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import type { LocalSandbox } from "../sandbox/local.js";
import { machineCpuMs } from "./machine-cpu.js";
import { spawnStub } from "./spawn-stub.js";
import { threeCallGraph } from "./three-call-graph.js";

const QUESTIONS = Number(process.argv[2] ?? 128);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const LATENCY_MS = Number(process.argv[4] ?? 200);
const WARMUP = 4;
const SAMPLE = path.resolve(
  import.meta.dirname,
  "../tests/fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

/** CPU ms of a process and its reaped children (the sandbox's runs), from /proc. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    return (ticks * 1000) / 100;
  } catch {
    return 0;
  }
}

async function sandboxCpuMs(): Promise<number> {
  const pool = (await getSandbox("local")) as LocalSandbox;
  return pool.interpreterPids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
}

const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-eval-"));
process.env.TABLEMINDS_HOME = home;
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";

/**
 * One timed run of QUESTIONS questions (after an untimed warm-up) through `runnable`, or
 * table_qa when it is unset, against a stub of its own; prints the figures.
 */
async function measure(label: string, sample: EvalExample[], runnable?: EvalGraph) {
  const stub = await spawnStub(LATENCY_MS, "tablebench");
  process.env.OPENAI_BASE_URL = stub.url;
  const run = (examples: EvalExample[], name: string) =>
    runEvaluation({
      examples,
      scorer: getScorer("tablebench"),
      graph: "table_qa",
      runnable,
      outDir: path.join(home, `${label}-${name}`),
      concurrency: CONCURRENCY,
      timeoutMs: 120_000,
      retries: 0,
      context: { memory: false, maxReflections: 0 },
    });
  const copies = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => {
      const e = sample[i % sample.length];
      if (!e) throw new Error("empty sample");
      return { ...e, id: `${e.id}-${tag}${i}` };
    });
  try {
    const warmStarted = performance.now();
    await run(copies(WARMUP, "warm"), "warmup");
    const warmMs = performance.now() - warmStarted;

    const cpuBefore = process.cpuUsage();
    const sandboxBefore = await sandboxCpuMs();
    const machineBefore = machineCpuMs();
    const started = performance.now();
    const outcome = await run(copies(QUESTIONS, "q"), "run");
    const wallMs = performance.now() - started;
    const machineAfter = machineCpuMs();
    const cpu = process.cpuUsage(cpuBefore);
    const pythonMs = (await sandboxCpuMs()) - sandboxBefore;
    const stubMs = await stub.stop();
    report(label, { records: outcome.records, wallMs, warmMs, cpu, pythonMs, stubMs });
    const machineBusy = machineAfter.busy - machineBefore.busy;
    const machineTotal = machineAfter.total - machineBefore.total;
    const ownMs = (cpu.user + cpu.system) / 1000 + pythonMs + (stubMs ?? 0);
    if (machineTotal > 0) {
      console.log(
        `  machine CPU busy during the run: ${((100 * machineBusy) / machineTotal).toFixed(0)}%, of which other processes ${((100 * Math.max(0, machineBusy - ownMs)) / machineTotal).toFixed(0)}% (figures from a loaded machine understate the runner)`,
      );
    }
  } finally {
    await stub.stop();
  }
}

function report(
  label: string,
  m: {
    records: ResultRecord[];
    wallMs: number;
    warmMs: number;
    cpu: NodeJS.CpuUsage;
    pythonMs: number;
    stubMs: number | null;
  },
) {
  const { records, wallMs } = m;
  const calls = records.reduce((sum, r) => sum + r.llmCalls, 0);
  const chainMs = Math.max(...records.map((r) => r.llmCalls)) * LATENCY_MS;
  const idealMs = Math.max((calls * LATENCY_MS) / CONCURRENCY, chainMs);
  const errors = records.filter((r) => r.error).length;
  const mean = (pick: (r: ResultRecord) => number) =>
    records.reduce((sum, r) => sum + pick(r), 0) / records.length;
  const wall = mean((r) => r.latencyMs);
  const model = mean((r) => r.llmMs ?? 0);
  const exec = mean((r) => r.execMs ?? 0);
  const nodeMs = (m.cpu.user + m.cpu.system) / 1000;
  // The stub reports its CPU for its whole life; the warm-up's share is small.
  const cpuMs = nodeMs + m.pythonMs + (m.stubMs ?? 0);
  const cores = os.availableParallelism();
  const floorMs = cpuMs / cores;
  const per = (ms: number) => `${(ms / QUESTIONS).toFixed(1)} ms`;
  const rate = (ms: number) => `${((QUESTIONS * 60_000) / ms).toFixed(1)} questions/min`;
  const slotUse = (wall * QUESTIONS) / (CONCURRENCY * wallMs);

  console.log(`${label}:`);
  console.log(
    `  start-up (untimed warm-up of ${WARMUP} questions): ${(m.warmMs / 1000).toFixed(2)} s`,
  );
  console.log(
    `  model calls: ${calls} (${(calls / QUESTIONS).toFixed(2)} per question), errors: ${errors}`,
  );
  console.log(`  measured:            ${(wallMs / 1000).toFixed(2)} s = ${rate(wallMs)}`);
  console.log(`  latency-bound ideal: ${(idealMs / 1000).toFixed(2)} s = ${rate(idealMs)}`);
  console.log(
    `  ratio (ideal / measured): ${((100 * idealMs) / wallMs).toFixed(1)}% (goal >= 80%)`,
  );
  console.log(
    `  per question: ${wall.toFixed(0)} ms wall = model calls ${model.toFixed(0)} ms + code runs (queue included) ${exec.toFixed(0)} ms + the rest ${(wall - model - exec).toFixed(0)} ms`,
  );
  // How well the runner keeps its slots busy, whatever each question costs.
  console.log(
    `  slots in use: ${(100 * slotUse).toFixed(1)}% of ${CONCURRENCY} x ${(wallMs / 1000).toFixed(2)} s; the model-only share of a question's time: ${((100 * LATENCY_MS * (calls / QUESTIONS)) / wall).toFixed(1)}%`,
  );
  console.log(
    `  CPU per question: runtime (Node) ${per(nodeMs)}, sandbox (Python) ${per(m.pythonMs)}, stub model ${m.stubMs === null ? "?" : per(m.stubMs)}`,
  );
  console.log(
    `  CPU floor (all CPU / ${cores} cores): ${(floorMs / 1000).toFixed(2)} s; ideal / max(ideal, floor) = ${((100 * idealMs) / Math.max(idealMs, floorMs)).toFixed(1)}% is the most this machine allows`,
  );
}

try {
  const sample = (await loadDataset("tablebench", { path: SAMPLE })).filter(
    (e) => e.category !== "Visualization",
  );
  console.log(
    `eval runner throughput: ${QUESTIONS} questions, concurrency ${CONCURRENCY}, ${LATENCY_MS} ms per model call, ${os.availableParallelism()} cores`,
  );
  await measure(
    "the runner alone (a graph of three model calls, no table work, no sandbox)",
    sample,
    threeCallGraph,
  );
  await measure("table_qa (the whole agent: tables, sandbox, checker)", sample);
} finally {
  await closeSandboxes();
  rmSync(home, { recursive: true, force: true });
}
