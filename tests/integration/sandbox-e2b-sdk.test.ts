import { CommandExitError, FileNotFoundError } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killCreatedE2BSandboxes, leftovers, spawnReaper } from "../../sandbox/e2b-reaper.js";
import { cloudE2BSdk, type E2BCreateOptions } from "../../sandbox/e2b-sdk.js";
import { E2BApiServer } from "../support/e2b-api-server.js";
import { eventually } from "./hostile/procfs.js";

/** The thin adapter over the real `e2b` SDK, against a local server that speaks E2B's API. */
describe("the E2B SDK adapter, against a local E2B API", () => {
  let server: E2BApiServer;
  let options: E2BCreateOptions;

  beforeAll(async () => {
    server = await new E2BApiServer().start(60_000);
    options = {
      apiKey: "e2b_local_key",
      apiUrl: server.url,
      sandboxUrl: server.url,
      template: "code-interpreter-v1",
      timeoutMs: 300_000,
      requestTimeoutMs: 5_000,
      allowInternetAccess: false,
      metadata: { app: "tableminds", pool: "pool-a" },
    };
  });

  afterAll(async () => {
    await killCreatedE2BSandboxes();
    await server.stop();
  });

  it("creates, uploads, runs, reads, extends and kills a sandbox", async () => {
    const sandbox = await cloudE2BSdk.create(options);
    const made = server.sandboxes.get(sandbox.sandboxId);
    expect(made).toMatchObject({ template: "code-interpreter-v1", timeoutSeconds: [300] });
    expect(made?.metadata).toEqual({ app: "tableminds", pool: "pool-a" });
    expect(server.calls[0]).toMatchObject({
      method: "POST",
      path: "/v2/sandboxes",
      apiKey: "e2b_local_key",
    });

    await sandbox.files.write("/home/user/a/plain.txt", "hello\n", { timeoutMs: 5_000 });
    const big = "x,y\n".repeat(50_000);
    await sandbox.files.write("/home/user/a/big.csv", Buffer.from(big), {
      timeoutMs: 5_000,
      gzip: true,
    });
    expect(server.calls.some((c) => c.path === "/files" && c.gzip)).toBe(true);

    const out = await sandbox.commands.run("cat a/plain.txt; wc -l < a/big.csv; echo err >&2", {
      timeoutMs: 5_000,
      envs: { X: "1" },
    });
    expect(out).toMatchObject({ exitCode: 0, stdout: "hello\n50000\n", stderr: "err\n" });
    const failed = sandbox.commands.run("echo partial; exit 3", { timeoutMs: 5_000 });
    await expect(failed).rejects.toBeInstanceOf(CommandExitError);
    await expect(failed).rejects.toMatchObject({ exitCode: 3, stdout: "partial\n" });
    // The SDK runs a login bash, as E2B does.
    await expect(
      sandbox.commands.run("shopt -q login_shell && echo login", { timeoutMs: 5_000 }),
    ).resolves.toMatchObject({ stdout: "login\n" });

    const read = await sandbox.files.read("/home/user/a/big.csv", { timeoutMs: 5_000, gzip: true });
    expect(Buffer.from(read).toString()).toBe(big);
    await expect(
      sandbox.files.read("/home/user/missing", { timeoutMs: 5_000 }),
    ).rejects.toBeInstanceOf(FileNotFoundError);

    await sandbox.setTimeout(120_000);
    expect(made?.timeoutSeconds).toEqual([300, 120]);

    const abort = new AbortController();
    abort.abort(new Error("stop"));
    await expect(
      sandbox.files.write("/home/user/x", "y", { timeoutMs: 5_000, signal: abort.signal }),
    ).rejects.toThrow();

    expect(await cloudE2BSdk.list(options, { pool: "pool-a" })).toContain(sandbox.sandboxId);
    await sandbox.kill();
    expect(made?.alive).toBe(false);
    expect(await cloudE2BSdk.list(options, { pool: "pool-a" })).not.toContain(sandbox.sandboxId);
    expect(await cloudE2BSdk.killById(options, sandbox.sandboxId)).toBe(false);
  });

  it("kills what this process created on the way out, by id and by its pool's metadata", async () => {
    const kept = await cloudE2BSdk.create({ ...options, metadata: { pool: "pool-b" } });
    expect(leftovers().some((l) => l.ids.includes(kept.sandboxId))).toBe(true);
    // A sandbox of the same pool whose create answer never reached us.
    const orphan = await cloudE2BSdk.create({ ...options, metadata: { pool: "pool-b" } });
    const { forgetSandbox } = await import("../../sandbox/e2b-reaper.js");
    forgetSandbox(orphan.sandboxId);

    const { killed } = await killCreatedE2BSandboxes();
    expect(killed).toEqual(expect.arrayContaining([kept.sandboxId, orphan.sandboxId]));
    expect(server.sandboxes.get(kept.sandboxId)?.alive).toBe(false);
    expect(server.sandboxes.get(orphan.sandboxId)?.alive).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it("hands leftovers to a detached process that kills them after this one has gone", async () => {
    const sandbox = await cloudE2BSdk.create({ ...options, metadata: { pool: "pool-c" } });
    const reaper = spawnReaper();
    expect(reaper?.pid).toBeGreaterThan(0);
    // Taken off the list at once: the exit hook finds nothing more to do.
    expect(leftovers()).toEqual([]);
    expect(
      await eventually(() => server.sandboxes.get(sandbox.sandboxId)?.alive === false, 15_000),
    ).toBe(true);
  }, 20_000);
});
