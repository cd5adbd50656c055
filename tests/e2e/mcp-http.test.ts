import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, type RunningCli, startCli } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const TABLE = `${EXAMPLES}/olympics_2020_medals.csv`;
const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef0";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "0" },
  },
};

/** Settles with the URL the server prints once it listens. */
function listening(server: RunningCli): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    server.child.stderr?.on("data", (data) => {
      seen += data;
      const url = /streamable HTTP at (http:\/\/\S+\/mcp)/.exec(seen)?.[1];
      if (url) resolve(url);
    });
    server.done.then((r) => reject(new Error(`the server ended: ${r.stderr}`)));
  });
}

function post(url: string, headers: Record<string, string>, body: unknown = INITIALIZE) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

describe("tableminds mcp --http", () => {
  let stub: StubServer;
  let server: RunningCli;
  let url: string;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: medalsTeam() });
    server = startCli(["mcp", "--http", "--port", "0"], {
      ...stubEnv(stub.url),
      TABLEMINDS_API_KEYS: `alice:${ALICE},bob:${BOB}`,
      TABLEMINDS_TABLE_ROOTS: EXAMPLES,
    });
    url = await listening(server);
    transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
    });
    client = new Client({ name: "tableminds-test", version: "0.0.0" });
    await client.connect(transport);
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    server?.child.kill("SIGTERM");
    await server?.done;
    await stub?.close();
  });

  it("refuses a request without a valid key with 401", async () => {
    const none = await post(url, {});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await post(url, { authorization: "Bearer not-a-key-of-anyone-here" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toMatch(/unknown API key/);
  });

  it("keeps a session to its user: another user's key does not find it", async () => {
    const session = transport.sessionId ?? "";
    expect(session).not.toBe("");
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const bob = await post(
      url,
      { authorization: `Bearer ${BOB}`, "mcp-session-id": session },
      list,
    );
    expect(bob.status).toBe(404);
  });

  it("answers 203 for a table under TABLEMINDS_TABLE_ROOTS, with progress", async () => {
    const progress: string[] = [];
    const result = await client.callTool(
      { name: "ask", arguments: { question: MEDALS_QUESTION, tables: [TABLE] } },
      undefined,
      { timeout: 50_000, onprogress: (p) => progress.push(p.message ?? "") },
    );
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const out = result.structuredContent as { answer: { final: string; evidence: string[] } };
    expect(out.answer.final).toBe("203");
    expect(out.answer.evidence).toContain("a1:out2");
    expect(progress).toContain("answerer: 203");
  }, 55_000);

  it("keeps each user's memory to that user", async () => {
    const canary = "mcp-canary-5521";
    // One memory name for both users, used by no other test.
    const configuration = { memoryNamespace: "mcp-canary-space" };
    const ask = (as: Client, question: string) =>
      as.callTool(
        { name: "ask", arguments: { question, tables: [TABLE], configuration } },
        undefined,
        { timeout: 50_000 },
      );
    const promptsOf = async (as: Client, question: string) => {
      const before = stub.requests.length;
      const result = await ask(as, question);
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      return stub.requests
        .slice(before)
        .map((r) => r.messages.map((m) => m.content).join("\n"))
        .join("\n");
    };
    await promptsOf(client, `${MEDALS_QUESTION} (${canary})`);
    const bob = new Client({ name: "tableminds-test-bob", version: "0.0.0" });
    await bob.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${BOB}` } },
      }),
    );
    try {
      const bobs = await promptsOf(bob, MEDALS_QUESTION);
      expect(bobs.length).toBeGreaterThan(0);
      expect(bobs).not.toContain(canary);
    } finally {
      await bob.close();
    }
    // Alice's own next run recalls her episode: memory works, per user.
    expect(await promptsOf(client, MEDALS_QUESTION)).toContain(canary);
  }, 150_000);

  it("answers 203 for the same table sent as CSV text", async () => {
    const csv = readFileSync(TABLE, "utf8");
    const result = await client.callTool(
      {
        name: "ask",
        arguments: { question: MEDALS_QUESTION, tables: [{ csv, name: "medals" }] },
      },
      undefined,
      { timeout: 50_000 },
    );
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect((result.structuredContent as { answer: { final: string } }).answer.final).toBe("203");
  }, 55_000);

  it("is served: no path outside the roots (not even the working folder), no local model path", async () => {
    const outside = await client.callTool({
      name: "inspect_table",
      arguments: { table: `${ROOT}/tests/fixtures/messy/obvious.json` },
    });
    expect(outside.isError).toBe(true);
    expect(JSON.stringify(outside.content)).toMatch(/outside the table roots/);
    const model = await client.callTool({
      name: "ask",
      arguments: {
        question: MEDALS_QUESTION,
        tables: [TABLE],
        configuration: { model: "local:/tmp/model.gguf" },
      },
    });
    expect(model.isError).toBe(true);
    expect(JSON.stringify(model.content)).toMatch(/model: a local model is named here by its name/);
  });

  it("stops on SIGTERM", async () => {
    await client.close();
    server.child.kill("SIGTERM");
    const ended = await server.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).toMatch(/mcp: SIGTERM, stopping/);
  });
});
