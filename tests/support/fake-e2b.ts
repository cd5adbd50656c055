import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  CommandExitError,
  FileNotFoundError,
  SandboxError,
  SandboxNotFoundError,
  TimeoutError,
} from "e2b";
import type {
  E2BCommandOutput,
  E2BCreateOptions,
  E2BRemoteSandbox,
  E2BRunOptions,
  E2BSdk,
} from "../../tools/sandbox/e2b-sdk.js";

/** The Python that fake sandboxes run as `python3` (it has pandas on this machine). */
const HOST_PYTHON = "/usr/bin/python3";
/** Output of a fake command kept in memory, like a bounded SDK buffer. */
const MAX_CAPTURE_CHARS = 1_000_000;
/** How long into a doomed command its sandbox dies. */
const DEATH_DELAY_MS = 150;

// The messages are the ones the real SDK builds for the same situations.
const deadlineExceeded = () =>
  new TimeoutError(
    "[deadline_exceeded] context deadline exceeded: This error is likely due to exceeding " +
      "'timeoutMs' — the total time a long running request (like command execution or " +
      "directory watch) can be active. It can be modified by passing 'timeoutMs' when making " +
      "the request. Use '0' to disable the timeout.",
  );
const sandboxTimedOut = (what: string) =>
  new TimeoutError(
    `${what}: This error is likely due to sandbox timeout. You can modify the sandbox timeout ` +
      "by passing 'timeoutMs' when starting the sandbox or calling '.setTimeout' on the " +
      "sandbox with the desired timeout.",
  );

/** Faults a test can switch on (and off) at any time. */
export interface FakeE2BFaults {
  /** The first `failCreates` calls to create throw `createError()`. */
  failCreates: number;
  createError: () => Error;
  /** Delay of each create call, by call index (0-based); a missing entry is no delay. */
  createDelaysMs: number[];
  /** Templates whose python3 cannot import pandas. */
  templatesWithoutPandas: string[];
  /** kill() throws. */
  failKills: boolean;
  /** Commands matching this never finish on their own: only their timeout ends them. */
  stallCommands?: RegExp;
  /** The sandbox running a command matching `match` dies while it runs, `times` times. */
  dieDuringCommands?: { match: RegExp; times: number };
  /** files.read of a matching path never settles. */
  hangReads?: RegExp;
}

/**
 * A stand-in for the `e2b` SDK that runs sandboxes on this machine: each fake sandbox
 * is a temporary directory standing for its filesystem root (its /home/user is
 * `<root>/home/user`), and commands run there with `/bin/sh -c`, with `python3` being
 * the host's Python. It throws the SDK's own error classes where the SDK would, and
 * records what it was asked to do.
 */
export class FakeE2B implements E2BSdk {
  /** Every create call, failed ones included, with when it was made. */
  readonly creates: { options: E2BCreateOptions; at: number }[] = [];
  /** Every sandbox made, in order. */
  readonly sandboxes: FakeSandbox[] = [];
  readonly faults: FakeE2BFaults;
  private readonly base: string;
  readonly binDir: string;
  readonly noPandasDir: string;

  constructor(faults: Partial<FakeE2BFaults> = {}) {
    this.faults = {
      failCreates: 0,
      createError: () => new SandboxError("500: internal error while placing the sandbox"),
      createDelaysMs: [],
      templatesWithoutPandas: [],
      failKills: false,
      ...faults,
    };
    this.base = mkdtempSync(path.join(os.tmpdir(), "tableminds-fake-e2b-"));
    this.binDir = path.join(this.base, "bin");
    mkdirSync(this.binDir);
    symlinkSync(HOST_PYTHON, path.join(this.binDir, "python3"));
    this.noPandasDir = path.join(this.base, "no-pandas");
    mkdirSync(this.noPandasDir);
    writeFileSync(
      path.join(this.noPandasDir, "pandas.py"),
      "raise ModuleNotFoundError(\"No module named 'pandas'\")\n",
    );
  }

  async create(options: E2BCreateOptions): Promise<E2BRemoteSandbox> {
    const index = this.creates.length;
    this.creates.push({ options, at: Date.now() });
    const delay = this.faults.createDelaysMs[index] ?? 0;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if (index < this.faults.failCreates) throw this.faults.createError();
    const withoutPandas =
      options.template !== undefined &&
      this.faults.templatesWithoutPandas.includes(options.template);
    const sandbox = new FakeSandbox(this, `fake-${index}`, withoutPandas);
    this.sandboxes.push(sandbox);
    return sandbox;
  }

  /** Sandboxes not killed (by kill() or by a fault). */
  get alive(): FakeSandbox[] {
    return this.sandboxes.filter((sandbox) => !sandbox.dead);
  }

  /** Kills what is left and removes every fake filesystem. */
  cleanup(): void {
    for (const sandbox of this.sandboxes) sandbox.die();
    rmSync(this.base, { recursive: true, force: true });
  }

  newRoot(): string {
    return mkdtempSync(path.join(this.base, "root-"));
  }
}

