/**
 * Orchestration overhead of one table_qa run: wall time minus the time spent in the
 * model and in the sandbox, against a bare LangGraph graph with as many no-op steps,
 * measured alternately in one process; then its share of wall time when the model
 * takes 200 ms a call. Prints ratios; goals: <= 2x the bare floor, <= 2% at 200 ms.
 * The stub model server runs in its own process, as a real one would.
 *
 *   npx tsx bench/overhead.ts [runs=30]
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TableQAStateValue } from "../blackboard/state.js";
import { graph } from "../graphs/table_qa/graph.js";
import { closeSandboxes } from "../sandbox/index.js";
import { MEDALS_QUESTION } from "../tests/support/scripts.js";
import { spawnStub } from "./spawn-stub.js";
import { eightSteps } from "./support/eight-steps.js";

const RUNS = Number(process.argv[2] ?? 30);
// ingest, recall, planner, coder, executor, answerer, checker, archiver
const STEPS = 8;
const TABLE = path.resolve(import.meta.dirname, "../examples/olympics_2020_medals.csv");

process.env.TABLEMINDS_HOME = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-"));
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";
process.env.LANGSMITH_TRACING = "false";

const bareGraph = eightSteps().compile();

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function tableQaOverhead(): Promise<{ wall: number; overhead: number }> {
  const started = performance.now();
  const state = (await graph.invoke({
    question: MEDALS_QUESTION,
    sources: [{ path: TABLE }],
  })) as TableQAStateValue;
  const wall = performance.now() - started;
  if (state.answer?.final !== "203") throw new Error(`unexpected answer ${state.answer?.final}`);
  return { wall, overhead: wall - state.budget.llmMs - state.budget.execMs };
}

async function bareWall(): Promise<number> {
  const started = performance.now();
  await bareGraph.invoke({ n: 0 });
  return performance.now() - started;
}

async function measure(latencyMs: number, runs: number) {
  const stub = await spawnStub(latencyMs);
  process.env.OPENAI_BASE_URL = stub.url;
  const overheads: number[] = [];
  const walls: number[] = [];
  const bares: number[] = [];
  await tableQaOverhead(); // warm: sandbox started, modules loaded
  await bareWall();
  for (let i = 0; i < runs; i++) {
    const run = await tableQaOverhead();
    overheads.push(run.overhead);
    walls.push(run.wall);
    bares.push(await bareWall());
  }
  stub.stop();
  return { overhead: median(overheads), wall: median(walls), bare: median(bares) };
}

const zero = await measure(0, RUNS);
console.log(`table_qa, zero-latency stub, ${RUNS} runs (medians)`);
console.log(`  wall                         ${zero.wall.toFixed(2)} ms`);
console.log(
  `  orchestration overhead       ${zero.overhead.toFixed(2)} ms (${(zero.overhead / STEPS).toFixed(2)} ms/step)`,
);
console.log(
  `  bare ${STEPS}-step graph floor      ${zero.bare.toFixed(2)} ms (${(zero.bare / STEPS).toFixed(2)} ms/step)`,
);
console.log(
  `  overhead / floor             ${(zero.overhead / zero.bare).toFixed(2)}x   (goal <= 2x)`,
);

const slow = await measure(200, Math.min(RUNS, 8));
console.log(`table_qa, 200 ms model latency, ${Math.min(RUNS, 8)} runs (medians)`);
console.log(`  wall                         ${slow.wall.toFixed(1)} ms`);
console.log(`  orchestration overhead       ${slow.overhead.toFixed(2)} ms`);
console.log(
  `  overhead share of wall       ${((100 * slow.overhead) / slow.wall).toFixed(2)}%   (goal <= 2%)`,
);
await closeSandboxes();
