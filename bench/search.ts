/**
 * Test-time scaling against its latency-bound ideal (not a test), with a stub model in its own
 * process answering every call after 200 ms:
 *
 * - mom with 8 plans against mom with one (one solve and the vote), alternately, medians: the
 *   branches run side by side, so the critical path should stay one trajectory plus the vote;
 *   goal <= 1.25x.
 * - mcts with a budget of 64 model calls at concurrency 16 against its ideal: the larger of the
 *   calls it made x the latency / 16 (latency-bound) and the CPU its sandbox used / the cores
 *   (CPU-bound); goal <= 1.3x. Beside it, the latency-bound ratio alone and the share of its
 *   slots' time its branches spent in the sandbox (waiting for a worker included).
 * - an evaluation of TableBench questions through mom (8 plans) and through table_qa at the
 *   same question concurrency: model calls per second reaching the stub, questions per second.
 *
 *   npx tsx bench/search.ts [runs=5] [latencyMs=200] [no-eval]
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadDataset } from "../evals/datasets/index.js";
import { getScorer } from "../evals/metrics/index.js";
import { runEvaluation } from "../evals/runner.js";
import { graph as mcts } from "../graphs/mcts/graph.js";
import { graph as mom } from "../graphs/mom/graph.js";
import { closeSandboxes, getSandbox } from "../sandbox/index.js";
import type { Configuration } from "../settings/configuration.js";
import { MEDALS_QUESTION } from "../tests/support/scripts.js";
import { spawnStub } from "./spawn-stub.js";
import { sandboxCpuMs } from "./support/sandbox-cpu.js";

const RUNS = Number(process.argv[2] ?? 5);
const LATENCY_MS = Number(process.argv[3] ?? 200);
const EVALUATE = process.argv[4] !== "no-eval";
const TABLE = path.resolve(import.meta.dirname, "../examples/olympics_2020_medals.csv");
const SAMPLE = path.resolve(
  import.meta.dirname,
  "../tests/fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

process.env.TABLEMINDS_HOME = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-search-"));
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";
process.env.LANGSMITH_TRACING = "false";

const input = { question: MEDALS_QUESTION, sources: [{ path: TABLE }] };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

async function momWall(plans: number): Promise<number> {
  const context: Partial<Configuration> = { plans, maxConcurrency: 8 };
  const { ms, value } = await timed(() => mom.invoke(input, { context, maxConcurrency: 8 }));
  if ((value as { answer?: { final: string } }).answer?.final !== "203")
    throw new Error("bad answer");
  return ms;
}

const stub = await spawnStub(LATENCY_MS);
process.env.OPENAI_BASE_URL = stub.url;

await momWall(1);
await momWall(8);
const one: number[] = [];
const eight: number[] = [];
for (let i = 0; i < RUNS; i++) {
  one.push(await momWall(1));
  eight.push(await momWall(8));
}
console.log(`mom, ${LATENCY_MS} ms a model call, ${RUNS} runs each (medians)`);
console.log(`  one plan (one solve + vote)  ${median(one).toFixed(0)} ms`);
console.log(`  eight plans side by side     ${median(eight).toFixed(0)} ms`);
console.log(
  `  eight / one                  ${(median(eight) / median(one)).toFixed(2)}x   (goal <= 1.25x)`,
);

const concurrency = 16;
const searchContext: Partial<Configuration> = {
  searchBudget: 64,
  maxConcurrency: concurrency,
  searchWidth: 16,
  maxCodeAttempts: 1,
};
const cores = os.availableParallelism();
const ratios: number[] = [];
const cpuRatios: number[] = [];
const cpuShares: number[] = [];
const sandboxShares: number[] = [];
let calls = 0;
let codes = 0;
for (let i = 0; i < Math.max(1, Math.ceil(RUNS / 2)); i++) {
  const cpuBefore = await sandboxCpuMs();
  const { ms, value } = await timed(() =>
    mcts.invoke({ ...input, gold: "203" }, { context: searchContext, maxConcurrency: concurrency }),
  );
  const cpuAfter = await sandboxCpuMs();
  const { budget, branches } = value as {
    budget: { llmCalls: number; execMs: number };
    branches: { stage: string }[];
  };
  calls = budget.llmCalls;
  codes = branches.filter((b) => b.stage === "code").length;
  const latencyBound = (calls * LATENCY_MS) / concurrency;
  const cpuBound =
    cpuBefore === null || cpuAfter === null ? Number.NaN : (cpuAfter - cpuBefore) / cores;
  ratios.push(ms / latencyBound);
  cpuRatios.push(ms / Math.max(latencyBound, Number.isNaN(cpuBound) ? 0 : cpuBound));
  cpuShares.push(cpuBound / ms);
  // The time branches spent in the sandbox (waiting for a worker included), per slot.
  sandboxShares.push(budget.execMs / concurrency / ms);
}
console.log(
  `mcts, budget 64 calls, concurrency ${concurrency}, width 16 (median of ${ratios.length})`,
);
console.log(`  model calls made             ${calls}`);
console.log(`  wall / latency-bound ideal   ${median(ratios).toFixed(2)}x`);
console.log(
  `  sandbox CPU / cores / wall   ${(median(cpuShares) * 100).toFixed(0)}%   (${cores} cores)`,
);
console.log(`  wall / ideal counting CPU    ${median(cpuRatios).toFixed(2)}x   (goal <= 1.3x)`);
const sandbox = await getSandbox("local");
// An older engine keeps no traces: its count is not there.
const reused = "tracesReused" in sandbox ? String(sandbox.tracesReused) : "none";
console.log(
  `  slot time in the sandbox     ${(median(sandboxShares) * 100).toFixed(0)}%   (${codes} codes run in the last; traces reused in all: ${reused})`,
);
stub.stop();
if (!EVALUATE) {
  await closeSandboxes();
  process.exit(0);
}

const evalStub = await spawnStub(LATENCY_MS, "tablebench");
process.env.OPENAI_BASE_URL = evalStub.url;
const examples = (await loadDataset("tablebench", { path: SAMPLE }))
  .filter((e) => e.category !== "Visualization")
  .slice(0, 16);
async function throughput(graph: "mom" | "table_qa", context: Partial<Configuration>) {
  const outDir = mkdtempSync(path.join(os.tmpdir(), `tableminds-bench-${graph}-`));
  const { ms, value } = await timed(() =>
    runEvaluation({
      graph,
      examples,
      scorer: getScorer("tablebench"),
      outDir,
      concurrency: 4,
      timeoutMs: 120_000,
      retries: 0,
      context: { memory: false, maxReflections: 0, ...context },
    }),
  );
  rmSync(outDir, { recursive: true, force: true });
  const made = value.records.reduce((sum, r) => sum + r.llmCalls, 0);
  return { callsPerSecond: made / (ms / 1000), questionsPerSecond: examples.length / (ms / 1000) };
}
const tableQa = await throughput("table_qa", {});
const eightPlans = await throughput("mom", { plans: 8 });
console.log(`evaluation, ${examples.length} TableBench questions, 4 at a time`);
console.log(
  `  table_qa                     ${tableQa.callsPerSecond.toFixed(1)} calls/s, ${tableQa.questionsPerSecond.toFixed(2)} questions/s`,
);
console.log(
  `  mom, 8 plans                 ${eightPlans.callsPerSecond.toFixed(1)} calls/s, ${eightPlans.questionsPerSecond.toFixed(2)} questions/s`,
);
console.log(
  `  mom / table_qa calls/s       ${(eightPlans.callsPerSecond / tableQa.callsPerSecond).toFixed(2)}x`,
);
evalStub.stop();
await closeSandboxes();
