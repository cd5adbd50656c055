import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ingest } from "../../nodes/ingest.js";
import { callerProblems, configurationOf } from "../../nodes/runtime.js";
import { parseExecRequest } from "../../sandbox/types.js";
import { type Access, decide, isLoopbackUrl, keysOf, LOCAL_USER } from "../../server/access.js";
import { serverDoctorLines, serverFacts } from "../../server/posture.js";
import {
  adoptOperatorFields,
  operatorSettings,
  resetOperatorSettings,
} from "../../settings/operator.js";
import { allowedSource, assertStoredTable } from "../../tables/sources.js";

const STUDIO = "https://smith.langchain.com";

function access(overrides: Partial<Access> = {}): Access {
  return { keys: new Map(), origins: [STUDIO], loopback: true, ...overrides };
}

const headers = (h: Record<string, string>) => new Headers(h);

describe("who may call the API server", () => {
  it("serves one local user on loopback, to loopback hosts and allowed origins only", () => {
    expect(decide(access(), headers({ host: "127.0.0.1:2024" }))).toEqual({ user: LOCAL_USER });
    expect(decide(access(), headers({ host: "localhost:2024", origin: STUDIO }))).toEqual({
      user: LOCAL_USER,
    });
    // A page anywhere else, or a rebound DNS name, is refused.
    expect(
      decide(access(), headers({ host: "127.0.0.1:2024", origin: "http://evil.example" })),
    ).toMatchObject({ status: 403 });
    expect(decide(access(), headers({ host: "evil.example:2024" }))).toMatchObject({
      status: 403,
    });
    // Listening beyond loopback without keys serves no one.
    expect(decide(access({ loopback: false }), headers({ host: "127.0.0.1:2024" }))).toMatchObject({
      status: 401,
      message: expect.stringContaining("TABLEMINDS_API_KEYS"),
    });
  });

  it("lets the server's own page call it, and no page that a rebound name brings here", () => {
    const own = { host: "127.0.0.1:2025", origin: "http://127.0.0.1:2025" };
    expect(decide(access({ origins: [] }), headers(own))).toEqual({ user: LOCAL_USER });
    // Another port of the same machine is another origin.
    expect(
      decide(access({ origins: [] }), headers({ ...own, origin: "http://127.0.0.1:9999" })),
    ).toMatchObject({ status: 403 });
    // A page on evil.example whose name now resolves here: same origin, but not a loopback host.
    const rebound = { host: "evil.example:2025", origin: "http://evil.example:2025" };
    expect(decide(access({ origins: [] }), headers(rebound))).toMatchObject({ status: 403 });
    // With keys, the page too needs one.
    const keys = keysOf({ TABLEMINDS_API_KEYS: "ada:0123456789abcdefXYZ" });
    const keyed = access({ keys, loopback: false, origins: [] });
    const remote = { host: "tables.example.org", origin: "https://tables.example.org" };
    expect(decide(keyed, headers(remote))).toMatchObject({ status: 401 });
    expect(decide(keyed, headers({ ...remote, "x-api-key": "0123456789abcdefXYZ" }))).toEqual({
      user: "ada",
    });
  });

  it("with keys, knows a caller only by a key it was given", () => {
    const keys = keysOf({ TABLEMINDS_API_KEYS: "ada:0123456789abcdefXYZ, bo:fedcba9876543210" });
    const keyed = access({ keys, loopback: false });
    expect(decide(keyed, headers({ authorization: "Bearer 0123456789abcdefXYZ" }))).toEqual({
      user: "ada",
    });
    expect(decide(keyed, headers({ "x-api-key": "fedcba9876543210" }))).toEqual({ user: "bo" });
    expect(decide(keyed, headers({ "x-api-key": "0123456789abcdef" }))).toMatchObject({
      status: 401,
    });
    expect(decide(keyed, headers({ host: "127.0.0.1" }))).toMatchObject({ status: 401 });
    expect(() => keysOf({ TABLEMINDS_API_KEYS: "ada:short" })).toThrow(/16\+ characters/);
  });

  it("reads the bind address the server was started with", () => {
    expect(isLoopbackUrl("http://127.0.0.1:2024")).toBe(true);
    expect(isLoopbackUrl("http://localhost:2024")).toBe(true);
    expect(isLoopbackUrl("http://0.0.0.0:2024")).toBe(false);
    expect(isLoopbackUrl(undefined)).toBe(false);
  });
});

