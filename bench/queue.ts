/**
 * Evaluation on the queue against its latency-bound ideal (not a test): 1, 2 and 4 consumer
 * processes on this machine, each running CONCURRENCY jobs at once (each in a child process
 * of its own), against a stub model that answers every call after 200 ms; the three sizes
 * measured side by side in one run, on one Redis started by scripts/services.sh.
 *
 * The point is the queue's own cost (submitting, handing jobs to consumers and their child
 * processes, results coming back and being written), so each question makes only model calls:
 * the graph of three calls of bench/three-call-graph.ts runs in place of table_qa's tables and
 * sandbox, which on two cores would bound the rate by CPU instead (`npm run bench:eval`
 * measures those). Submitting, the results file and scoring are the real ones.
 *
 * The ideal: consumers x concurrency / (model calls a question makes x 200 ms), the calls
 * counted from the results. A warm-up of a few questions per slot runs first, untimed, so
 * every child process has its modules loaded.
 *
 * With `real` as the fourth argument the consumers run table_qa itself, tables and sandbox
 * included: what a user's evaluation gets on this machine, where the sandbox's CPU, not the
 * queue, bounds the rate (the machine's CPU use is printed beside it).
 *
 *   npx tsx bench/queue.ts [questionsPerSlot=15] [concurrency=2] [latencyMs=200] [three-call|real]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadDataset } from "../evals/datasets/index.js";
import { getScorer } from "../evals/metrics/index.js";
import { QuestionResultSchema } from "../evals/queue/payload.js";
import { queuedAnswerer } from "../evals/queue/submit.js";
import { runEvaluation } from "../evals/runner.js";
import type { EvalExample } from "../evals/types.js";
import { startService } from "../tests/support/services.js";
import { machineCpuMs } from "./machine-cpu.js";
import { spawnStub } from "./spawn-stub.js";

const PER_SLOT = Number(process.argv[2] ?? 15);
const CONCURRENCY = Number(process.argv[3] ?? 2);
const LATENCY_MS = Number(process.argv[4] ?? 200);
const GRAPH = process.argv[5] === "real" ? "real" : "three-call";
const SIZES = [1, 2, 4];
const WARMUP_PER_SLOT = 3;
const TSX = path.resolve(import.meta.dirname, "../node_modules/.bin/tsx");
const CONSUMER = path.resolve(import.meta.dirname, "queue-consumer.ts");
const SAMPLE = path.resolve(
  import.meta.dirname,
  "../tests/fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);

/** `n` consumer processes, once each says it takes jobs. */
async function startConsumers(url: string, n: number): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ChildProcess>((resolve, reject) => {
          const child = spawn(TSX, [CONSUMER, url, String(CONCURRENCY), GRAPH], {
            stdio: ["ignore", "inherit", "pipe"],
          });
          let log = "";
          child.stderr?.on("data", (chunk: Buffer) => {
            log += chunk;
            if (log.includes("consumer: taking jobs")) resolve(child);
            else if (log.includes("\n")) process.stderr.write(chunk);
          });
          child.on("exit", (code) => reject(new Error(`a consumer exited with ${code}: ${log}`)));
        }),
    ),
  );
}

