import { existsSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { FOLLOW_UP, followUpTeam, silverTotal } from "../support/follow-up.js";
import { MEDALS_QUESTION } from "../support/scripts.js";
import { type Service, startService } from "../support/services.js";
import type { StubReply, StubRequest } from "../support/stub-openai.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The CLI with TABLEMINDS_DATABASE_URL: a thread's checkpoints and the long-term memory live in
 * a real PostgreSQL, not in SQLite files, and a run killed in one process goes on in another.
 */

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;

describe("tableminds ask on PostgreSQL", () => {
  let postgres: Service;
  let stub: StubServer;
  let onAnswerer: (() => void) | undefined;
  const team = followUpTeam();

  beforeAll(async () => {
    postgres = startService("postgres");
    stub = await startStubOpenAI({
      respond: (req: StubRequest): StubReply => {
        if (req.role === "answerer" && onAnswerer) {
          onAnswerer();
          return { hang: true };
        }
        return team(req);
      },
    });
  });

  afterAll(async () => {
    await stub?.close();
    postgres?.stop();
  });

  const envOf = () => ({ ...stubEnv(stub.url), ...postgres.env });
  const roles = (from: number) => stub.requests.slice(from).map((r) => r.role);
  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgres.env.TABLEMINDS_DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };

  it("resumes a killed run from its checkpoints in PostgreSQL, then takes a follow-up", async () => {
    const args = (question: string) => ["ask", TABLE, question, "--thread", "pg-1", "--no-memory"];
    const first = envOf();
    const reached = new Promise<void>((resolve) => {
      onAnswerer = resolve;
    });
    const killed = startCli(args(MEDALS_QUESTION), first);
    await reached;
    killed.child.kill("SIGKILL");
    expect((await killed.done).signal).toBe("SIGKILL");
    onAnswerer = undefined;
    expect(existsSync(path.join(first.TABLEMINDS_HOME ?? "", "checkpoints.sqlite"))).toBe(false);

    const second = first;
    const before = stub.requests.length;
    const resumed = await runCli(args(MEDALS_QUESTION), second);
    expect(resumed.code, resumed.stderr).toBe(0);
    // Where it goes on depends on how far the checkpoint writes got before the kill.
    expect(resumed.stderr).toMatch(/resume thread pg-1 at (executor|answerer)/);
    expect(resumed.stdout).toMatch(/^Answer: 203$/m);
    expect(roles(before)).not.toContain("planner");
    expect(roles(before)).not.toContain("coder");

    const followUp = await runCli(args(FOLLOW_UP), second);
    expect(followUp.code, followUp.stderr).toBe(0);
    expect(followUp.stdout).toMatch(new RegExp(`^Answer: ${silverTotal()}$`, "m"));
    const threads = await query("SELECT DISTINCT thread_id FROM checkpoints");
    expect(threads.map((row) => row.thread_id)).toContain("pg-1");
  }, 120_000);

  it("keeps the long-term memory in PostgreSQL's store", async () => {
    const env = envOf();
    const run = await runCli(["ask", TABLE, MEDALS_QUESTION], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Answer: 203$/m);
    expect(existsSync(path.join(env.TABLEMINDS_HOME ?? "", "memory.sqlite"))).toBe(false);
    const rows = await query("SELECT namespace_path, key FROM store");
    expect(rows.length).toBeGreaterThan(0);
    // The next run over a table of the same schema is told what was learnt (the store's own
    // search, ranked by tableminds: no pgvector here).
    const before = stub.requests.length;
    const again = await runCli(["ask", TABLE, MEDALS_QUESTION], env);
    expect(again.code, again.stderr).toBe(0);
    const planner = stub.requests.slice(before).find((r) => r.role === "planner");
    expect(planner?.messages.map((m) => m.content).join("\n")).toContain(
      "Lessons from similar past questions",
    );
  }, 120_000);
});
