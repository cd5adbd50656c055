import { writeFile } from "node:fs/promises";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { E2BSandbox, type E2BSandboxOptions } from "../../sandbox/e2b.js";
import { putArtifact } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";
import { FakeE2B } from "../support/fake-e2b.js";
import { medalsRef } from "../support/table-fixtures.js";
import { eventually } from "./hostile/procfs.js";

/** What E2B does that the backend must cope with, as the fake reproduces it. */
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
    poolSize: 1,
    networkProbe: { host: "1.1.1.1", port: 80, answerMs: 300 },
    ...opts,
  });
  opened.push(sandbox);
  return sandbox;
}

async function tableOf(name: string, csv: string): Promise<TableRef> {
  const { sha256, uri } = await putArtifact(csv, "csv");
  return {
    id: `table:${name}`,
    name,
    uri,
    sha256,
    rows: csv.split("\n").length - 2,
    columns: [{ name: "x", dtype: "object" }],
  };
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

describe("the fake behaves like E2B", () => {
  it("runs a login bash; a timeout kills the shell only; a killed shell exits with -1", async () => {
    const fake = fakeE2B();
    const sandbox = await fake.create({
      apiKey: "k",
      template: "code-interpreter-v1",
      timeoutMs: 60_000,
      requestTimeoutMs: 1_000,
      allowInternetAccess: false,
      metadata: {},
    });
    await expect(
      sandbox.commands.run("shopt -q login_shell && echo login", { timeoutMs: 5_000 }),
    ).resolves.toMatchObject({ stdout: "login\n" });
    await expect(sandbox.commands.run("kill -9 $$", { timeoutMs: 5_000 })).rejects.toMatchObject({
      exitCode: -1,
    });
    const pidFile = `${fake.sandboxes[0]?.home}/child.pid`;
    await expect(
      sandbox.commands.run(`sleep 30 & echo $! > ${pidFile}; wait`, { timeoutMs: 300 }),
    ).rejects.toThrow(/deadline_exceeded/);
    const { readFile } = await import("node:fs/promises");
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(() => process.kill(pid, 0)).not.toThrow();
    await sandbox.kill();
    expect(await eventually(() => !alive(pid), 3_000)).toBe(true);
  });

  it("expires a sandbox at its timeout from creation; the SDK's default template has no pandas", async () => {
    const fake = fakeE2B();
    const options = {
      apiKey: "k",
      template: "",
      timeoutMs: 300,
      requestTimeoutMs: 1_000,
      allowInternetAccess: false,
      metadata: {},
    };
    const sandbox = await fake.create(options);
    await expect(
      sandbox.commands.run("python3 -c 'import pandas'", { timeoutMs: 5_000 }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(/No module named 'pandas'/) });
    expect(await eventually(() => fake.sandboxes[0]?.deathCause === "expired", 3_000)).toBe(true);
    await expect(sandbox.setTimeout(1_000)).rejects.toThrow(/not found/);
  });
});

describe("the E2B backend against the fake's model of E2B", () => {
  it("defaults to a template with pandas", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake);
    expect(fake.creates[0]?.options.template).toBe("code-interpreter-v1");
    const { details } = await sandbox.describe();
    expect(details.template).toMatch(/code-interpreter-v1 \(the default: .*pandas/);
  });

  it("installs the audit hook in E2B too: no sockets, no processes", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake);
    for (const code of [
      "import socket\nsocket.create_connection(('1.1.1.1', 80), 2)",
      "import subprocess\nsubprocess.run(['true'])",
      "import os\nos.fork()",
    ]) {
      const result = await sandbox.execute({ code, tables: [] });
      expect(result.error?.type).toBe("PermissionError");
      expect(result.error?.message).toMatch(/^sandbox: /);
    }
  });

  it("compresses large uploads and scales their deadline with their size", async () => {
    // 200 KB/s on the wire; a fixed 300 ms deadline would cut off any upload over 60 KB.
    const fake = fakeE2B({ bytesPerSecond: 200_000 });
    const sandbox = await startOn(fake, {
      requestTimeoutMs: 300,
      minBytesPerSecond: 100_000,
      gzipMinBytes: 1_000_000,
    });
    const rows = Array.from({ length: 12_000 }, (_, i) => `${(i * 7919) % 100_003}`);
    const big = await tableOf("big", `x\n${rows.join("\n")}\n`);
    const plain = await sandbox.execute({ code: "print(len(df))", tables: [big] });
    expect(plain.stdout).toBe("12000\n");
    const upload = fake.sandboxes[0]?.transfers.find((t) => t.path.endsWith(`${big.sha256}.csv`));
    expect(upload).toMatchObject({ gzip: false, aborted: false });
    expect(upload?.bytes).toBeGreaterThan(60_000);

    const zipped = await startOn(fake, { requestTimeoutMs: 300, gzipMinBytes: 10_000 });
    await zipped.execute({ code: "print(len(df))", tables: [big] });
    const sent = fake.sandboxes.at(-1)?.transfers.find((t) => t.path.endsWith(`${big.sha256}.csv`));
    expect(sent?.gzip).toBe(true);
    expect(sent?.bytes).toBeLessThan(upload?.bytes ?? 0);
  });

  it("aborts an upload in the SDK at its deadline", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, {
      requestTimeoutMs: 200,
      minBytesPerSecond: 1_000_000,
      startRetries: 0,
    });
    fake.faults.bytesPerSecond = 1_000;
    const table = await tableOf("slow", `x\n${"1\n".repeat(5_000)}`);
    const result = await sandbox.execute({ code: "print(1)", tables: [table] });
    expect(result.ok).toBe(false);
    expect(result.error?.message).toMatch(/uploading table slow did not finish within 2\d\d ms/);
    const aborted = fake.sandboxes.flatMap((s) => s.transfers).filter((t) => t.aborted);
    expect(aborted.length).toBeGreaterThan(0);
  });

  it("notices a runner or table rewritten in the sandbox, and runs on a fresh one", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake);
    expect((await sandbox.execute({ code: "print(len(df))", tables: [medals] })).stdout).toBe(
      "4\n",
    );
    const first = fake.sandboxes[0];
    // What code run with sudo could do between two requests.
    await writeFile(
      `${first?.home}/tableminds/tables/${medals.sha256}.csv`,
      "nation,gold\nForged,1\n",
    );
    const result = await sandbox.execute({ code: "print(len(df))", tables: [medals] });
    expect(result.stdout).toBe("4\n");
    expect(first?.dead).toBe(true);
    expect(fake.creates).toHaveLength(2);
  });

  it("gives each request a sandbox of its own when asked, and says so", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake, { sandboxPerRequest: true });
    for (const n of [1, 2]) {
      expect((await sandbox.execute({ code: `print(${n})`, tables: [] })).stdout).toBe(`${n}\n`);
    }
    // The warm-up's sandbox, one per request, and one for describe().
    const { info } = await sandbox.describe();
    expect(fake.creates).toHaveLength(4);
    expect(info.protections.isolatedVm).toBe(true);
    expect(fake.alive).toHaveLength(0);
    const pooled = await startOn(fakeE2B());
    expect((await pooled.info()).protections.isolatedVm).toBe(false);
  });

  it("sets the memory limit below the VM's memory, and reports an OOM kill as a memory error", async () => {
    const fake = fakeE2B({ vmMemoryMb: 1_024 });
    const sandbox = await startOn(fake, { memoryReserveMb: 256 });
    const hog = await sandbox.execute({
      code: "x = bytearray(900 * 1024 * 1024)\nprint(len(x))",
      tables: [],
      memoryMb: 4_096,
    });
    expect(hog.error?.type).toBe("MemoryError");
    expect(fake.sandboxes[0]?.commandsRun.at(-2)).toContain(`ulimit -v ${768 * 1024}`);
    const { info, details } = await sandbox.describe();
    expect(details.vmMemoryMb).toBe(1_024);
    expect(info.protections.memoryLimit).toBe(true);

    fake.faults.oomKillCommands = /e2b_runner/;
    const killed = await sandbox.execute({ code: "import time\ntime.sleep(2)", tables: [] });
    expect(killed.error?.type).toBe("MemoryError");
    expect(killed.error?.message).toMatch(/signal 9.*out-of-memory killer \(the VM has 1024 MB\)/);
  });

  it("explains a shell that E2B reports killed (-1), and does not reuse its sandbox", async () => {
    const fake = fakeE2B();
    const sandbox = await startOn(fake);
    fake.faults.killShellCommands = /e2b_runner/;
    const result = await sandbox.execute({ code: "import time\ntime.sleep(0.6)", tables: [] });
    expect(result.error?.type).toBe("Crashed");
    expect(result.error?.message).toMatch(/exit -1/);
    fake.faults.killShellCommands = undefined;
    expect(await eventually(() => fake.sandboxes[0]?.dead === true, 3_000)).toBe(true);
    expect((await sandbox.execute({ code: "print(2)", tables: [] })).stdout).toBe("2\n");
  });

  it("kills at close a sandbox whose create answer never came, found by its metadata", async () => {
    const fake = fakeE2B({ loseCreateResponses: 1 });
    const sandbox = await startOn(fake, { createTimeoutMs: 300 });
    expect(fake.sandboxes).toHaveLength(2);
    const lost = fake.sandboxes[0];
    expect(lost?.dead).toBe(false);
    expect(lost?.metadata.pool).toBeDefined();
    await sandbox.close();
    expect(lost?.deathCause).toBe("killed");
    expect(fake.alive).toHaveLength(0);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