async function stopConsumers(consumers: ChildProcess[]): Promise<void> {
  await Promise.all(
    consumers.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.removeAllListeners("exit");
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
}

interface Row {
  consumers: number;
  slots: number;
  questions: number;
  callsPerQuestion: number;
  /** Mean time a question took inside its child process: the graph's run and its scoring. */
  answerMs: number;
  errors: number;
  wallMs: number;
  busyShare: number;
}

const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-queue-"));
process.env.TABLEMINDS_HOME = home;
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";

const redis = startService("redis");
const url = redis.env.TABLEMINDS_QUEUE_URL ?? "";
process.env.TABLEMINDS_QUEUE_KEY = redis.env.TABLEMINDS_QUEUE_KEY;
const stub = await spawnStub(LATENCY_MS, "tablebench");
process.env.OPENAI_BASE_URL = stub.url;

/** One evaluation of `examples` through the queue, into a directory of its own. */
function evaluate(examples: EvalExample[], name: string) {
  return runEvaluation({
    examples,
    scorer: getScorer("tablebench"),
    graph: "table_qa",
    outDir: path.join(home, name),
    concurrency: 1,
    timeoutMs: 120_000,
    retries: 0,
    context: { memory: false, maxReflections: 0 },
    answerer: queuedAnswerer({ url, kind: "eval", result: QuestionResultSchema }),
  });
}

try {
  const sample = (await loadDataset("tablebench", { path: SAMPLE })).filter(
    (e) => e.category !== "Visualization",
  );
  const copies = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => {
      const e = sample[i % sample.length];
      if (!e) throw new Error("empty sample");
      return { ...e, id: `${e.id}-${tag}${i}` };
    });
  console.log(
    `queue throughput (${GRAPH === "real" ? "table_qa with its tables and sandbox" : "a graph of three model calls"}): ${LATENCY_MS} ms per model call, ${CONCURRENCY} jobs at once per consumer, ${PER_SLOT} questions per slot, ${os.availableParallelism()} cores, load ${os.loadavg()[0]?.toFixed(2)}`,
  );
  const rows: Row[] = [];
  for (const size of SIZES) {
    const slots = size * CONCURRENCY;
    const consumers = await startConsumers(url, size);
    try {
      await evaluate(copies(slots * WARMUP_PER_SLOT, `w${size}-`), `warm-${size}`);
      const before = machineCpuMs();
      const started = performance.now();
      const outcome = await evaluate(copies(slots * PER_SLOT, `q${size}-`), `run-${size}`);
      const wallMs = performance.now() - started;
      const after = machineCpuMs();
      const { records } = outcome;
      rows.push({
        consumers: size,
        slots,
        questions: records.length,
        callsPerQuestion: records.reduce((sum, r) => sum + r.llmCalls, 0) / records.length,
        answerMs: records.reduce((sum, r) => sum + r.latencyMs, 0) / records.length,
        errors: records.filter((r) => r.error).length + outcome.failedToRun.length,
        wallMs,
        busyShare: (after.busy - before.busy) / Math.max(1, after.total - before.total),
      });
    } finally {
      await stopConsumers(consumers);
    }
  }
  console.log(
    "consumers  slots  questions  calls/question  measured q/s  ideal q/s  ratio   machine CPU busy",
  );
  for (const row of rows) {
    const measured = (1000 * row.questions) / row.wallMs;
    const ideal = row.slots / ((row.callsPerQuestion * LATENCY_MS) / 1000);
    console.log(
      [
        String(row.consumers).padEnd(7),
        String(row.slots).padEnd(5),
        String(row.questions).padEnd(9),
        row.callsPerQuestion.toFixed(2).padEnd(14),
        measured.toFixed(2).padEnd(12),
        ideal.toFixed(2).padEnd(9),
        `${((100 * measured) / ideal).toFixed(1)}%`.padEnd(7),
        `${(100 * row.busyShare).toFixed(0)}%`,
      ].join("  "),
    );
    // A slot's time per question: the answer itself, and the queue's hand-offs around it.
    const slotMs = (row.wallMs * row.slots) / row.questions;
    console.log(
      `  per question and slot: ${slotMs.toFixed(0)} ms = ${(row.callsPerQuestion * LATENCY_MS).toFixed(0)} ms of model latency + ${(row.answerMs - row.callsPerQuestion * LATENCY_MS).toFixed(0)} ms of the graph's own work + ${(slotMs - row.answerMs).toFixed(0)} ms outside the answer (queue, hand-off to the child, submitting and collecting)`,
    );
    if (row.errors > 0) console.log(`  (${row.errors} questions ended in an error)`);
  }
  if (GRAPH === "three-call") console.log("goal: ratio >= 85% at each size");
  else
    console.log("(the ideal counts model latency only; the sandbox's CPU bounds the real graph)");
} finally {
  await stub.stop();
  redis.stop();
  rmSync(home, { recursive: true, force: true });
}
