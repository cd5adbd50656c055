/**
 * What exactly-once costs a served run (not a test): the same eight-step graph run to its end on
 * one PostgreSQL (scripts/services.sh) with LangGraph's own checkpointer and with `serve`'s
 * (a lease claimed and released around each run, every checkpoint committed under the lease's
 * token, transient failures retried), alternating run by run so that both see the same machine.
 * Prints the time per run and per checkpoint of each, their ratio, and the machine's load.
 *
 *   npx tsx bench/fencing.ts [runs=60]
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { migrateDatabase } from "../graphs/persistence-postgres.js";
import { FencedSaver } from "../server/fenced-saver.js";
import { Leases } from "../server/leases.js";
import { LEDGER_MIGRATIONS } from "../server/ledger.js";
import { openPool } from "../storage/postgres.js";
import { startService } from "../tests/support/services.js";
import { eightSteps } from "./support/bare-steps.js";

const RUNS = Number(process.argv[2] ?? 60);
const STEPS = 8;

function graphWith(checkpointer: BaseCheckpointSaver) {
  return eightSteps().compile({ checkpointer }).withConfig({ durability: "sync" });
}

async function main(): Promise<void> {
  const postgres = startService("postgres");
  const url = postgres.env.TABLEMINDS_DATABASE_URL ?? "";
  try {
    await migrateDatabase(url, [LEDGER_MIGRATIONS]);
    const pool = openPool(url, 10);
    const leases = new Leases(pool, { owner: "bench", ttlMs: 30_000 });
    const plain = graphWith(new PostgresSaver(pool));
    const fenced = graphWith(new FencedSaver(pool, leases));
    const times = { plain: [] as number[], fenced: [] as number[] };
    const once = async (kind: "plain" | "fenced") => {
      const threadId = randomUUID();
      const started = performance.now();
      if (kind === "fenced") {
        const lease = await leases.claim(threadId);
        if (!lease) throw new Error("no lease on a fresh thread");
        await fenced.invoke({ n: 0 }, { configurable: { thread_id: threadId } });
        await lease.release();
      } else {
        await plain.invoke({ n: 0 }, { configurable: { thread_id: threadId } });
      }
      times[kind].push(performance.now() - started);
    };
    // Warm-up: connections open, statements planned.
    for (let i = 0; i < 5; i++) await Promise.all([once("plain"), once("fenced")]);
    times.plain.length = 0;
    times.fenced.length = 0;
    const load = os.loadavg()[0] ?? 0;
    for (let i = 0; i < RUNS; i++) {
      if (i % 2 === 0) {
        await once("plain");
        await once("fenced");
      } else {
        await once("fenced");
        await once("plain");
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const checkpoints = STEPS + 2;
    const [p, f] = [median(times.plain), median(times.fenced)];
    console.log(
      `exactly-once on PostgreSQL: ${RUNS} runs of ${STEPS} steps each (${checkpoints} checkpoints), alternating; load ${load.toFixed(2)} on ${os.availableParallelism()} cores`,
    );
    console.log("checkpointer                 run p50     per checkpoint");
    console.log(
      `LangGraph's PostgresSaver    ${p.toFixed(1).padStart(7)} ms  ${(p / checkpoints).toFixed(2).padStart(7)} ms`,
    );
    console.log(
      `serve's (lease + fence)      ${f.toFixed(1).padStart(7)} ms  ${(f / checkpoints).toFixed(2).padStart(7)} ms`,
    );
    console.log(`ratio                        ${(f / p).toFixed(2)}x`);
    console.log(`load after: ${(os.loadavg()[0] ?? 0).toFixed(2)}`);
    await leases.close();
    await pool.end();
  } finally {
    postgres.stop();
  }
}

await main();
