import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsFor } from "../../server/replica.js";
import { EXAMPLES, MEDALS_INPUT, stubEnv } from "../support/env.js";
import { type ReplicaProcess, startReplica } from "../support/replica.js";
import { medalsTeam } from "../support/scripts.js";
import { type Service, startService } from "../support/services.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * A `serve` replica under twice the load its database pool carries, on a real PostgreSQL, with
 * a stub model that takes 150 ms a call: the runs beyond what it admits are answered 503 with
 * Retry-After (never 500), a client that retries as told gets its answer, and every run is
 * executed once: as many model calls as the runs need, each run ended once, no lease left held.
 * SIGTERM then stops the replica within its drain bound.
 */

const POOL = 6;
const CLIENTS = 2 * POOL;

interface Outcome {
  answer: string | undefined;
  refusals: number;
  statuses: number[];
}

describe("tableminds serve at twice its pool", () => {
  let postgres: Service;
  let stub: StubServer;
  let replica: ReplicaProcess;

  beforeAll(async () => {
    postgres = startService("postgres");
    const team = medalsTeam();
    stub = await startStubOpenAI({ respond: (req) => team(req), latencyMs: 150 });
    replica = await startReplica(
      { ...stubEnv(stub.url), ...postgres.env, TABLEMINDS_TABLE_ROOTS: EXAMPLES },
      ["--pool", String(POOL), "--recover-every", "1", "--drain", "5"],
    );
  }, 180_000);

  afterAll(async () => {
    await replica?.kill();
    await stub?.close();
    postgres?.stop();
  });

  async function ask(): Promise<Outcome> {
    const statuses: number[] = [];
    const thread = (await (
      await fetch(`${replica.url}/threads`, { method: "POST", body: "{}" })
    ).json()) as { thread_id: string };
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await fetch(`${replica.url}/threads/${thread.thread_id}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "table_qa", input: MEDALS_INPUT }),
      });
      statuses.push(response.status);
      if (response.status === 503) {
        const wait = Number(response.headers.get("retry-after"));
        await response.body?.cancel();
        expect(wait).toBeGreaterThan(0);
        // Told to wait seconds; a test waits a fraction of that, with jitter.
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
        continue;
      }
      const values = (await response.json()) as { answer?: { final: string } };
      return {
        answer: values.answer?.final,
        refusals: statuses.filter((s) => s === 503).length,
        statuses,
      };
    }
    return { answer: undefined, refusals: statuses.length, statuses };
  }

  it("admits what its pool carries, tells the rest to come back, and runs each run once", async () => {
    const one = await ask();
    expect(one.answer).toBe("203");
    const callsPerRun = stub.requests.length;
    const before = stub.requests.length;
    const outcomes = await Promise.all(Array.from({ length: CLIENTS }, ask));
    expect(outcomes.map((o) => o.answer)).toEqual(Array(CLIENTS).fill("203"));
    const statuses = outcomes.flatMap((o) => o.statuses);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    // More clients than it admits: some were told to come back.
    expect(runsFor(POOL)).toBeLessThan(CLIENTS);
    expect(outcomes.reduce((sum, o) => sum + o.refusals, 0)).toBeGreaterThan(0);
    expect(stub.requests.length - before).toBe(CLIENTS * callsPerRun);

    const db = new pg.Client({ connectionString: postgres.env.TABLEMINDS_DATABASE_URL });
    await db.connect();
    try {
      const runs = await db.query(
        "SELECT status, count(*) AS n FROM tableminds_runs GROUP BY status",
      );
      expect(runs.rows).toEqual([{ status: "success", n: String(CLIENTS + 1) }]);
      const held = await db.query(
        "SELECT count(*) AS n FROM tableminds_leases WHERE expires_at > now()",
      );
      expect(held.rows[0].n).toBe("0");
    } finally {
      await db.end();
    }
  }, 300_000);

  it("gives back a thread-less run's slot when its stream ends", async () => {
    // More runs one after another than it admits at once: each ended run gave its slot back.
    for (let i = 0; i < runsFor(POOL) + 2; i++) {
      const response = await fetch(`${replica.url}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "table_qa", input: MEDALS_INPUT }),
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain("203");
    }
  }, 120_000);

  it("stops on SIGTERM within its drain bound", async () => {
    const started = Date.now();
    await replica.stop();
    expect(replica.child.signalCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(replica.log()).toContain("finishing running requests (at most 5 s");
  }, 30_000);
});
