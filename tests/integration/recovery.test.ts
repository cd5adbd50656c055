import { randomUUID } from "node:crypto";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../graphs/persistence-postgres.js";
import type { RunnableGraph } from "../../graphs/registry.js";
import { FencedSaver } from "../../server/fenced-saver.js";
import { Leases } from "../../server/leases.js";
import { LEDGER_MIGRATIONS, Ledger } from "../../server/ledger.js";
import { type RecoveryOptions, recoverRun, startRecovery } from "../../server/recovery.js";
import { openPool, type Pool } from "../../storage/postgres.js";
import { type Service, startService } from "../support/services.js";

/*
 * The recovery of runs a dead replica left, on a real PostgreSQL, with a two-step graph: a run
 * whose input never reached a checkpoint starts again as asked; one that has checkpoints goes
 * on from the last (the finished step is not run again); one whose thread's lease lasts is left
 * alone; one that fails on the way is an error, never a success.
 */

const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

describe("recovering a dead replica's runs", () => {
  let postgres: Service;
  let pool: Pool;
  let ledger: Ledger;
  let survivor: Leases;
  let graph: RunnableGraph;
  const ran: string[] = [];
  let failB = false;
  /** While set, `a` waits this long, counting how many run at once. */
  let slowA = 0;
  let inA = 0;
  let mostInA = 0;

  beforeAll(async () => {
    postgres = startService("postgres");
    const url = postgres.env.TABLEMINDS_DATABASE_URL ?? "";
    await migrateDatabase(url, [LEDGER_MIGRATIONS]);
    pool = openPool(url);
    ledger = new Ledger(pool);
    survivor = new Leases(pool, { owner: "survivor", ttlMs: 10_000 });
    const compiled = new StateGraph(State)
      .addNode("a", async () => {
        ran.push("a");
        inA += 1;
        mostInA = Math.max(mostInA, inA);
        await new Promise((resolve) => setTimeout(resolve, slowA));
        inA -= 1;
        return { steps: ["a"] };
      })
      .addNode("b", () => {
        ran.push("b");
        if (failB) throw new Error("b broke");
        return { steps: ["b"] };
      })
      .addEdge(START, "a")
      .addEdge("a", "b")
      .addEdge("b", END)
      .compile({ checkpointer: new FencedSaver(pool, survivor) });
    graph = compiled.withConfig({ durability: "sync" }) as unknown as RunnableGraph;
  }, 90_000);

  afterAll(async () => {
    await survivor?.close();
    await pool?.end();
    postgres?.stop();
  });

  const options = (): RecoveryOptions => ({
    leases: survivor,
    ledger,
    graphs: { two: graph },
    replica: "survivor",
    everyMs: 0,
    inHand: () => false,
  });

  async function recorded(runId: string) {
    const run = await ledger.run(runId);
    if (!run) throw new Error(`run ${runId} is not in the ledger`);
    return run;
  }

  /** A run started under a lease its replica stopped renewing (it died), expired since. */
  async function orphan(input: unknown, base: string | null = null) {
    const threadId = randomUUID();
    const runId = randomUUID();
    await ledger.setThread(threadId, "put", { graph_id: "two" });
    const dead = new Leases(pool, { owner: "dead", ttlMs: 150 });
    const lease = await dead.claim(threadId, runId);
    await dead.close();
    if (!lease) throw new Error("no lease on a fresh thread");
    await ledger.startRun({
      runId,
      threadId,
      assistantId: "two",
      kwargs: { context: null, config: null, input, command: null, base },
      replica: "dead",
      fence: lease.fence,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { threadId, runId, fence: lease.fence };
  }

  it("starts a run whose input never reached a checkpoint again, as it was asked", async () => {
    const { threadId, runId } = await orphan({ steps: ["in"] });
    ran.length = 0;
    expect(await recoverRun(await recorded(runId), options())).toBe(true);
    const run = await ledger.run(runId);
    expect(run).toMatchObject({ status: "success", replica: "survivor" });
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    expect((state.values as { steps: string[] }).steps).toEqual(["in", "a", "b"]);
    expect(ran).toEqual(["a", "b"]);
  });

  it("goes on from the last checkpoint, without running the finished step again", async () => {
    const { threadId, runId } = await orphan({ steps: ["in"] });
    // The dead replica got as far as `a`: its checkpoint is saved, `b` is next.
    for await (const _ of await graph.stream(
      { steps: ["in"] },
      { configurable: { thread_id: threadId }, interruptAfter: ["a"] },
    ));
    ran.length = 0;
    expect(await recoverRun(await recorded(runId), options())).toBe(true);
    expect(await ledger.run(runId)).toMatchObject({ status: "success" });
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    expect((state.values as { steps: string[] }).steps).toEqual(["in", "a", "b"]);
    expect(ran).toEqual(["b"]);
  });

  it("leaves a run alone while its thread's lease lasts, and one already ended", async () => {
    const { threadId, runId } = await orphan({ steps: ["in"] });
    const other = new Leases(pool, { owner: "other", ttlMs: 10_000 });
    const lease = await other.claim(threadId, runId);
    expect(lease?.fence).toBe(2);
    expect(await recoverRun(await recorded(runId), options())).toBe(false);
    await ledger.adoptRun(runId, "other", lease?.fence ?? 0);
    await lease?.release();
    await other.close();
    expect(await ledger.endRun(runId, lease?.fence ?? 0, "success")).toBe(true);
    expect(await recoverRun(await recorded(runId), options())).toBe(false);
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    expect(state.next).toEqual([]);
    expect(Object.keys(state.values as object)).toEqual([]);
  });

  it("takes up several orphans at once", async () => {
    const orphans = await Promise.all([1, 2, 3].map(() => orphan({ steps: ["in"] })));
    slowA = 300;
    mostInA = 0;
    const sweeping = startRecovery({ ...options(), everyMs: 50, parallel: 4 });
    try {
      for (let i = 0; i < 100; i++) {
        const runs = await Promise.all(orphans.map((o) => recorded(o.runId)));
        if (runs.every((run) => run.status === "success")) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await sweeping.stop();
      slowA = 0;
    }
    const runs = await Promise.all(orphans.map((o) => recorded(o.runId)));
    expect(runs.map((run) => run.status)).toEqual(["success", "success", "success"]);
    expect(mostInA).toBe(3);
  });

  it("marks a run that fails on the way an error, with the reason", async () => {
    const { runId } = await orphan({ steps: ["in"] });
    failB = true;
    try {
      expect(await recoverRun(await recorded(runId), options())).toBe(true);
    } finally {
      failB = false;
    }
    expect(await ledger.run(runId)).toMatchObject({ status: "error", error: "b broke" });
  });
});
