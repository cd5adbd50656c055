import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { AuthenticationError, RateLimitError, SandboxError } from "e2b";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import {
  E2BConfigError,
  E2BSandbox,
  type E2BSandboxOptions,
  E2BStartError,
  E2BTemplateError,
} from "../../sandbox/e2b.js";
import { useTempHome } from "../support/env.js";
import { FakeE2B } from "../support/fake-e2b.js";
import { medalsRef } from "../support/table-fixtures.js";
import { eventually } from "./hostile/procfs.js";

const fakes: FakeE2B[] = [];
const opened: E2BSandbox[] = [];

function fakeE2B(...args: ConstructorParameters<typeof FakeE2B>): FakeE2B {
  const fake = new FakeE2B(...args);
  fakes.push(fake);
  return fake;
}

async function startOn(fake: FakeE2B, opts: E2BSandboxOptions = {}): Promise<E2BSandbox> {
  const sandbox = await E2BSandbox.start({
    apiKey: "test-key",
    sdk: fake,
    backoffMs: 10,
    networkProbe: { host: "1.1.1.1", port: 80, answerMs: 500 },
    ...opts,
  });
  opened.push(sandbox);
  return sandbox;
}

let medals: TableRef;

beforeAll(async () => {
  useTempHome();
  medals = await medalsRef();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
  for (const fake of fakes.splice(0)) fake.cleanup();
});

