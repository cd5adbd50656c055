/**
 * Kills the E2B sandboxes this process created, whatever way it ends. The real SDK's
 * adapter records each sandbox it creates and each pool whose creates may have left one
 * behind (a create given up on can still finish in E2B: those are found by their
 * metadata). On `exit` (process.exit included, e.g. a second Ctrl-C) the leftovers are
 * handed to a detached Node process, since nothing asynchronous runs after `exit`.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Sandbox as CloudSandbox } from "e2b";
import type { E2BConnection } from "./e2b-sdk.js";

interface Account {
  connection: E2BConnection;
  ids: Set<string>;
  /** Metadata values of `pool` whose sandboxes are found by listing. */
  pools: Set<string>;
}

const accounts = new Map<string, Account>();
const owner = new Map<string, string>();
let hooksInstalled = false;

function keyOf(connection: E2BConnection): string {
  return JSON.stringify([
    connection.apiKey,
    connection.domain ?? "",
    connection.apiUrl ?? "",
    connection.sandboxUrl ?? "",
  ]);
}

function accountOf(connection: E2BConnection): Account {
  const key = keyOf(connection);
  let account = accounts.get(key);
  if (!account) {
    account = { connection, ids: new Set(), pools: new Set() };
    accounts.set(key, account);
  }
  installE2BExitHooks();
  return account;
}

export function rememberSandbox(connection: E2BConnection, sandboxId: string): void {
  accountOf(connection).ids.add(sandboxId);
  owner.set(sandboxId, keyOf(connection));
}

export function forgetSandbox(sandboxId: string): void {
  const key = owner.get(sandboxId);
  if (key !== undefined) accounts.get(key)?.ids.delete(sandboxId);
  owner.delete(sandboxId);
}

/** A pool's create may have left a sandbox nobody knows of: list its metadata at the end. */
export function rememberPool(connection: E2BConnection, pool: string): void {
  accountOf(connection).pools.add(pool);
}

export function forgetPool(connection: E2BConnection, pool: string): void {
  accounts.get(keyOf(connection))?.pools.delete(pool);
}

/** What is left to kill: sandbox ids, and pools to list. */
export function leftovers(): { connection: E2BConnection; ids: string[]; pools: string[] }[] {
  return [...accounts.values()]
    .filter((account) => account.ids.size > 0 || account.pools.size > 0)
    .map((account) => ({
      connection: account.connection,
      ids: [...account.ids],
      pools: [...account.pools],
    }));
}

/**
 * Kills, from this process, every sandbox the E2B backend created and has not killed,
 * and every sandbox listed under a pool whose creates were given up on. For a CLI's
 * own exit path: `await killCreatedE2BSandboxes()` before exiting. Never throws.
 */
export async function killCreatedE2BSandboxes(): Promise<{ killed: string[]; failures: string[] }> {
  const killed: string[] = [];
  const failures: string[] = [];
  for (const { connection, ids, pools } of leftovers()) {
    const opts = { ...connection };
    const found = new Set(ids);
    for (const pool of pools) {
      try {
        const paginator = CloudSandbox.list({ ...opts, query: { metadata: { pool } } });
        while (paginator.hasNext) {
          for (const sandbox of await paginator.nextItems()) found.add(sandbox.sandboxId);
        }
        forgetPool(connection, pool);
      } catch (error) {
        failures.push(`listing pool ${pool}: ${String(error)}`);
      }
    }
    await Promise.all(
      [...found].map(async (id) => {
        try {
          await CloudSandbox.kill(id, opts);
          killed.push(id);
          forgetSandbox(id);
        } catch (error) {
          failures.push(`killing ${id}: ${String(error)}`);
        }
      }),
    );
  }
  return { killed, failures };
}

/** The detached killer: plain JavaScript, so that it needs nothing but Node and the SDK. */
const REAPER_SCRIPT = `
const { Sandbox } = await import(process.env.TABLEMINDS_E2B_SDK);
const work = JSON.parse(process.env.TABLEMINDS_E2B_REAP);
for (const { connection, ids, pools } of work) {
  const found = new Set(ids);
  for (const pool of pools) {
    try {
      const pages = Sandbox.list({ ...connection, query: { metadata: { pool } } });
      while (pages.hasNext) for (const s of await pages.nextItems()) found.add(s.sandboxId);
    } catch {}
  }
  await Promise.allSettled([...found].map((id) => Sandbox.kill(id, connection)));
}
`;

/**
 * Hands the leftovers to a detached Node process that outlives this one; returns it
 * (or undefined when there is nothing to kill). Synchronous, so it can run on `exit`.
 */
export function spawnReaper(env: NodeJS.ProcessEnv = {}): ReturnType<typeof spawn> | undefined {
  const work = leftovers();
  if (work.length === 0) return undefined;
  const sdkPath = createRequire(import.meta.url).resolve("e2b");
  const child = spawn(process.execPath, ["--input-type=module", "-e", REAPER_SCRIPT], {
    detached: true,
    stdio: "ignore",
    env: {
      PATH: process.env.PATH ?? "",
      ...env,
      TABLEMINDS_E2B_SDK: pathToFileURL(sdkPath).href,
      // The key goes in the environment, not on the command line where `ps` shows it.
      TABLEMINDS_E2B_REAP: JSON.stringify(work),
    },
  });
  child.unref();
  for (const { connection, ids, pools } of work) {
    for (const id of ids) forgetSandbox(id);
    for (const pool of pools) forgetPool(connection, pool);
  }
  return child;
}

const EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = {
  SIGINT: 130,
  SIGTERM: 143,
  SIGHUP: 129,
};

/**
 * Registers, once, a process `exit` hook that spawns the reaper, and SIGINT/SIGTERM/SIGHUP
 * listeners that exit (so that `exit` runs) only when no other listener handles the
 * signal: a CLI's own Ctrl-C handling stays as it is. Called on the first E2B create.
 */
export function installE2BExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", () => {
    spawnReaper();
  });
  for (const [signal, code] of Object.entries(EXIT_CODES) as [NodeJS.Signals, number][]) {
    const onSignal = () => {
      if (process.listenerCount(signal) === 1) process.exit(code);
    };
    process.on(signal, onSignal);
  }
}
