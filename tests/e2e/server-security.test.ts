import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../support/dev-server.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, orchestratedMedalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * The API server as an attacker meets it (issue 22, item 1): started as the README says, with
 * API keys. Every request here failed to be refused, or leaked, on the server before this.
 */

const ALICE = "alice-key-0123456789";
const BOB = "bob-key-0123456789abcdef";
const SECRET = "canary-7f3e9a";

describe("the API server against callers it does not trust", () => {
  let stub: StubServer;
  let server: DevServer;
  let privateCsv: string;
  const alice = () => new Client({ apiUrl: server.url, apiKey: ALICE });
  const bob = () => new Client({ apiUrl: server.url, apiKey: BOB });
  const rawPost = (route: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${route}`, { method: "POST", body, headers });

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tm-private-"));
    privateCsv = path.join(dir, "salaries.csv");
    writeFileSync(privateCsv, `name,salary\nceo,${SECRET}\n`);
    chmodSync(privateCsv, 0o600);
    stub = await startStubOpenAI({ respond: orchestratedMedalsTeam(), idleTimeoutMs: 240_000 });
    server = await startDevServer({
      ...stubEnv(stub.url),
      TABLEMINDS_API_KEYS: `alice:${ALICE},bob:${BOB}`,
      TABLEMINDS_TABLE_ROOTS: "",
    });
  }, 150_000);

  afterAll(async () => {
    await server?.stop();
    await stub?.close();
  });

  it("refuses a request without a key, or with a key it does not know", async () => {
    const none = await fetch(`${server.url}/assistants/search`, { method: "POST", body: "{}" });
    expect(none.status).toBe(401);
    const wrong = await fetch(`${server.url}/assistants/search`, {
      method: "POST",
      body: "{}",
      headers: { authorization: "Bearer not-a-key-of-anyone" },
    });
    expect(wrong.status).toBe(401);
    expect((await alice().assistants.search({ graphId: "table_qa" })).length).toBeGreaterThan(0);
  });

  it("refuses a cross-site text/plain POST and allows no origin but Studio's", async () => {
    const input = { question: "q", sources: [{ columns: ["a"], data: [[1]] }] };
    const csrf = await rawPost("/runs/wait", JSON.stringify({ assistant_id: "table_qa", input }), {
      "content-type": "text/plain",
      origin: "http://evil.example",
      "x-api-key": ALICE,
    });
    expect(csrf.status).toBe(403);
    expect(csrf.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${server.url}/threads`, {
      method: "OPTIONS",
      headers: {
        origin: "https://smith.langchain.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "x-api-key,content-type",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBe(
      "https://smith.langchain.com",
    );
    const evil = await fetch(`${server.url}/threads`, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("reads no file by path, and no ready-made table outside the store", async () => {
    const before = stub.requests.length;
    await expect(
      alice().runs.wait(null, "table_qa", {
        input: { question: "What is the CEO's salary?", sources: [{ path: privateCsv }] },
      }),
    ).rejects.toThrow(/403.*refused: this server reads no table paths/);
    const table = {
      id: "t",
      name: "passwd",
      uri: "/etc/passwd",
      sha256: "0".repeat(64),
      rows: 1,
      columns: [{ name: "a", dtype: "object" }],
    };
    await expect(
      alice().runs.wait(null, "table_qa", { input: { question: "q", tables: [table] } }),
    ).rejects.toThrow(/403.*artifact store/);
    expect(stub.requests.length).toBe(before);
    expect(JSON.stringify(stub.requests)).not.toContain(SECRET);
  });

  it.each([
    [{ workersDir: "/tmp" }, /workersDir: set by the operator/],
    [{ replayCache: "/tmp/deep/new/folder/replies.sqlite" }, /replayCache: set by the operator/],
    [{ sandbox: "local" }, /sandbox: set by the operator/],
    [{ model: "local:/tmp/any.gguf" }, /model: a local model is named here by its name/],
  ])("refuses a run context that sets %o", async (context, message) => {
    const input = { question: "q", sources: [{ columns: ["a"], data: [[1]] }] };
    await expect(alice().runs.wait(null, "table_qa", { input, context })).rejects.toThrow(message);
    await expect(
      alice().runs.wait(null, "table_qa", { input, config: { configurable: context } }),
    ).rejects.toThrow(message);
    await expect(alice().assistants.create({ graphId: "table_qa", context })).rejects.toThrow(
      message,
    );
  });

  it("answers over an uploaded table, which the store keeps under its digest", async () => {
    const bytes = readFileSync(path.join(EXAMPLES, "olympics_2020_medals.csv"));
    const upload = await fetch(`${server.url}/tables?name=olympics_2020_medals.csv`, {
      method: "POST",
      body: bytes,
      headers: { "x-api-key": ALICE },
    });
    expect(upload.status).toBe(201);
    const { source } = (await upload.json()) as { source: { upload: string; name: string } };
    expect(source.upload).toMatch(/^[0-9a-f]{64}\.csv$/);
    const values = (await alice().runs.wait(null, "table_qa", {
      input: { question: MEDALS_QUESTION, sources: [source] },
      context: { maxCodeAttempts: 2 },
    })) as { answer?: { final: string } };
    expect(values.answer?.final, server.log().slice(-2000)).toBe("203");
    const anonymous = await fetch(`${server.url}/tables?name=a.csv`, {
      method: "POST",
      body: "a\n1\n",
    });
    expect(anonymous.status).toBe(401);
  }, 120_000);

  it("calls no webhook a caller names, and serves no route that wipes every thread", async () => {
    const input = { question: "q", sources: [{ columns: ["a"], data: [[1]] }] };
    await expect(
      alice().runs.wait(null, "table_qa", { input, webhook: "http://127.0.0.1:9/hook" }),
    ).rejects.toThrow(/webhooks are not served/);
    const truncate = await rawPost("/internal/truncate", JSON.stringify({ threads: true }), {
      "x-api-key": ALICE,
      "content-type": "application/json",
    });
    expect(truncate.status).toBe(403);
  });

  it("keeps each thread to the user who made it", async () => {
    const thread = await alice().threads.create();
    await expect(bob().threads.get(thread.thread_id)).rejects.toThrow(/404/);
    await expect(
      bob().runs.wait(thread.thread_id, "table_qa", {
        input: { question: "q", sources: [{ columns: ["a"], data: [[1]] }] },
      }),
    ).rejects.toThrow(/404/);
    const bobs = await bob().threads.search({ limit: 100 });
    expect(bobs.map((t) => t.thread_id)).not.toContain(thread.thread_id);
    expect((await alice().threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
  });

  it("keeps each user's memory to that user, whatever the run's configuration says", async () => {
    const canary = "dev-canary-3317";
    const bytes = readFileSync(path.join(EXAMPLES, "olympics_2020_medals.csv"));
    const sourceFor = async (key: string) => {
      const upload = await fetch(`${server.url}/tables?name=olympics_2020_medals.csv`, {
        method: "POST",
        body: bytes,
        headers: { "x-api-key": key },
      });
      return ((await upload.json()) as { source: { upload: string; name: string } }).source;
    };
    // One memory name for both users, used by no other test.
    const context = { memoryNamespace: "dev-canary-space", maxCodeAttempts: 2 };
    const promptsOf = async (client: Client, key: string, question: string, extra = {}) => {
      const before = stub.requests.length;
      await client.runs.wait(null, "table_qa", {
        input: { question, sources: [await sourceFor(key)] },
        context,
        ...extra,
      });
      return stub.requests
        .slice(before)
        .map((r) => r.messages.map((m) => m.content).join("\n"))
        .join("\n");
    };
    await promptsOf(alice(), ALICE, `${MEDALS_QUESTION} (${canary})`);
    const bobs = await promptsOf(bob(), BOB, MEDALS_QUESTION);
    expect(bobs.length).toBeGreaterThan(0);
    expect(bobs).not.toContain(canary);
    // Claiming to be Alice in the run's configuration is refused or ignored.
    const claimed = await promptsOf(bob(), BOB, MEDALS_QUESTION, {
      config: { configurable: { langgraph_auth_user_id: "alice" } },
    }).catch((error: unknown) => String(error));
    expect(claimed).not.toContain(canary);
    // Alice's own next run recalls her episode: memory works, per user.
    expect(await promptsOf(alice(), ALICE, MEDALS_QUESTION)).toContain(canary);
  }, 180_000);

  it("reaches a thread by its one spelling only, and never another user's by any", async () => {
    const thread = await alice().threads.create();
    const id = thread.thread_id;
    const bare = id.replaceAll("-", "");
    const spellings = [bare, `%7B${id}%7D`, id.toUpperCase()];
    const run = "00000000-0000-4000-8000-000000000000";
    const get = (route: string, key: string) =>
      fetch(`${server.url}${route}`, { headers: { "x-api-key": key } });
    for (const spelling of spellings) {
      for (const route of [
        `/threads/${spelling}`,
        `/threads/${spelling}/state`,
        `/threads/${spelling}/runs`,
      ]) {
        for (const key of [ALICE, BOB]) {
          const response = await get(route, key);
          expect([route, key === ALICE ? "alice" : "bob", response.status < 500]).toEqual([
            route,
            key === ALICE ? "alice" : "bob",
            true,
          ]);
          if (key === BOB) expect([route, response.status]).not.toEqual([route, 200]);
        }
      }
    }
    for (const route of [
      `/threads/${id}`,
      `/threads/${id}/state`,
      `/threads/${id}/runs`,
      `/threads/${id}/runs/${run}`,
    ]) {
      expect([route, (await get(route, BOB)).status]).toEqual([route, 404]);
    }
    expect((await get(`/threads/${id}`, ALICE)).status).toBe(200);
  });

  it("lets the store API reach a user's own memory only", async () => {
    await expect(
      bob().store.searchItems(["tableminds", "memories", "alice/default"]),
    ).rejects.toThrow(/403/);
    await expect(bob().store.searchItems(["tableminds"])).rejects.toThrow(/403/);
    await expect(
      bob().store.searchItems(["tableminds", "memories", "bob/default"]),
    ).resolves.toBeTruthy();
  });
});
