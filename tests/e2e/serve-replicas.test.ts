import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEDGER_MIGRATIONS } from "../../server/ledger.js";
import { startCli } from "../support/cli.js";
import { EXAMPLES, MEDALS_INPUT, stubEnv } from "../support/env.js";
import { type ReplicaProcess, startReplica } from "../support/replica.js";
import { medalsTeam, orchestratedMedalsTeam } from "../support/scripts.js";
import { type Service, startService } from "../support/services.js";
import { type StubReply, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * `tableminds serve` replicas on one real PostgreSQL and one S3-compatible store: a thread made on one runs on another, one
 * thread never runs on two at once, a review pause on one is resumed on another, a replica
 * killed in the middle of a run has its run finished by another from the last checkpoint, and
 * the server's guards (keys, owners, the input policy) hold on every replica.
 */

const KEYS = "alice:alice-key-0123456789abcdef,bob:bob-key-0123456789abcdefgh";
const as = (url: string, key: string) =>
  new Client({ apiUrl: url, defaultHeaders: { Authorization: `Bearer ${key}` } });

type Answer = { answer?: { final: string; evidence: string[] } };

const ALICE = "alice-key-0123456789abcdef";
const REFUSED = "How many medals did the refused endpoint count?";

/** A request to a replica as `key`'s user, JSON in (when `body` is given). */
function call(url: string, key: string, body?: unknown): Promise<Response> {
  return fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { Authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe("tableminds serve, replicated on PostgreSQL", () => {
  let postgres: Service;
  let s3: Service;
  let stub: StubServer;
  let a: ReplicaProcess;
  let b: ReplicaProcess;
  /** While set, the coder's replies wait for it (a run held in the middle). */
  let coderGate: Promise<unknown> | undefined;
  /** While set, each model call restarts PostgreSQL (one restart at a time). */
  let restarts: Promise<void>[] | undefined;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    postgres = startService("postgres");
    s3 = startService("s3");
    const team = medalsTeam();
    const orchestrated = orchestratedMedalsTeam();
    stub = await startStubOpenAI({
      respond: (req): StubReply => {
        // A key the endpoint refuses: the run fails, and is reported as failed.
        if (JSON.stringify(req.messages).includes(REFUSED)) return { status: 401 };
        const reply = ["planner", "coder", "answerer"].includes(req.role)
          ? team(req)
          : orchestrated(req);
        if (restarts && typeof reply === "string") {
          // The reply goes back while the restart drops every connection, so the step's
          // checkpoint is written into it.
          const previous = restarts.at(-1) ?? Promise.resolve();
          restarts.push(previous.then(() => postgres.restart()));
          return { content: reply, until: previous, delayMs: 50 };
        }
        if (req.role !== "coder" || !coderGate) return reply;
        return typeof reply === "string" ? { content: reply, until: coderGate } : reply;
      },
      idleTimeoutMs: 300_000,
    });
    env = {
      ...stubEnv(stub.url),
      ...postgres.env,
      ...s3.env,
      TABLEMINDS_API_KEYS: KEYS,
      TABLEMINDS_TABLE_ROOTS: EXAMPLES,
    };
    // Each replica has a home of its own: only the database and the object store are shared.
    [a, b] = await Promise.all([
      startReplica({ ...env, TABLEMINDS_HOME: `${stubEnv(stub.url).TABLEMINDS_HOME}` }, [
        "--recover-every",
        "1",
        "--lease",
        "3",
      ]),
      startReplica({ ...env, TABLEMINDS_HOME: `${stubEnv(stub.url).TABLEMINDS_HOME}` }, [
        "--recover-every",
        "1",
        "--lease",
        "3",
      ]),
    ]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await stub?.close();
    postgres?.stop();
    s3?.stop();
  });

  it("migrates once when four processes migrate a fresh database at once", async () => {
    const admin = new pg.Client({ connectionString: postgres.env.TABLEMINDS_DATABASE_URL });
    await admin.connect();
    await admin.query("CREATE DATABASE fresh");
    await admin.end();
    const url = postgres.env.TABLEMINDS_DATABASE_URL?.replace(/\/postgres$/, "/fresh");
    const runs = await Promise.all(
      [1, 2, 3, 4].map(() => startCli(["db", "migrate"], { TABLEMINDS_DATABASE_URL: url }).done),
    );
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(runs.filter((r) => r.stdout.includes("migrated")).length).toBe(1);
    const fresh = new pg.Client({ connectionString: url });
    await fresh.connect();
    const rows = await fresh.query(
      "SELECT name, count(*) AS n FROM tableminds_migrations GROUP BY name",
    );
    const checkpoints = await fresh.query("SELECT count(*) AS n FROM checkpoint_migrations");
    await fresh.end();
    expect(rows.rows).toEqual([{ name: "server", n: String(LEDGER_MIGRATIONS.statements.length) }]);
    expect(Number(checkpoints.rows[0].n)).toBeGreaterThan(0);
  }, 120_000);

  it("runs on one replica a thread made on another, and either reads its state", async () => {
    const thread = await as(a.url, ALICE).threads.create();
    const values = (await as(b.url, ALICE).runs.wait(thread.thread_id, "table_qa", {
      input: MEDALS_INPUT,
    })) as Answer;
    expect(values.answer?.final, b.log().slice(-2000)).toBe("203");
    const state = await as(a.url, ALICE).threads.getState(thread.thread_id);
    expect((state.values as Answer).answer?.final).toBe("203");
  }, 120_000);

  it.each([
    ["mom", { plans: 2 }],
    ["mcts", { searchBudget: 8 }],
    ["orchestrator", { maxCodeAttempts: 2 }],
  ])(
    "serves %s on any replica",
    async (graphId, context) => {
      const client = as(b.url, ALICE);
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, graphId, {
        input: MEDALS_INPUT,
        context,
      })) as Answer;
      expect(values.answer?.final, b.log().slice(-2000)).toBe("203");
    },
    120_000,
  );

  it("streams a run's updates as the LangGraph API does", async () => {
    const client = as(a.url, ALICE);
    const thread = await client.threads.create();
    const events: string[] = [];
    const nodes = new Set<string>();
    for await (const chunk of client.runs.stream(thread.thread_id, "table_qa", {
      input: MEDALS_INPUT,
      streamMode: ["updates", "values"],
    })) {
      events.push(chunk.event);
      if (chunk.event === "updates") {
        for (const node of Object.keys(chunk.data as object)) nodes.add(node);
      }
    }
    expect(events[0]).toBe("metadata");
    expect(events).toContain("values");
    expect([...nodes]).toEqual(expect.arrayContaining(["turn", "ingest", "solve", "checker"]));
    const runs = (await (
      await call(`${a.url}/threads/${thread.thread_id}/runs`, ALICE)
    ).json()) as { status: string }[];
    expect(runs.map((run) => run.status)).toEqual(["success"]);
  }, 120_000);

  it("keeps to the server's guards on every replica", async () => {
    const anonymous = await fetch(`${b.url}/threads`, { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);
    const thread = await as(a.url, ALICE).threads.create();
    // Bob cannot see, run or search Alice's thread, on either replica.
    const peek = await call(
      `${b.url}/threads/${thread.thread_id}/state`,
      "bob-key-0123456789abcdefgh",
    );
    expect(peek.status).toBe(404);
    const found = await as(b.url, "bob-key-0123456789abcdefgh").threads.search();
    expect(found.map((t) => t.thread_id)).not.toContain(thread.thread_id);
    // A path outside the table roots is refused before anything runs.
    const before = stub.requests.length;
    const refused = await call(`${b.url}/threads/${thread.thread_id}/runs/stream`, ALICE, {
      assistant_id: "table_qa",
      input: { question: "q", sources: [{ path: "/etc/passwd" }] },
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("/etc/passwd");
    const stateless = await call(`${a.url}/runs/stream`, ALICE, {
      assistant_id: "table_qa",
      input: { question: "q", sources: [{ path: "/etc/passwd" }] },
    });
    expect(stateless.status).toBe(403);
    // A background run would start outside the thread lock: not served.
    const background = await call(`${a.url}/threads/${thread.thread_id}/runs`, ALICE, {
      assistant_id: "table_qa",
      input: MEDALS_INPUT,
    });
    expect(background.status).toBe(501);
    expect(stub.requests.length).toBe(before);
  }, 60_000);

  it("takes an id in one spelling only: another user's thread is not reached by another", async () => {
    const BOB = "bob-key-0123456789abcdefgh";
    const thread = await as(a.url, ALICE).threads.create();
    const id = thread.thread_id;
    const bare = id.replaceAll("-", "");
    // Every spelling PostgreSQL reads as the same uuid.
    const spellings = [
      bare,
      `%7B${id}%7D`,
      `%7B${bare}%7D`,
      id.toUpperCase(),
      `${bare.slice(0, 4)}-${bare.slice(4, 8)}-${bare.slice(8, 12)}-${bare.slice(12, 16)}-${bare.slice(16, 20)}-${bare.slice(20, 24)}-${bare.slice(24, 28)}-${bare.slice(28)}`,
    ];
    const run = "00000000-0000-4000-8000-000000000000";
    const routes = (t: string) => [
      `/threads/${t}`,
      `/threads/${t}/state`,
      `/threads/${t}/history`,
      `/threads/${t}/runs`,
      `/threads/${t}/runs/${run}`,
      `/threads/${t}/runs/${run}/join`,
    ];
    for (const spelling of spellings) {
      for (const route of routes(spelling)) {
        for (const key of [BOB, ALICE]) {
          const response = await call(`${b.url}${route}`, key);
          expect([route, response.status]).toEqual([route, 404]);
        }
      }
      const stream = await call(`${b.url}/threads/${spelling}/runs/stream`, BOB, {
        assistant_id: "table_qa",
        input: MEDALS_INPUT,
      });
      expect(stream.status).toBe(404);
    }
    // The one spelling still works for its owner.
    expect((await call(`${a.url}/threads/${id}`, ALICE)).status).toBe(200);
    // Malformed ids and bodies: a 4xx in one line, never a 500 or a database's words.
    const badRun = await call(`${a.url}/threads/${id}/runs/not-a-run`, ALICE);
    expect(badRun.status).toBe(404);
    const badThread = await call(`${a.url}/threads`, ALICE, { thread_id: "nope" });
    expect(badThread.status).toBe(422);
    const detail = ((await badThread.json()) as { detail: string }).detail;
    expect(detail).toBe("thread_id: thread_id must be a UUID in lower case with its hyphens");
  }, 60_000);

  it("keeps each user's memory to that user, whatever the run's body says", async () => {
    const BOB = "bob-key-0123456789abcdefgh";
    const canary = "alice-canary-7741";
    const aliceThread = await as(a.url, ALICE).threads.create();
    const asked = { ...MEDALS_INPUT, question: `${MEDALS_INPUT.question} (${canary})` };
    // One memory name for both users, used by no other test: what one archives, the other
    // would recall if memory were not kept per user.
    const context = { memoryNamespace: "canary-space" };
    const alice = await call(`${a.url}/threads/${aliceThread.thread_id}/runs/wait`, ALICE, {
      assistant_id: "table_qa",
      input: asked,
      context,
    });
    expect(alice.status).toBe(200);
    // The headers come first; the run has ended once the body has.
    await alice.text();
    // Bob asks the same question, as himself and then claiming to be Alice in the run's
    // configuration: neither run recalls Alice's episode.
    for (const config of [undefined, { configurable: { langgraph_auth_user_id: "alice" } }]) {
      const before = stub.requests.length;
      const bobThread = await as(b.url, BOB).threads.create();
      const bob = await call(`${b.url}/threads/${bobThread.thread_id}/runs/wait`, BOB, {
        assistant_id: "table_qa",
        input: MEDALS_INPUT,
        context,
        ...(config ? { config } : {}),
      });
      expect(bob.status).toBe(200);
      await bob.text();
      const prompts = stub.requests
        .slice(before)
        .map((r) => r.messages.map((m) => m.content).join("\n"));
      expect(prompts.length).toBeGreaterThan(0);
      expect(prompts.join("\n")).not.toContain(canary);
    }
    // Alice's own next run recalls her episode: memory works, per user.
    const again = stub.requests.length;
    const aliceNext = await as(a.url, ALICE).threads.create();
    await (
      await call(`${a.url}/threads/${aliceNext.thread_id}/runs/wait`, ALICE, {
        assistant_id: "table_qa",
        input: MEDALS_INPUT,
        context,
      })
    ).text();
    const hers = stub.requests.slice(again).map((r) => r.messages.map((m) => m.content).join("\n"));
    expect(hers.join("\n")).toContain(canary);
  }, 120_000);

  it("reports a failed run as LangGraph's servers do, and names the run before it ends", async () => {
    const client = as(a.url, ALICE);
    const thread = await client.threads.create();
    const created: string[] = [];
    await expect(
      client.runs.wait(thread.thread_id, "table_qa", {
        input: { ...MEDALS_INPUT, question: REFUSED },
        onRunCreated: ({ run_id }) => created.push(run_id),
      }),
    ).rejects.toThrow(/401/);
    // The run's id came in the headers, and the run is recorded as failed, with why.
    expect(created).toHaveLength(1);
    const run = (await (
      await call(`${b.url}/threads/${thread.thread_id}/runs/${created[0]}`, ALICE)
    ).json()) as { status: string; error: string };
    expect(run.status).toBe("error");
    expect(run.error).toMatch(/401/);
    // Joining it from the other replica says the same.
    const joined = (await (
      await call(`${b.url}/threads/${thread.thread_id}/runs/${created[0]}/join`, ALICE)
    ).json()) as { __error__?: { message: string } };
    expect(joined.__error__?.message).toMatch(/401/);
    // A run that succeeds answers its values, after the same headers.
    const ok = await call(`${a.url}/threads/${thread.thread_id}/runs/wait`, ALICE, {
      assistant_id: "table_qa",
      input: MEDALS_INPUT,
    });
    expect(ok.headers.get("content-location")).toMatch(/\/runs\/[0-9a-f-]{36}$/);
    const values = (await ok.json()) as Answer & { __error__?: unknown };
    expect(values.__error__).toBeUndefined();
    expect(values.answer?.final).toBe("203");
  });

  it("runs each model call once with PostgreSQL restarted at every call, on its own replica", async () => {
    const client = as(a.url, ALICE);
    const checkpoints = async (threadId: string) => {
      const db = new pg.Client({ connectionString: postgres.env.TABLEMINDS_DATABASE_URL });
      await db.connect();
      try {
        const rows = await db.query("SELECT count(*) AS n FROM checkpoints WHERE thread_id = $1", [
          threadId,
        ]);
        return Number(rows.rows[0].n);
      } finally {
        await db.end();
      }
    };
    const calm = await client.threads.create();
    let before = stub.requests.length;
    await client.runs.wait(calm.thread_id, "table_qa", { input: MEDALS_INPUT });
    const calmCalls = stub.requests.length - before;
    const calmCheckpoints = await checkpoints(calm.thread_id);

    const thread = await client.threads.create();
    const created: string[] = [];
    restarts = [];
    before = stub.requests.length;
    let values: Answer;
    let restarted = 0;
    try {
      values = (await client.runs.wait(thread.thread_id, "table_qa", {
        input: MEDALS_INPUT,
        onRunCreated: ({ run_id }) => created.push(run_id),
      })) as Answer;
    } finally {
      const pending = restarts;
      restarts = undefined;
      await Promise.all(pending);
      restarted = pending.length;
    }
    expect(values.answer?.final).toBe("203");
    expect(restarted).toBe(calmCalls);
    expect(stub.requests.length - before).toBe(calmCalls);
    expect(await checkpoints(thread.thread_id)).toBe(calmCheckpoints);
    const info = (await (await call(`${a.url}/info`, ALICE)).json()) as { replica: string };
    const run = (await (
      await call(`${b.url}/threads/${thread.thread_id}/runs/${created[0]}`, ALICE)
    ).json()) as { status: string; replica: string };
    expect(run).toMatchObject({ status: "success", replica: info.replica });
    expect(a.log()).not.toMatch(/LeaseLostError|internal error/);
  }, 120_000);

  it("never runs one thread on two replicas at once", async () => {
    const thread = await as(a.url, ALICE).threads.create();
    let open: () => void = () => {};
    coderGate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const coderCalls = stub.requests.filter((r) => r.role === "coder").length;
    const first = as(a.url, ALICE).runs.wait(thread.thread_id, "table_qa", { input: MEDALS_INPUT });
    while (stub.requests.filter((r) => r.role === "coder").length === coderCalls) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const second = await call(`${b.url}/threads/${thread.thread_id}/runs/stream`, ALICE, {
      assistant_id: "table_qa",
      input: MEDALS_INPUT,
    });
    expect(second.status).toBe(409);
    coderGate = undefined;
    open();
    expect(((await first) as Answer).answer?.final).toBe("203");
  }, 120_000);

  it("resumes on one replica a run paused for review on another", async () => {
    const thread = await as(a.url, ALICE).threads.create();
    await as(a.url, ALICE).runs.wait(thread.thread_id, "table_qa", {
      input: MEDALS_INPUT,
      context: { review: "answer" },
    });
    const paused = await as(b.url, ALICE).threads.getState(thread.thread_id);
    expect(paused.next.length).toBeGreaterThan(0);
    expect(paused.tasks.some((task) => (task.interrupts ?? []).length > 0)).toBe(true);
    const values = (await as(b.url, ALICE).runs.wait(thread.thread_id, "table_qa", {
      command: { resume: { action: "approve" } },
      context: { review: "answer" },
    })) as Answer;
    expect(values.answer?.final).toBe("203");
  }, 120_000);

  it("finishes from its last checkpoint, on another replica, a run whose replica was killed", async () => {
    const thread = await as(a.url, ALICE).threads.create();
    let open: () => void = () => {};
    coderGate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const planners = stub.requests.filter((r) => r.role === "planner").length;
    const coders = stub.requests.filter((r) => r.role === "coder").length;
    const response = await call(`${a.url}/threads/${thread.thread_id}/runs/stream`, ALICE, {
      assistant_id: "table_qa",
      input: MEDALS_INPUT,
      stream_mode: ["updates"],
    });
    const runId = /\/runs\/([0-9a-f-]{36})$/.exec(
      response.headers.get("content-location") ?? "",
    )?.[1];
    expect(runId).toBeDefined();
    // The planner has answered and its step is saved; the coder's call is in flight.
    while (stub.requests.filter((r) => r.role === "coder").length === coders) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await a.kill();
    await response.body?.cancel().catch(() => {});
    coderGate = undefined;
    open();
    const client = as(b.url, ALICE);
    const deadline = Date.now() + 60_000;
    let status = "running";
    let replica = "";
    let seen = "";
    while (status === "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await (await call(`${b.url}/threads/${thread.thread_id}/runs/${runId}`, ALICE)).text();
      const run = JSON.parse(seen) as { status: string; replica: string };
      status = run.status;
      replica = run.replica;
    }
    expect(status, `${seen}\n${b.log().slice(-3000)}`).toBe("success");
    const info = (await (await call(`${b.url}/info`, ALICE)).json()) as { replica: string };
    expect(replica).toBe(info.replica);
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as Answer).answer?.final).toBe("203");
    // From the last checkpoint: the planner's step was not run again; the coder's was.
    expect(stub.requests.filter((r) => r.role === "planner").length).toBe(planners + 1);
    expect(stub.requests.filter((r) => r.role === "coder").length).toBeGreaterThan(coders + 1);
  }, 180_000);
});
