import { randomUUID } from "node:crypto";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../graphs/persistence-postgres.js";
import type { RunnableGraph } from "../../graphs/registry.js";
import { FencedSaver } from "../../server/fenced-saver.js";
import { type Lease, LeaseLostError, Leases } from "../../server/leases.js";
import { LEDGER_MIGRATIONS, Ledger } from "../../server/ledger.js";
import { type RecoveryOptions, recoverRun, startRecovery } from "../../server/recovery.js";
import { openPool, type Pool } from "../../storage/postgres.js";
import { type Service, startService } from "../support/services.js";

/*
 * Exactly-once execution of a thread's run across replicas, on a real PostgreSQL: two replicas
 * in this process (each its own pool, leases, fenced checkpointer and ledger), a four-step
 * graph whose steps count themselves as model calls would. PostgreSQL restarted at every step
 * of a run leaves each step run once and the checkpoints as without restarts, while the other
 * replica looks for orphans all along; a replica whose lease was taken over is refused at its
 * next checkpoint and its end is not recorded.
 */

const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});
const STEPS = ["s1", "s2", "s3", "s4"] as const;

interface Replica {
  name: string;
  pool: Pool;
  leases: Leases;
  ledger: Ledger;
  graph: RunnableGraph;
}

describe("leases and fenced checkpoints", () => {
  let postgres: Service;
  let url: string;
  /** Every step run, as `<replica>:<step>`. */
  const ran: string[] = [];
  /** Called at the start of every step (the fault to inject there). */
  let onStep: (replica: string, step: string) => Promise<void> = async () => {};
  const replicas: Replica[] = [];

  function replica(name: string, ttlMs: number, renewEveryMs?: number): Replica {
    const pool = openPool(url, 10);
    const leases = new Leases(pool, { owner: name, ttlMs, renewEveryMs });
    const step = (id: string) => async () => {
      ran.push(`${name}:${id}`);
      await onStep(name, id);
      return { steps: [id] };
    };
    const wired = new StateGraph(State)
      .addNode("s1", step("s1"))
      .addNode("s2", step("s2"))
      .addNode("s3", step("s3"))
      .addNode("s4", step("s4"))
      .addEdge(START, "s1")
      .addEdge("s1", "s2")
      .addEdge("s2", "s3")
      .addEdge("s3", "s4")
      .addEdge("s4", END);
    const graph = wired
      .compile({ checkpointer: new FencedSaver(pool, leases) })
      .withConfig({ durability: "sync" }) as unknown as RunnableGraph;
    const made = { name, pool, leases, ledger: new Ledger(pool), graph };
    replicas.push(made);
    return made;
  }

  /** A run as `serve` makes one: lease, ledger row, the graph to its end, the end recorded. */
  async function run(on: Replica, threadId: string, lease: Lease) {
    const runId = randomUUID();
    await on.ledger.startRun({
      runId,
      threadId,
      assistantId: "four",
      kwargs: { context: null, config: null, input: { steps: [] }, command: null, base: null },
      replica: on.name,
      fence: lease.fence,
    });
    let failure: unknown;
    try {
      for await (const _ of await on.graph.stream(
        { steps: [] },
        { configurable: { thread_id: threadId }, streamMode: "values" },
      ));
    } catch (error) {
      failure = error;
    }
    const recorded = failure
      ? false
      : await on.ledger.endRun(runId, lease.fence, "success").catch(() => false);
    await lease.release();
    return { runId, failure, recorded };
  }

  /** A replica's recovery of orphans, as `serve` runs it. */
  function recoveryBy(on: Replica, everyMs: number): RecoveryOptions {
    return {
      leases: on.leases,
      ledger: on.ledger,
      graphs: { four: on.graph },
      replica: on.name,
      everyMs,
      inHand: () => false,
    };
  }

  async function checkpoints(threadId: string): Promise<number> {
    const pool = openPool(url, 1);
    try {
      const rows = await pool.query("SELECT count(*) AS n FROM checkpoints WHERE thread_id = $1", [
        threadId,
      ]);
      return Number(rows.rows[0].n);
    } finally {
      await pool.end();
    }
  }

  async function newThread(on: Replica): Promise<string> {
    const threadId = randomUUID();
    await on.ledger.setThread(threadId, "put", { graph_id: "four" });
    return threadId;
  }

  beforeAll(async () => {
    postgres = startService("postgres");
    url = postgres.env.TABLEMINDS_DATABASE_URL ?? "";
    await migrateDatabase(url, [LEDGER_MIGRATIONS]);
  }, 90_000);

  afterAll(async () => {
    for (const r of replicas) {
      await r.leases.close();
      await r.pool.end();
    }
    postgres?.stop();
  });

  it("lets one holder claim a thread at a time, each claim with a higher token", async () => {
    const a = replica("claim-a", 10_000);
    const b = replica("claim-b", 10_000);
    const threadId = randomUUID();
    const first = await a.leases.claim(threadId);
    expect(first?.fence).toBe(1);
    expect(await b.leases.claim(threadId)).toBeNull();
    expect(await a.leases.claim(threadId)).toBeNull();
    await first?.release();
    const second = await b.leases.claim(threadId);
    expect(second?.fence).toBe(2);
    expect(a.leases.fenceOf(threadId)).toBeUndefined();
    expect(b.leases.fenceOf(threadId)).toBe(2);
    await second?.release();
  });

  it("runs each step once with PostgreSQL restarted at every step, and nobody else takes the run", async () => {
    const a = replica("steady", 5_000, 300);
    const b = replica("watcher", 5_000, 300);
    // The checkpoints of the same run with no fault, to compare with.
    const calm = await newThread(a);
    const calmLease = await a.leases.claim(calm);
    if (!calmLease) throw new Error("no lease");
    expect((await run(a, calm, calmLease)).recorded).toBe(true);
    const calmCheckpoints = await checkpoints(calm);
    expect(calmCheckpoints).toBeGreaterThanOrEqual(STEPS.length);

    const threadId = await newThread(a);
    const lease = await a.leases.claim(threadId);
    if (!lease) throw new Error("no lease");
    const watching = startRecovery(recoveryBy(b, 100));
    const restarts: Promise<void>[] = [];
    ran.length = 0;
    onStep = async (name) => {
      if (name !== "steady") return;
      // One restart at a time; each drops every connection while the step's checkpoint (and
      // the lease's renewal) is being written.
      await restarts.at(-1);
      restarts.push(postgres.restart());
      await new Promise((resolve) => setTimeout(resolve, 30));
    };
    try {
      const outcome = await run(a, threadId, lease);
      await Promise.all(restarts);
      expect(outcome.failure).toBeUndefined();
      expect(outcome.recorded).toBe(true);
      // Long enough for the watcher's sweeps to see the finished run.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(restarts).toHaveLength(STEPS.length);
      expect(ran).toEqual(STEPS.map((step) => `steady:${step}`));
      expect(await checkpoints(threadId)).toBe(calmCheckpoints);
      expect(await a.ledger.run(outcome.runId)).toMatchObject({
        status: "success",
        replica: "steady",
        fence: lease.fence,
      });
    } finally {
      onStep = async () => {};
      await watching.stop();
    }
  }, 120_000);

  it("outlives a six-second outage of PostgreSQL in the middle of a run", async () => {
    const a = replica("outlasting", 15_000, 500);
    const threadId = await newThread(a);
    const lease = await a.leases.claim(threadId);
    if (!lease) throw new Error("no lease");
    let outage: Promise<void> | undefined;
    ran.length = 0;
    onStep = async (name, step) => {
      // Down from s2 on: s2's checkpoint, the lease's renewals and s3's start wait for it.
      if (name === "outlasting" && step === "s2") outage = postgres.outage(6);
      if (outage) await new Promise((resolve) => setTimeout(resolve, 200));
    };
    try {
      const outcome = await run(a, threadId, lease);
      await outage;
      expect(outcome.failure).toBeUndefined();
      expect(outcome.recorded).toBe(true);
      expect(ran).toEqual(STEPS.map((step) => `outlasting:${step}`));
      expect(await a.ledger.run(outcome.runId)).toMatchObject({ status: "success" });
    } finally {
      onStep = async () => {};
      await outage;
    }
  }, 90_000);

  it("refuses the checkpoints and the end of a replica whose lease was taken over", async () => {
    const stale = replica("stale", 300, 100);
    const taker = replica("taker", 10_000);
    const threadId = await newThread(stale);
    const lease = await stale.leases.claim(threadId);
    if (!lease) throw new Error("no lease");
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let held = false;
    ran.length = 0;
    onStep = async (name, step) => {
      // The stale replica stalls in s2 (a long pause, a partition) past its lease.
      if (name === "stale" && step === "s2" && !held) {
        held = true;
        await stale.leases.close();
        await gate;
      }
    };
    try {
      const running = run(stale, threadId, lease);
      while (!held) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 400));
      const [orphan] = (await taker.ledger.running()).filter((r) => r.thread_id === threadId);
      if (!orphan) throw new Error("the stale run is not in the ledger");
      expect(await recoverRun(orphan, recoveryBy(taker, 0))).toBe(true);
      open();
      const outcome = await running;
      expect(outcome.failure).toBeInstanceOf(LeaseLostError);
      expect(outcome.recorded).toBe(false);
      expect(await taker.ledger.run(orphan.run_id)).toMatchObject({
        status: "success",
        replica: "taker",
        fence: lease.fence + 1,
      });
      // s1's checkpoint was the stale replica's; s2 ran on both, and only the taker's counts.
      expect(ran).toEqual(["stale:s1", "stale:s2", "taker:s2", "taker:s3", "taker:s4"]);
      const state = await taker.graph.getState({ configurable: { thread_id: threadId } });
      expect((state.values as { steps: string[] }).steps).toEqual([...STEPS]);
    } finally {
      onStep = async () => {};
      open();
    }
  }, 60_000);
});