describe("the input policy", () => {
  afterEach(() => resetOperatorSettings());

  it("reads a path only under a table root, after following its links", () => {
    const root = mkdtempSync(path.join(tmpdir(), "tm-roots-"));
    const allowed = path.join(root, "tables");
    const outside = path.join(root, "private");
    mkdirSync(allowed);
    mkdirSync(outside);
    writeFileSync(path.join(allowed, "ok.csv"), "a\n1\n");
    writeFileSync(path.join(outside, "secret.csv"), "a\n2\n");
    symlinkSync(path.join(outside, "secret.csv"), path.join(allowed, "link.csv"));
    const policy = { tableRoots: [allowed], tableFiles: [] };
    expect(allowedSource({ path: path.join(allowed, "ok.csv") }, policy)).toEqual({
      path: path.join(allowed, "ok.csv"),
    });
    for (const file of ["link.csv", "../private/secret.csv"]) {
      expect(() => allowedSource({ path: path.join(allowed, file) }, policy)).toThrow(
        /outside the table roots/,
      );
    }
    const named = { tableRoots: [], tableFiles: [path.join(outside, "secret.csv")] };
    expect(() => allowedSource({ path: path.join(outside, "secret.csv") }, named)).not.toThrow();
    expect(() => allowedSource({ path: "/etc/passwd" }, named)).toThrow(/reads no table paths/);
    const inline = { columns: ["a"], data: [[1]] };
    expect(allowedSource(inline, { tableRoots: [], tableFiles: [] })).toBe(inline);
  });

  it("takes a ready-made table only from the artifact store, under its digest", () => {
    const table = {
      id: "t",
      name: "t",
      sha256: "a".repeat(64),
      rows: 1,
      columns: [],
    };
    expect(() => assertStoredTable({ ...table, uri: "/etc/passwd" })).toThrow(/artifact store/);
    const home = process.env.TABLEMINDS_HOME ?? path.resolve(".tableminds");
    const stored = path.join(home, "artifacts", `${"a".repeat(64)}.csv`);
    expect(() => assertStoredTable({ ...table, uri: stored })).not.toThrow();
    const elsewhere = path.join(home, "artifacts", `${"b".repeat(64)}.csv`);
    expect(() => assertStoredTable({ ...table, uri: elsewhere })).toThrow(/artifact store/);
    // A thread's state can be written through the API: the sandbox checks again at its door.
    const forged = { code: "print(df)", tables: [{ ...table, uri: "/etc/passwd" }] };
    expect(() => parseExecRequest(forged)).toThrow(/artifact store/);
    expect(
      parseExecRequest({ code: "1", tables: [{ ...table, uri: stored }] }).tables,
    ).toHaveLength(1);
  });

  it("keeps the operator's fields out of a run's context, and in the process's settings", () => {
    expect(callerProblems({ workersDir: "/x", temperature: 1 })).toEqual([
      "workersDir: set by the operator (TABLEMINDS_WORKERS or --workers-dir), not by a run",
    ]);
    expect(() => configurationOf({ context: { replayCache: "/tmp/r.sqlite" } })).toThrow(
      /replayCache: set by the operator/,
    );
    expect(() => configurationOf({ configurable: { sandbox: "e2b" } })).toThrow(
      /sandbox: set by the operator/,
    );
    const context = adoptOperatorFields({ sandbox: "e2b", temperature: 0.5 });
    expect(context).toEqual({ temperature: 0.5 });
    expect(configurationOf({ context })).toMatchObject({ sandbox: "e2b", temperature: 0.5 });
    expect(operatorSettings({ TABLEMINDS_SANDBOX: "e2b" }).sandbox).toBe("e2b");
  });

  it("bounds what a caller may ask of the sandbox", () => {
    for (const context of [{ execTimeoutMs: 1e9 }, { execMemoryMb: 1e7 }, { outputBytes: 1e10 }]) {
      expect(() => configurationOf({ context })).toThrow(/Too big/);
    }
  });

  it("says in one line that a run without a question has none", async () => {
    const run = ingest as unknown as (state: object) => Promise<unknown>;
    await expect(run({ sources: [{ columns: ["a"], data: [[1]] }], tables: [] })).rejects.toThrow(
      "the question is empty",
    );
  });

  it("keeps each authenticated user's memory apart", () => {
    const config = configurationOf({
      context: { memoryNamespace: "ada/default" },
      configurable: { langgraph_auth_user_id: "bo" },
    });
    expect(config.memoryNamespace).toBe("bo/ada/default");
    expect(configurationOf({ context: {} }).memoryNamespace).toBe("default");
  });
});

describe("what doctor says of the API server", () => {
  it("reads the guards from langgraph.json and the environment", () => {
    const facts = serverFacts({
      TABLEMINDS_API_KEYS: "ada:0123456789abcdef",
      TABLEMINDS_TABLE_ROOTS: "/data",
    });
    expect(facts).toMatchObject({ authWired: true, keyedUsers: 1, tableRoots: ["/data"] });
    expect(facts.origins).toEqual([STUDIO]);
    expect(serverDoctorLines(facts)[0]).toBe(
      "API server: API keys of 1 user(s); each thread is its user's",
    );
    const dir = mkdtempSync(path.join(tmpdir(), "tm-lgjson-"));
    const bare = path.join(dir, "langgraph.json");
    writeFileSync(bare, JSON.stringify({ graphs: {} }));
    const open = serverFacts({}, bare);
    expect(open).toMatchObject({ authWired: false, keyedUsers: 0, origins: [], tableRoots: [] });
    expect(serverDoctorLines(open)[0]).toMatch(/NO AUTHENTICATION/);
    expect(serverFacts({ TABLEMINDS_API_KEYS: "ada:short" }).keyedUsers).toMatch(/16\+/);
  });
});
