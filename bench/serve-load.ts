/**
 * `serve` under load, at the scale it was reported to fail at (not a test): two replicas on
 * one PostgreSQL (scripts/services.sh), each with its pool of `--pool` connections, and more
 * concurrent clients than both admit, each asking the medals question on a thread of its own
 * against a stub model that takes `latencyMs` a call. A client told 503 waits as Retry-After
 * says (a tenth of it, with jitter) and asks again. Prints the answers, the statuses seen, the
 * model calls against what the runs need, the runs as the database recorded them, the leases
 * left held, and the wall time against the latency-bound ideal.
 *
 *   npx tsx bench/serve-load.ts [clients=96] [pool=40] [latencyMs=100]
 */
import os from "node:os";
import pg from "pg";
import { runsFor } from "../server/replica.js";
import { EXAMPLES, MEDALS_INPUT, stubEnv } from "../tests/support/env.js";
import { startReplica } from "../tests/support/replica.js";
import { medalsTeam } from "../tests/support/scripts.js";
import { startService } from "../tests/support/services.js";
import { startStubOpenAI } from "../tests/support/stub-openai.js";

const CLIENTS = Number(process.argv[2] ?? 96);
const POOL = Number(process.argv[3] ?? 40);
const LATENCY_MS = Number(process.argv[4] ?? 100);

const postgres = startService("postgres");
const team = medalsTeam();
const stub = await startStubOpenAI({ respond: (req) => team(req), latencyMs: LATENCY_MS });
const env = { ...stubEnv(stub.url), ...postgres.env, TABLEMINDS_TABLE_ROOTS: EXAMPLES };
const flags = ["--pool", String(POOL), "--recover-every", "5"];
const replicas = await Promise.all([startReplica(env, flags), startReplica(env, flags)]);

async function ask(url: string): Promise<{ answer?: string; statuses: number[] }> {
  const statuses: number[] = [];
  const made = await fetch(`${url}/threads`, { method: "POST", body: "{}" });
  const thread = (await made.json()) as { thread_id: string };
  for (;;) {
    const response = await fetch(`${url}/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "table_qa", input: MEDALS_INPUT }),
    });
    statuses.push(response.status);
    if (response.status !== 503) {
      const text = await response.text();
      try {
        return {
          answer: (JSON.parse(text) as { answer?: { final?: string } }).answer?.final,
          statuses,
        };
      } catch {
        return { statuses };
      }
    }
    await response.body?.cancel();
    const wait = Number(response.headers.get("retry-after") ?? 1) * 100;
    await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
  }
}

try {
  const [first] = replicas;
  if (!first) throw new Error("no replica");
  await ask(first.url);
  const callsPerRun = stub.requests.length;
  const before = stub.requests.length;
  const load = os.loadavg()[0] ?? 0;
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) => ask(replicas[i % replicas.length]?.url ?? "")),
  );
  const wallMs = performance.now() - started;
  const statuses = new Map<number, number>();
  for (const status of outcomes.flatMap((o) => o.statuses)) {
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const db = new pg.Client({ connectionString: postgres.env.TABLEMINDS_DATABASE_URL });
  await db.connect();
  const runs = await db.query("SELECT status, count(*) AS n FROM tableminds_runs GROUP BY status");
  const held = await db.query(
    "SELECT count(*) AS n FROM tableminds_leases WHERE expires_at > now()",
  );
  await db.end();
  const admitted = 2 * runsFor(POOL);
  const ideal = (Math.ceil(CLIENTS / admitted) * callsPerRun * LATENCY_MS) / 1000;
  console.log(
    `serve under load: ${CLIENTS} clients, 2 replicas with --pool ${POOL} (${runsFor(POOL)} runs each at once), ${LATENCY_MS} ms a model call; load ${load.toFixed(2)} on ${os.availableParallelism()} cores`,
  );
  console.log(
    `right answers        ${outcomes.filter((o) => o.answer === "203").length} of ${CLIENTS}`,
  );
  console.log(`statuses seen        ${[...statuses].map(([s, n]) => `${s} x${n}`).join(", ")}`);
  console.log(
    `model calls          ${stub.requests.length - before} (the runs need ${CLIENTS * callsPerRun})`,
  );
  console.log(
    `runs recorded        ${runs.rows.map((r) => `${r.status} ${r.n}`).join(", ")} (with the warm-up run)`,
  );
  console.log(`leases still held    ${held.rows[0].n}`);
  console.log(
    `wall                 ${(wallMs / 1000).toFixed(1)} s; model latency alone would take ${ideal.toFixed(1)} s (the rest is the runs' CPU, sandbox included, on this machine)`,
  );
  console.log(`load after           ${(os.loadavg()[0] ?? 0).toFixed(2)}`);
} finally {
  await Promise.all(replicas.map((r) => r.stop()));
  await stub.close();
  postgres.stop();
}
