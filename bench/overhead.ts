/**
 * Orchestration overhead of one table_qa run: wall time minus the time spent in the
 * model and in the sandbox, against a bare LangGraph graph with as many no-op steps as the run
 * took (counted from its stream, subgraph steps included), measured alternately in one process;
 * then its share of wall time when the model takes 200 ms a call. Prints ratios; goals: <= 2x
 * the bare floor, <= 2% at 200 ms. Beside it, the floor of the older figures: eight steps.
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
import { bareSteps, eightSteps } from "./support/bare-steps.js";

const RUNS = Number(process.argv[2] ?? 30);
const TABLE = path.resolve(import.meta.dirname, "../examples/olympics_2020_medals.csv");

process.env.TABLEMINDS_HOME = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-"));
process.env.OPENAI_API_KEY = "bench";
process.env.TABLEMINDS_MODEL = "stub-model";
process.env.LANGSMITH_TRACING = "false";

const input = () => ({ question: MEDALS_QUESTION, sources: [{ path: TABLE }] });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function tableQaOverhead(): Promise<{ wall: number; overhead: number }> {
  const started = performance.now();
  const state = (await graph.invoke(input())) as TableQAStateValue;
  const wall = performance.now() - started;
  if (state.answer?.final !== "203") throw new Error(`unexpected answer ${state.answer?.final}`);
  return { wall, overhead: wall - state.budget.llmMs - state.budget.execMs };
}

/** The steps a run takes: each node's update in the stream, the subgraph's own included. */
async function stepsTaken(): Promise<number> {
  let steps = 0;
  for await (const _ of await graph.stream(input(), { streamMode: "updates", subgraphs: true })) {
    steps += 1;
  }
  return steps;
}

async function bareWall(bare: { invoke(input: { n: number }): Promise<unknown> }): Promise<number> {
  const started = performance.now();
  await bare.invoke({ n: 0 });
  return performance.now() - started;
}

async function measure(latencyMs: number, runs: number) {
  const stub = await spawnStub(latencyMs);
  process.env.OPENAI_BASE_URL = stub.url;
  const overheads: number[] = [];
  const walls: number[] = [];
  const bares: number[] = [];
  const eights: number[] = [];
  await tableQaOverhead(); // warm: sandbox started, modules loaded
  const steps = await stepsTaken();
  const bare = bareSteps(steps).compile();
  const eight = eightSteps().compile();
  await bareWall(bare);
  await bareWall(eight);
  for (let i = 0; i < runs; i++) {
    const run = await tableQaOverhead();
    overheads.push(run.overhead);
    walls.push(run.wall);
    bares.push(await bareWall(bare));
    eights.push(await bareWall(eight));
  }
  stub.stop();
  return {
    steps,
    overhead: median(overheads),
    wall: median(walls),
    bare: median(bares),
    eight: median(eights),
  };
}

const zero = await measure(0, RUNS);
console.log(`table_qa, zero-latency stub, ${RUNS} runs (medians)`);
console.log(`  wall                         ${zero.wall.toFixed(2)} ms`);
console.log(`  steps a run took             ${zero.steps}`);
console.log(
  `  orchestration overhead       ${zero.overhead.toFixed(2)} ms (${(zero.overhead / zero.steps).toFixed(2)} ms/step)`,
);
console.log(
  `  bare graph, as many steps    ${zero.bare.toFixed(2)} ms (${(zero.bare / zero.steps).toFixed(2)} ms/step)`,
);
console.log(
  `  overhead / floor             ${(zero.overhead / zero.bare).toFixed(2)}x   (goal <= 2x)`,
);
console.log(
  `  overhead / bare 8 steps      ${(zero.overhead / zero.eight).toFixed(2)}x   (the older figures' floor)`,
);

const slow = await measure(200, Math.min(RUNS, 8));
console.log(`table_qa, 200 ms model latency, ${Math.min(RUNS, 8)} runs (medians)`);
console.log(`  wall                         ${slow.wall.toFixed(1)} ms`);
console.log(`  orchestration overhead       ${slow.overhead.toFixed(2)} ms`);
console.log(
  `  overhead share of wall       ${((100 * slow.overhead) / slow.wall).toFixed(2)}%   (goal <= 2%)`,
);
await closeSandboxes();
