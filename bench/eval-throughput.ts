/**
 * Evaluation runner throughput against its latency-bound ideal (not a test): TableBench
 * questions through table_qa with a stub model answering every call after 200 ms, 16 at a
 * time. The ideal is every model call's latency spread perfectly over the 16 slots; the
 * goal is a measured rate of at least 80% of it.
 *
 *   npx tsx bench/eval-throughput.ts [questions=64] [concurrency=16] [latencyMs=200]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadDataset } from "../evals/datasets/index.js";
import { getScorer } from "../evals/metrics/index.js";
import { runEvaluation } from "../evals/runner.js";
import { closeSandboxes, getSandbox } from "../tools/sandbox/index.js";
import type { LocalSandbox } from "../tools/sandbox/local.js";
import { spawnStub } from "./spawn-stub.js";

const QUESTIONS = Number(process.argv[2] ?? 64);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const LATENCY_MS = Number(process.argv[4] ?? 200);
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

const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-eval-"));
process.env.TABLEMINDS_HOME = home;
const stub = await spawnStub(LATENCY_MS, "tablebench");
process.env.OPENAI_BASE_URL = stub.url;
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";

try {
  const sample = (await loadDataset("tablebench", { path: SAMPLE })).filter(
    (e) => e.category !== "Visualization",
  );
  const examples = Array.from({ length: QUESTIONS }, (_, i) => {
    const e = sample[i % sample.length];
    if (!e) throw new Error("empty sample");
    return { ...e, id: `${e.id}-${i}` };
  });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const outcome = await runEvaluation({
    examples,
    scorer: getScorer("tablebench"),
    graph: "table_qa",
    outDir: path.join(home, "run"),
    concurrency: CONCURRENCY,
    timeoutMs: 120_000,
    retries: 0,
    context: { memory: false, maxReflections: 0 },
  });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const pool = (await getSandbox("local")) as LocalSandbox;
  const pythonMs = pool.workerPids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  await closeSandboxes();
  const stubMs = await stub.stop();
  const calls = outcome.records.reduce((sum, r) => sum + r.llmCalls, 0);
  const chainMs = Math.max(...outcome.records.map((r) => r.llmCalls)) * LATENCY_MS;
  const idealMs = Math.max((calls * LATENCY_MS) / CONCURRENCY, chainMs);
  const errors = outcome.records.filter((r) => r.error).length;
  console.log(
    `eval runner throughput: ${QUESTIONS} questions, concurrency ${CONCURRENCY}, ${LATENCY_MS} ms per model call`,
  );
  console.log(
    `  model calls: ${calls} (${(calls / QUESTIONS).toFixed(2)} per question), errors: ${errors}`,
  );
  console.log(
    `  measured: ${(wallMs / 1000).toFixed(2)} s = ${((QUESTIONS * 60_000) / wallMs).toFixed(1)} questions/min`,
  );
  console.log(
    `  latency-bound ideal: ${(idealMs / 1000).toFixed(2)} s = ${((QUESTIONS * 60_000) / idealMs).toFixed(1)} questions/min`,
  );
  console.log(
    `  ratio (ideal / measured): ${((100 * idealMs) / wallMs).toFixed(1)}% (goal >= 80%)`,
  );
  const per = (ms: number) => `${(ms / QUESTIONS).toFixed(1)} ms`;
  console.log(
    `  CPU per question: runtime (Node) ${per((cpu.user + cpu.system) / 1000)}, sandbox (Python) ${per(pythonMs)}, stub model ${stubMs === null ? "?" : per(stubMs)}; ${os.cpus().length} cores`,
  );
} finally {
  await closeSandboxes();
  await stub.stop();
  rmSync(home, { recursive: true, force: true });
}