// What every backend does is in sandbox-contract.test.ts, run there on the fake too.
describe("the E2B sandbox, run against a local fake of the SDK", () => {
  it("checks python and pandas, and calls the network blocked only when a request got no answer", async () => {
    const fake = fakeE2B();
    // The fake's firewall accepts the connection to 1.1.1.1:80 and never answers, as E2B's does.
    const closed = await startOn(fake);
    const blocked = await closed.describe();
    expect(blocked.info.backend).toBe("e2b");
    expect(blocked.info.runtime).toMatch(/code-interpreter-v1: Python 3\.\d+.*pandas \d+\.\d+/);
    expect(blocked.details.network).toBe("blocked");
    expect(blocked.info.protections.noInternet).toBe(true);
    expect(fake.creates[0]?.options.allowInternetAccess).toBe(false);

    // A listener that accepts and then answers: the network is open.
    const answering: Server = createServer((socket) => {
      socket.on("error", () => undefined);
      socket.once("data", () => socket.end("HTTP/1.0 200 OK\r\n\r\n"));
    });
    await new Promise<void>((resolve) => answering.listen(0, "127.0.0.1", resolve));
    const address = answering.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const open = await startOn(fake, { networkProbe: { host: "127.0.0.1", port } });
      const seen = await open.describe();
      expect(seen.details.network).toBe("open");
      expect(seen.info.protections.noInternet).toBe(false);
    } finally {
      await new Promise((resolve) => answering.close(resolve));
    }
    // With internet allowed, the fake's "internet" answers.
    const allowed = await startOn(fake, { allowInternet: true });
    expect((await allowed.describe()).details.network).toBe("open");
  });

  it("says the network is undetermined when the check itself cannot run", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake);
    fake.faults.killShellCommands = /socket\.create_connection/;
    const { info, details } = await sandbox.describe();
    expect(details.network).toBe("undetermined");
    expect(details.networkDetail).toMatch(/the check itself failed/);
    expect(info.protections.noInternet).toBe(false);
  });

  it("uploads the runner and each table once per sandbox, across requests", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1 });
    for (const n of [1, 2, 3]) {
      const result = await sandbox.execute({ code: `print(len(df) * ${n})`, tables: [medals] });
      expect(result.stdout).toBe(`${4 * n}\n`);
    }
    expect(fake.sandboxes).toHaveLength(1);
    const uploads = fake.sandboxes[0]?.uploads ?? [];
    const tablePath = `/home/user/tableminds/tables/${medals.sha256}.csv`;
    expect(uploads.filter((p) => p === tablePath)).toHaveLength(1);
    for (const file of ["runner.py", "hardening.py", "read_rules.py", "e2b_runner.py"]) {
      expect(uploads.filter((p) => p === `/home/user/tableminds/bin/${file}`)).toHaveLength(1);
    }
    // One request file per request, each in a run directory of its own.
    const requests = uploads.filter((p) => p.endsWith("/request.json"));
    expect(requests).toHaveLength(3);
    expect(new Set(requests).size).toBe(3);
  });

  it("refuses reads outside scratch and the run's own tables, and keeps working", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1 });
    const dir = await mkdtemp(path.join(os.tmpdir(), "tableminds-e2b-private-"));
    const secret = "sk-e2b-private-secret";
    const privateFile = path.join(dir, "credentials");
    await writeFile(privateFile, `${secret}\n`);
    try {
      const first = await sandbox.execute({ code: "print(len(df))", tables: [medals] });
      expect(first.stdout).toBe("4\n");
      // Another run's table, still uploaded in the same sandbox.
      const otherTable = `${fake.sandboxes[0]?.home}/tableminds/tables/${medals.sha256}.csv`;
      const attempts = [
        `print(open(${JSON.stringify(privateFile)}).read())`,
        `print(open(${JSON.stringify(path.resolve("package.json"))}).read())`,
        `import os\nos.symlink(${JSON.stringify(privateFile)}, "notes.txt")\nprint(open("notes.txt").read())`,
        `import os\nprint(os.listdir(${JSON.stringify(dir)}))`,
        `print(pd.read_csv(${JSON.stringify(otherTable)}).to_string())`,
      ];
      for (const code of attempts) {
        const result = await sandbox.execute({ code, tables: [] });
        expect(result.ok).toBe(false);
        expect(result.error?.type).toBe("PermissionError");
        expect(result.error?.message).toMatch(/reading outside the scratch directory/);
        expect(JSON.stringify(result)).not.toContain(secret);
        expect(result.stdout).toBe("");
      }
      const next = await sandbox.execute({ code: "print(int(df.shape[0]))", tables: [medals] });
      expect(next.stdout).toBe("4\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("removes each run directory afterwards", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1 });
    await sandbox.execute({ code: "x = df.head(2)\nprint(len(x))", tables: [medals] });
    expect(await readdir(`${fake.sandboxes[0]?.home}/tableminds/runs`)).toEqual([]);
  });

  it("reuses at most poolSize sandboxes for concurrent requests, and kills them all at close", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 2 });
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        sandbox.execute({ code: `import time\ntime.sleep(0.2)\nprint(${n} * 10)`, tables: [] }),
      ),
    );
    expect(results.map((r) => r.stdout)).toEqual(["10\n", "20\n", "30\n", "40\n", "50\n"]);
    expect(fake.creates).toHaveLength(2);
    expect(sandbox.sandboxIds.sort()).toEqual(["fake-0", "fake-1"]);

    await sandbox.close();
    expect(fake.alive).toEqual([]);
    expect(fake.sandboxes.map((s) => s.killCalls)).toEqual([1, 1]);
    await sandbox.close();
    expect(fake.sandboxes.map((s) => s.killCalls)).toEqual([1, 1]);
    await expect(sandbox.execute({ code: "print(1)", tables: [] })).rejects.toThrow(/closed/);
  });

  it("never throws at close when a kill fails", async () => {
    const fake = fakeE2B({ failKills: true });
    const sandbox = await startOn(fake);
    await expect(sandbox.close()).resolves.toBeUndefined();
    // Once from the pool, once more from the sweep of the pool's metadata.
    expect(fake.sandboxes[0]?.killCalls).toBe(2);
    expect(sandbox.failuresAtClose).toHaveLength(2);
  });

  it("retries failed creates with jittered exponential backoff, then succeeds", async () => {
    const fake = fakeE2B({ failCreates: 3 });
    const clock = fakeClock();
    const sandbox = await startOn(fake, { clock, random: () => 0.5, backoffMs: 1_000 });
    expect(fake.creates).toHaveLength(4);
    // Half of 1 s, 2 s, 4 s: full jitter with the random number at 0.5.
    expect(clock.sleeps).toEqual([500, 1_000, 2_000]);
    const result = await sandbox.execute({ code: "print('up')", tables: [] });
    expect(result.stdout).toBe("up\n");
  });

  it("keeps retrying a busy E2B over minutes, honours Retry-After, and gives a clear error", async () => {
    const busy = () => new RateLimitError("Rate limit exceeded, please try again later");
    const fake = fakeE2B({ failCreates: 1_000, createError: busy });
    const clock = fakeClock();
    const failure = startOn(fake, { clock, random: () => 0, backoffMs: 1_000 });
    await expect(failure).rejects.toBeInstanceOf(E2BStartError);
    await expect(failure).rejects.toThrow(
      /could not start an E2B sandbox .* in 9 attempts over \d+ s: Rate limit/,
    );
    // A busy service waits at least half the ceiling: 0.5, 1, 2, 4, 8, 15, 15, 15 s.
    expect(clock.sleeps).toEqual([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);

    const asked = Object.assign(new SandboxError("503: busy"), { retryAfterMs: 7_000 });
    const polite = fakeE2B({ failCreates: 2, createError: () => asked });
    const politeClock = fakeClock();
    await startOn(polite, { clock: politeClock, backoffMs: 1_000 });
    expect(politeClock.sleeps).toEqual([7_000, 7_000]);
  });

  it("gives up within the start window", async () => {
    const fake = fakeE2B({ failCreates: 1_000 });
    const clock = fakeClock();
    const failure = startOn(fake, {
      clock,
      random: () => 1,
      startRetries: 50,
      startWindowMs: 60_000,
    });
    await expect(failure).rejects.toBeInstanceOf(E2BStartError);
    const waited = clock.sleeps.reduce((a, b) => a + b, 0);
    expect(waited).toBeLessThanOrEqual(60_000);
    expect(waited).toBeGreaterThan(30_000);
  });

  it("turns a sandbox that cannot be started during a run into a failed attempt, not a crash", async () => {
    const fake = fakeE2B();
    const clock = fakeClock();
    const sandbox = await startOn(fake, { poolSize: 1, clock });
    fake.faults.failCreates = 1_000;
    fake.faults.createError = () => new RateLimitError("Rate limit exceeded");
    fake.sandboxes[0]?.die();
    const result = await sandbox.execute({ code: "print(1)", tables: [] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("SandboxError");
    expect(result.error?.message).toMatch(/no E2B sandbox could be started: could not start/);
  });

  it("gives a clear error when every create fails", async () => {
    const fake = fakeE2B({ failCreates: 100 });
    const failure = startOn(fake, { startRetries: 2, clock: fakeClock() });
    await expect(failure).rejects.toBeInstanceOf(E2BStartError);
    await expect(failure).rejects.toThrow(
      /could not start an E2B sandbox .* in 3 attempts over \d+ s: 500: internal error/,
    );
    expect(fake.creates).toHaveLength(3);
  });

  it("does not retry a create that E2B refused for good", async () => {
    const fake = fakeE2B({
      failCreates: 1,
      createError: () => new AuthenticationError("Unauthorized, please check your credentials."),
    });
    const failure = startOn(fake);
    await expect(failure).rejects.toBeInstanceOf(E2BConfigError);
    await expect(failure).rejects.toThrow(/Unauthorized.*E2B_API_KEY/);
    expect(fake.creates).toHaveLength(1);
  });

  it("gives up on a create that hangs, and kills the sandbox that arrives late", async () => {
    const fake = fakeE2B({ createDelaysMs: [1_500] });
    const sandbox = await startOn(fake, { createTimeoutMs: 300 });
    expect(fake.creates).toHaveLength(2);
    expect(sandbox.sandboxIds).toEqual(["fake-1"]);
    // The first create finishes after we stopped waiting: its sandbox must not live on.
    expect(
      await eventually(() => fake.sandboxes.some((s) => s.sandboxId === "fake-0"), 5_000),
    ).toBe(true);
    const late = fake.sandboxes.find((s) => s.sandboxId === "fake-0");
    expect(await eventually(() => late?.dead === true, 5_000)).toBe(true);
    expect(late?.killCalls).toBe(1);
  });

  it("refuses a template without pandas, with advice, and without retrying", async () => {
    const fake = fakeE2B({ templatesWithoutPandas: ["bare"] });
    const failure = startOn(fake, { template: "bare" });
    await expect(failure).rejects.toBeInstanceOf(E2BTemplateError);
    await expect(failure).rejects.toThrow(/template bare .*cannot run python3 with pandas/);
    await expect(failure).rejects.toThrow(/E2B_TEMPLATE/);
    expect(fake.creates).toHaveLength(1);
    expect(fake.alive).toEqual([]);
  });

  it("replaces a sandbox that died between requests", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1 });
    expect((await sandbox.execute({ code: "print(1)", tables: [medals] })).stdout).toBe("1\n");
    fake.sandboxes[0]?.die();
    const result = await sandbox.execute({ code: "print(len(df))", tables: [medals] });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe("4\n");
    expect(fake.creates).toHaveLength(2);
    // The fresh sandbox got the table too.
    expect(fake.sandboxes[1]?.uploads).toContain(
      `/home/user/tableminds/tables/${medals.sha256}.csv`,
    );
    expect(sandbox.sandboxIds).toEqual(["fake-1"]);
  });

  it("counts a sandbox's life from its creation, not from when it was ready", async () => {
    // Each call takes 600 ms: a sandbox is ready about 1.8 s after E2B created it.
    const fake = fakeE2B({ latencyMs: 600 });
    const sandbox = await startOn(fake, {
      poolSize: 1,
      sandboxTimeoutMs: 4_000,
      lifetimeMarginMs: 200,
      graceMs: 1_500,
    });
    const first = fake.sandboxes[0];
    // 2 s of life left by E2B's count; counted from readiness it would look like 3.8 s or
    // more, enough for the 2.9 s this run needs (1200 + 1500 + 200) without an extension,
    // and the sandbox would die under it (the run takes about 3 s with the latency).
    await sleepUntil((first?.createdAt ?? 0) + 2_000);
    const result = await sandbox.execute({
      code: "import time\ntime.sleep(0.5)\nprint('done')",
      tables: [],
      timeoutMs: 1_200,
    });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe("done\n");
    expect(first?.lifetimes.length ?? 0).toBeGreaterThan(0);
    expect(fake.creates).toHaveLength(1);
  });

  it("rotates a sandbox near the plan's maximum lifetime, and never asks E2B for more", async () => {
    const fake = fakeE2B({ maxLifetimeMs: 6_000 });
    const opts = {
      maxLifetimeMs: 6_000,
      sandboxTimeoutMs: 5_000,
      lifetimeMarginMs: 200,
      graceMs: 2_000,
    };
    const sandbox = await startOn(fake, { poolSize: 1, ...opts });
    await sleepUntil((fake.sandboxes[0]?.createdAt ?? 0) + 3_500);
    // 2.5 s left before E2B kills it whatever we ask; this run needs 1000 + 2000 + 200.
    const result = await sandbox.execute({
      code: "print('rotated')",
      tables: [],
      timeoutMs: 1_000,
    });
    expect(result.stdout).toBe("rotated\n");
    expect(fake.creates).toHaveLength(2);
    expect(fake.sandboxes[0]?.deathCause).toBe("killed");
    // No extension ever went past the maximum (the fake refuses those).
    for (const s of fake.sandboxes) {
      for (const lifetime of s.lifetimes) expect(lifetime).toBeLessThanOrEqual(6_000);
    }
  });

  it("refuses at once a timeout longer than a sandbox can live, with the reason", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1, maxLifetimeMs: 10 * 60_000 });
    const result = await sandbox.execute({ code: "print(1)", tables: [], timeoutMs: 20 * 60_000 });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("Timeout");
    expect(result.error?.message).toMatch(/lives at most 600000 ms .*maximum lifetime/);
    expect(fake.creates).toHaveLength(1);
    expect(fake.sandboxes[0]?.commandsRun.some((c) => c.includes("e2b_runner"))).toBe(false);
  });

  it("retries a request once on a fresh sandbox when its sandbox dies mid-run", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1 });
    fake.faults.dieDuringCommands = { match: /runner\.py/, times: 1 };
    const result = await sandbox.execute({
      code: "import time\ntime.sleep(0.5)\nprint('second try')",
      tables: [],
    });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe("second try\n");
    expect(fake.creates).toHaveLength(2);
    expect(fake.sandboxes[0]?.dead).toBe(true);
  });

  it("reports a SandboxError when the retry's sandbox dies too", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1 });
    fake.faults.dieDuringCommands = { match: /runner\.py/, times: 2 };
    const result = await sandbox.execute({ code: "import time\ntime.sleep(1)", tables: [] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("SandboxError");
    expect(result.error?.message).toMatch(/lost .*retry failed too/);
    expect((await sandbox.execute({ code: "print('again')", tables: [] })).stdout).toBe("again\n");
  });

  it("turns a command timeout into a Timeout error, and the pool keeps working", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1, graceMs: 200 });
    fake.faults.stallCommands = /runner\.py/;
    const started = Date.now();
    const result = await sandbox.execute({ code: "print(1)", tables: [], timeoutMs: 300 });
    expect(result.ok).toBe(false);
    expect(result.error).toEqual({
      type: "Timeout",
      message: "execution exceeded 300 ms",
      line: null,
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    // Whatever the overrun left behind goes with its sandbox.
    expect(fake.sandboxes[0]?.dead).toBe(true);

    fake.faults.stallCommands = undefined;
    const next = await sandbox.execute({ code: "print(6 * 7)", tables: [] });
    expect(next.stdout).toBe("42\n");
  });

  it("never hangs on an SDK call that never settles", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { poolSize: 1, requestTimeoutMs: 300 });
    fake.faults.hangReads = /result\.json$/;
    const started = Date.now();
    const result = await sandbox.execute({ code: "print(1)", tables: [] });
    expect(result.error?.type).toBe("SandboxError");
    expect(result.error?.message).toMatch(/reading the result did not finish within 30\d ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("reads the API key, domain and template from the environment", async () => {
    const saved = {
      key: process.env.E2B_API_KEY,
      domain: process.env.E2B_DOMAIN,
      template: process.env.E2B_TEMPLATE,
    };
    process.env.E2B_API_KEY = "env-key";
    process.env.E2B_DOMAIN = "e2b.internal.example";
    process.env.E2B_TEMPLATE = "tables-py";
    try {
      const fake = fakeE2B();
      // Port 1 of loopback: the network check in info() stays on this machine.
      const networkProbe = { host: "127.0.0.1", port: 1 };
      const sandbox = await E2BSandbox.start({ sdk: fake, networkProbe });
      opened.push(sandbox);
      expect(fake.creates[0]?.options).toMatchObject({
        apiKey: "env-key",
        domain: "e2b.internal.example",
        template: "tables-py",
      });
      expect((await sandbox.info()).runtime).toMatch(/template tables-py/);
    } finally {
      restore("E2B_API_KEY", saved.key);
      restore("E2B_DOMAIN", saved.domain);
      restore("E2B_TEMPLATE", saved.template);
    }
  });

  it("says to set E2B_API_KEY when there is no key", async () => {
    const saved = process.env.E2B_API_KEY;
    delete process.env.E2B_API_KEY;
    try {
      const fake = fakeE2B();
      const failure = E2BSandbox.start({ sdk: fake });
      await expect(failure).rejects.toBeInstanceOf(E2BConfigError);
      await expect(failure).rejects.toThrow(/set E2B_API_KEY \(and E2B_DOMAIN for a self-hosted/);
      expect(fake.creates).toHaveLength(0);
    } finally {
      restore("E2B_API_KEY", saved);
    }
  });
});

/** A clock whose sleeps return at once and move time on; it keeps what was slept. */
function fakeClock() {
  let offset = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => Date.now() + offset,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      offset += ms;
    },
  };
}

async function sleepUntil(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