export class FakeSandbox implements E2BRemoteSandbox {
  readonly root: string;
  readonly home: string;
  /** Sandbox paths written by files.write, in order. */
  readonly uploads: string[] = [];
  /** Commands run, in order. */
  readonly commandsRun: string[] = [];
  /** Lifetimes asked for with setTimeout. */
  readonly lifetimes: number[] = [];
  killCalls = 0;
  dead = false;
  private readonly running = new Map<ChildProcess, (error: Error) => void>();

  readonly files = {
    write: (target: string, data: string | Uint8Array) => this.write(target, data),
    read: (target: string) => this.read(target),
  };
  readonly commands = {
    run: (command: string, options: E2BRunOptions) => this.run(command, options),
  };

  constructor(
    private readonly sdk: FakeE2B,
    readonly sandboxId: string,
    private readonly withoutPandas: boolean,
  ) {
    this.root = sdk.newRoot();
    this.home = path.join(this.root, "home", "user");
    mkdirSync(this.home, { recursive: true });
  }

  /** A sandbox path on the host; paths already inside the root are taken as they are. */
  hostPath(target: string): string {
    if (!path.isAbsolute(target)) return path.join(this.home, target);
    if (target === this.root || target.startsWith(`${this.root}/`)) return target;
    return path.join(this.root, target);
  }

  /** A host path as the sandbox sees it. */
  sandboxPath(host: string): string {
    return host.startsWith(`${this.root}/`) ? host.slice(this.root.length) : host;
  }

  async setTimeout(timeoutMs: number): Promise<void> {
    this.checkAlive();
    this.lifetimes.push(timeoutMs);
  }

  async kill(): Promise<boolean> {
    this.killCalls += 1;
    if (this.sdk.faults.failKills) throw new SandboxError("500: could not kill the sandbox");
    if (this.dead) return false;
    this.die();
    return true;
  }

  /** The sandbox stops: what runs in it is killed, and every later call fails. */
  die(): void {
    this.dead = true;
    for (const [child, fail] of this.running) {
      killGroup(child);
      fail(sandboxTimedOut("[unavailable] the sandbox is not running"));
    }
    this.running.clear();
  }

  private checkAlive(): void {
    if (this.dead) throw new SandboxNotFoundError(`Sandbox ${this.sandboxId} not found`);
  }

  private async write(target: string, data: string | Uint8Array): Promise<void> {
    if (this.dead) throw sandboxTimedOut("502: The sandbox is not running");
    const host = this.hostPath(target);
    await mkdir(path.dirname(host), { recursive: true });
    await writeFile(host, data);
    this.uploads.push(this.sandboxPath(host));
  }

  private async read(target: string): Promise<Uint8Array> {
    if (this.dead) throw sandboxTimedOut("502: The sandbox is not running");
    if (this.sdk.faults.hangReads?.test(target)) return new Promise(() => {});
    try {
      return new Uint8Array(await readFile(this.hostPath(target)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        throw new FileNotFoundError(`path '${target}' does not exist`);
      }
      throw error;
    }
  }

  private run(command: string, options: E2BRunOptions): Promise<E2BCommandOutput> {
    if (this.dead) {
      return Promise.reject(new SandboxNotFoundError("Sandbox is probably not running anymore"));
    }
    this.commandsRun.push(command);
    const faults = this.sdk.faults;
    const stalled = faults.stallCommands?.test(command) ?? false;
    const env: NodeJS.ProcessEnv = {
      PATH: `${this.sdk.binDir}:/usr/local/bin:/usr/bin:/bin`,
      HOME: this.home,
      LANG: "C.UTF-8",
      ...options.envs,
    };
    if (this.withoutPandas) env.PYTHONPATH = this.sdk.noPandasDir;
    const child = spawn("/bin/sh", ["-c", stalled ? "sleep 3600" : command], {
      cwd: this.hostPath(options.cwd ?? this.home),
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new Promise((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      let settled = false;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(death);
        this.running.delete(child);
        settle();
      };
      const fail = (error: Error) => finish(() => reject(error));
      this.running.set(child, fail);
      child.stdout?.setEncoding("utf8");
      child.stderr?.setEncoding("utf8");
      child.stdout?.on("data", (chunk: string) => {
        if (stdout.length < MAX_CAPTURE_CHARS) stdout += chunk;
      });
      child.stderr?.on("data", (chunk: string) => {
        if (stderr.length < MAX_CAPTURE_CHARS) stderr += chunk;
      });
      const deadline = setTimeout(() => {
        killGroup(child);
        fail(deadlineExceeded());
      }, options.timeoutMs);
      let death: NodeJS.Timeout | undefined;
      const doom = faults.dieDuringCommands;
      if (doom && doom.times > 0 && doom.match.test(command)) {
        doom.times -= 1;
        death = setTimeout(() => this.die(), DEATH_DELAY_MS);
      }
      child.on("error", fail);
      child.on("close", (code, signal) => {
        const exitCode = code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);
        const result = { exitCode, stdout, stderr };
        if (exitCode === 0) finish(() => resolve(result));
        else fail(new CommandExitError({ ...result, error: `exit status ${exitCode}` }));
      });
    });
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}
