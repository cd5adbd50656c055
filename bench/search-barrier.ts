/**
 * What a superstep barrier would cost mcts's search (not a test): the same rollouts, of one to
 * three model calls each (a code retry or two), at `latencyMs` a call, 16 at once, until
 * `budget` calls are spent, grown two ways:
 * - as mcts grows them now: a slot that frees starts the next rollout at once;
 * - as `Send` would: LangGraph runs a wave of rollouts as one superstep, a backup node after it,
 *   and the next wave starts when the slowest rollout of the last has ended.
 * Both against the ideal, calls x latency / 16. The rollouts' lengths come from one seed, the
 * same for both; nothing else runs (no tables, no sandbox), so the difference is the barrier's.
 *
 *   npx tsx bench/search-barrier.ts [budget=64] [latencyMs=200] [slots=16]
 */
import { Annotation, END, Send, START, StateGraph } from "@langchain/langgraph";

const BUDGET = Number(process.argv[2] ?? 64);
const LATENCY_MS = Number(process.argv[3] ?? 200);
const SLOTS = Number(process.argv[4] ?? 16);
/** The most calls a rollout can make, reserved from the budget when it starts. */
const WORST = 3;

/** Calls of the n-th rollout: 1 to 3, from a fixed sequence (a linear congruential one). */
function callsOf(n: number): number {
  let x = (n + 1) * 2654435761;
  x = (x ^ (x >>> 13)) >>> 0;
  return 1 + (x % WORST);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rollout(n: number): Promise<number> {
  const calls = callsOf(n);
  for (let i = 0; i < calls; i++) await sleep(LATENCY_MS);
  return calls;
}

/** Slots that start the next rollout the moment one frees, within the budget. */
async function pool(): Promise<{ calls: number; wallMs: number }> {
  const started = performance.now();
  let reserved = 0;
  let spent = 0;
  let next = 0;
  const slot = async (): Promise<void> => {
    while (reserved + WORST <= BUDGET) {
      reserved += WORST;
      const used = await rollout(next++);
      reserved -= WORST - used;
      spent += used;
    }
  };
  await Promise.all(Array.from({ length: SLOTS }, slot));
  return { calls: spent, wallMs: performance.now() - started };
}

const State = Annotation.Root({
  reserved: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  spent: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  /** The first rollout of the wave and how many it has. */
  waveStart: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
  waveSize: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
});

/** Waves of rollouts through `Send`, a backup node after each. */
async function waves(): Promise<{ calls: number; wallMs: number }> {
  const graph = new StateGraph(State)
    .addNode("plan", (state) => {
      const size = Math.min(SLOTS, Math.floor((BUDGET - state.reserved) / WORST));
      return {
        reserved: size * WORST,
        waveStart: state.waveStart + state.waveSize,
        waveSize: size,
      };
    })
    .addNode("rollout", async ({ n }: { n: number }) => {
      const used = await rollout(n);
      return { reserved: used - WORST, spent: used };
    })
    .addNode("backup", () => ({}))
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (state) =>
      state.waveSize > 0
        ? Array.from(
            { length: state.waveSize },
            (_, i) => new Send("rollout", { n: state.waveStart + i }),
          )
        : END,
    )
    .addEdge("rollout", "backup")
    .addConditionalEdges("backup", (state) => (state.reserved + WORST <= BUDGET ? "plan" : END))
    .compile();
  const started = performance.now();
  const final = await graph.invoke({}, { recursionLimit: 10_000, maxConcurrency: SLOTS });
  return { calls: final.spent, wallMs: performance.now() - started };
}

const ideal = (calls: number) => (calls * LATENCY_MS) / SLOTS;
const a = await pool();
const b = await waves();
const c = await pool();
console.log(
  `search with ${SLOTS} slots, a budget of ${BUDGET} calls, ${LATENCY_MS} ms a call, rollouts of 1 to ${WORST} calls`,
);
for (const [name, run] of [
  ["slots start at once (now)", a],
  ["waves through Send", b],
  ["slots start at once, again", c],
] as const) {
  console.log(
    `${name.padEnd(28)} ${String(run.calls).padStart(3)} calls  ${(run.wallMs / 1000).toFixed(2)} s  ${(run.wallMs / ideal(run.calls)).toFixed(2)}x the ideal`,
  );
}
