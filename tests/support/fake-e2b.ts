import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import {
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  SandboxError,
  SandboxNotFoundError,
  TimeoutError,
} from "e2b";
import type {
  E2BCommandOutput,
  E2BConnection,
  E2BCreateOptions,
  E2BRemoteSandbox,
  E2BRunOptions,
  E2BSdk,
  E2BTransferOptions,
} from "../../sandbox/e2b-sdk.js";

/** The Python that fake sandboxes run as `python3` (it has pandas on this machine). */
const HOST_PYTHON = "/usr/bin/python3";
/** Output of a fake command kept in memory, like a bounded SDK buffer. */
const MAX_CAPTURE_CHARS = 1_000_000;
/** How long into a doomed command its sandbox dies. */
const DEATH_DELAY_MS = 150;
/** The SDK's default template when none is named: E2B's "base", Python without pandas. */
const SDK_DEFAULT_TEMPLATE = "base";

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

/**
 * Python started in a fake sandbox reads this first (as sitecustomize): it models the VM's
 * memory (os.sysconf) and E2B's firewall, which sends every connection that leaves the
 * machine to one of the fake's own listeners: one that accepts and never answers (internet
 * blocked, as E2B's firewall does) or one that answers HTTP (internet allowed).
 */
const SITE_CUSTOMIZE = `
import os, socket
_target = os.environ.get("FAKE_E2B_EGRESS")
if _target:
    _host, _port = _target.rsplit(":", 1)
    _connect = socket.socket.connect
    def _local(address):
        return isinstance(address, tuple) and str(address[0]).startswith(("127.", "::1", "localhost"))
    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address):
            address = (_host, int(_port))
        return _connect(self, address)
    socket.socket.connect = connect
_memory = os.environ.get("FAKE_E2B_MEMORY_MB")
if _memory:
    _sysconf = os.sysconf
    def sysconf(name):
        if name in ("SC_PHYS_PAGES", os.sysconf_names.get("SC_PHYS_PAGES")):
            return int(_memory) * 1048576 // _sysconf("SC_PAGE_SIZE")
        return _sysconf(name)
    os.sysconf = sysconf
`;

/** Faults and service behaviour a test can switch on (and off) at any time. */
export interface FakeE2BFaults {
  /** The first `failCreates` calls to create throw `createError()`. */
  failCreates: number;
  createError: () => Error;
  /** Delay of each create call, by call index (0-based); a missing entry is no delay. */
  createDelaysMs: number[];
  /** Templates whose python3 cannot import pandas (besides "base"). */
  templatesWithoutPandas: string[];
  /** kill() throws. */
  failKills: boolean;
  /** Commands matching this never finish on their own: only their timeout ends them. */
  stallCommands?: RegExp;
  /** The sandbox running a command matching `match` dies while it runs, `times` times. */
  dieDuringCommands?: { match: RegExp; times: number };
  /** files.read of a matching path never settles. */
  hangReads?: RegExp;
  /** Added to every API and envd call. */
  latencyMs: number;
  /** Transfers take bytes / this (bytes on the wire: compressed when gzip). */
  bytesPerSecond: number;
  /** The VM's memory, as Python in the sandbox sees it (default: this machine's). */
  vmMemoryMb?: number;
  /** The guest's OOM killer: the python3 of a command matching this is SIGKILLed. */
  oomKillCommands?: RegExp;
  /** The command's own shell (not its children) of a matching command is SIGKILLed after 200 ms. */
  killShellCommands?: RegExp;
  /** The next `n` creates make their sandbox, but their answer is lost: the call never settles. */
  loseCreateResponses: number;
  /** The plan's maximum sandbox lifetime, counted from creation (E2B: 1 h Hobby, 24 h Pro). */
  maxLifetimeMs: number;
}

export interface FakeTransfer {
  path: string;
  /** Bytes on the wire. */
  bytes: number;
  gzip: boolean;
  aborted: boolean;
}

/**
 * A stand-in for the `e2b` SDK that runs sandboxes on this machine, behaving like E2B
 * where it matters to the backend: each fake sandbox is a temporary directory standing
 * for its filesystem root (its /home/user is `<root>/home/user`); commands run there with
 * `bash -l -c`; a command's timeout kills its shell only (what it started runs on until
 * the sandbox dies) and a shell killed by a signal exits with -1; a sandbox dies at its
 * timeout counted from creation (or from the last setTimeout) and at the plan's maximum
 * lifetime; an unnamed template is E2B's "base" (no pandas); connections leaving the
 * machine meet a firewall that accepts and never answers unless internet access was
 * allowed; calls and transfers take time. Python is this machine's.
 */
export class FakeE2B implements E2BSdk {
  /** Every create call, failed ones included, with when it was made. */
  readonly creates: { options: E2BCreateOptions; at: number }[] = [];
  /** Every sandbox made, in order. */
  readonly sandboxes: FakeSandbox[] = [];
  readonly faults: FakeE2BFaults;
  private readonly base: string;
  readonly binDir: string;
  readonly siteDir: string;
  readonly noPandasDir: string;
  private readonly listeners: Server[] = [];
  /** host:port of the firewall (accepts, never answers) and of "the internet" (answers). */
  firewall = "";
  internet = "";

  constructor(faults: Partial<FakeE2BFaults> = {}) {
    this.faults = {
      failCreates: 0,
      createError: () => new SandboxError("500: internal error while placing the sandbox"),
      createDelaysMs: [],
      templatesWithoutPandas: [],
      failKills: false,
      latencyMs: 0,
      loseCreateResponses: 0,
      bytesPerSecond: Number.POSITIVE_INFINITY,
      maxLifetimeMs: 60 * 60_000,
      ...faults,
    };
    this.base = mkdtempSync(path.join(os.tmpdir(), "tableminds-fake-e2b-"));
    this.binDir = path.join(this.base, "bin");
    mkdirSync(this.binDir);
    symlinkSync(HOST_PYTHON, path.join(this.binDir, "python3"));
    this.siteDir = path.join(this.base, "site");
    mkdirSync(this.siteDir);
    writeFileSync(path.join(this.siteDir, "sitecustomize.py"), SITE_CUSTOMIZE);
    this.noPandasDir = path.join(this.base, "no-pandas");
    mkdirSync(this.noPandasDir);
    writeFileSync(
      path.join(this.noPandasDir, "pandas.py"),
      "raise ModuleNotFoundError(\"No module named 'pandas'\")\n",
    );
  }

  /** Starts the firewall and internet listeners (once). */
  private async network(): Promise<void> {
    if (this.firewall) return;
    const listen = async (onSocket: (socket: Socket) => void) => {
      const server = createServer(onSocket);
      this.listeners.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      server.unref();
      const address = server.address();
      return `127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    };
    // Accepted, then nothing: what E2B's firewall does to a blocked connection.
    this.firewall = await listen((socket) => {
      socket.on("error", () => undefined);
      socket.on("data", () => undefined);
      setTimeout(() => socket.destroy(), 10_000).unref();
    });
    this.internet = await listen((socket) => {
      socket.on("error", () => undefined);
      socket.once("data", () => socket.end("HTTP/1.0 301 Moved Permanently\r\n\r\n"));
    });
  }

  async create(options: E2BCreateOptions): Promise<E2BRemoteSandbox> {
    const index = this.creates.length;
    this.creates.push({ options, at: Date.now() });
    await this.network();
    const delay = (this.faults.createDelaysMs[index] ?? 0) + this.faults.latencyMs;
    if (delay > 0) await sleep(delay);
    if (index < this.faults.failCreates) throw this.faults.createError();
    if (options.timeoutMs > this.faults.maxLifetimeMs) throw lifetimeRefused(options.timeoutMs);
    const template = options.template || SDK_DEFAULT_TEMPLATE;
    const withoutPandas =
      template === SDK_DEFAULT_TEMPLATE || this.faults.templatesWithoutPandas.includes(template);
    const sandbox = new FakeSandbox(this, `fake-${index}`, {
      withoutPandas,
      timeoutMs: options.timeoutMs,
      egress: options.allowInternetAccess ? this.internet : this.firewall,
      metadata: options.metadata,
    });
    this.sandboxes.push(sandbox);
    if (this.faults.loseCreateResponses > 0) {
      this.faults.loseCreateResponses -= 1;
      return new Promise(() => {});
    }
    return sandbox;
  }

  async list(_connection: E2BConnection, metadata: Record<string, string>): Promise<string[]> {
    await sleep(this.faults.latencyMs);
    return this.alive
      .filter((s) => Object.entries(metadata).every(([k, v]) => s.metadata[k] === v))
      .map((s) => s.sandboxId);
  }

  async killById(_connection: E2BConnection, sandboxId: string): Promise<boolean> {
    const sandbox = this.sandboxes.find((s) => s.sandboxId === sandboxId);
    return sandbox ? sandbox.kill() : false;
  }

  /** Sandboxes not killed (by kill(), expiry or a fault). */
  get alive(): FakeSandbox[] {
    return this.sandboxes.filter((sandbox) => !sandbox.dead);
  }

  /** Kills what is left and removes every fake filesystem. */
  cleanup(): void {
    for (const sandbox of this.sandboxes) sandbox.die("cleanup");
    for (const server of this.listeners) server.close();
    rmSync(this.base, { recursive: true, force: true });
  }

  newRoot(): string {
    return mkdtempSync(path.join(this.base, "root-"));
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

function lifetimeRefused(ms: number): Error {
  return new InvalidArgumentError(
    `400: Timeout ${Math.round(ms / 1000)} s exceeds the maximum sandbox lifetime of the plan`,
  );
}

/** Waits `ms`, or rejects as the SDK does when `signal` aborts first. */
function transferWait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!Number.isFinite(ms) || ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

interface SandboxSetup {
  withoutPandas: boolean;
  timeoutMs: number;
  egress: string;
  metadata: Record<string, string>;
}

export class FakeSandbox implements E2BRemoteSandbox {
  readonly root: string;
  readonly home: string;
  /** Sandbox paths written by files.write, in order. */
  readonly uploads: string[] = [];
  /** Every write and read, with its size on the wire and whether it was aborted. */
  readonly transfers: FakeTransfer[] = [];
  /** Commands run, in order. */
  readonly commandsRun: string[] = [];
  /** Lifetimes asked for with setTimeout. */
  readonly lifetimes: number[] = [];
  readonly createdAt = Date.now();
  readonly metadata: Record<string, string>;
  killCalls = 0;
  dead = false;
  /** Why it died: killed, expired, max-lifetime, fault, cleanup. */
  deathCause: string | undefined;
  private readonly running = new Map<ChildProcess, (error: Error) => void>();
  /** Process groups of every command: the VM's death takes them all. */
  private readonly groups = new Set<number>();
  private expiry: NodeJS.Timeout;
  private readonly lifeEnd: NodeJS.Timeout;

  readonly files = {
    write: (target: string, data: string | Uint8Array, options: E2BTransferOptions) =>
      this.write(target, data, options),
    read: (target: string, options: E2BTransferOptions) => this.read(target, options),
  };
  readonly commands = {
    run: (command: string, options: E2BRunOptions) => this.run(command, options),
  };

  constructor(
    private readonly sdk: FakeE2B,
    readonly sandboxId: string,
    private readonly setup: SandboxSetup,
  ) {
    this.root = sdk.newRoot();
    this.home = path.join(this.root, "home", "user");
    this.metadata = setup.metadata;
    mkdirSync(this.home, { recursive: true });
    this.expiry = setTimeout(() => this.die("expired"), setup.timeoutMs);
    this.lifeEnd = setTimeout(() => this.die("max-lifetime"), sdk.faults.maxLifetimeMs);
    this.expiry.unref();
    this.lifeEnd.unref();
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
    await sleep(this.sdk.faults.latencyMs);
    this.checkAlive();
    if (Date.now() + timeoutMs > this.createdAt + this.sdk.faults.maxLifetimeMs) {
      throw lifetimeRefused(timeoutMs);
    }
    this.lifetimes.push(timeoutMs);
    clearTimeout(this.expiry);
    this.expiry = setTimeout(() => this.die("expired"), timeoutMs);
    this.expiry.unref();
  }

  async kill(): Promise<boolean> {
    this.killCalls += 1;
    await sleep(this.sdk.faults.latencyMs);
    if (this.sdk.faults.failKills) throw new SandboxError("500: could not kill the sandbox");
    if (this.dead) return false;
    this.die("killed");
    return true;
  }

  /** The sandbox stops: everything in it is killed, and every later call fails. */
  die(cause = "fault"): void {
    if (!this.dead) this.deathCause = cause;
    this.dead = true;
    clearTimeout(this.expiry);
    clearTimeout(this.lifeEnd);
    for (const group of this.groups) signalGroup(group);
    for (const [, fail] of this.running) {
      fail(sandboxTimedOut("[unavailable] the sandbox is not running"));
    }
    this.running.clear();
  }

  private checkAlive(): void {
    if (this.dead) throw new SandboxNotFoundError(`Sandbox ${this.sandboxId} not found`);
  }

  private async transferTime(
    bytes: number,
    transfer: FakeTransfer,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    this.transfers.push(transfer);
    try {
      await transferWait(
        this.sdk.faults.latencyMs + (bytes / this.sdk.faults.bytesPerSecond) * 1_000,
        signal,
      );
    } catch (error) {
      transfer.aborted = true;
      throw error;
    }
  }

  private async write(
    target: string,
    data: string | Uint8Array,
    options: E2BTransferOptions,
  ): Promise<void> {
    if (this.dead) throw sandboxTimedOut("502: The sandbox is not running");
    const raw = Buffer.from(data);
    const wire = options.gzip ? gzipSync(raw) : raw;
    const host = this.hostPath(target);
    const transfer = {
      path: this.sandboxPath(host),
      bytes: wire.byteLength,
      gzip: options.gzip === true,
      aborted: false,
    };
    await this.transferTime(wire.byteLength, transfer, options.signal);
    if (this.dead) throw sandboxTimedOut("502: The sandbox is not running");
    await mkdir(path.dirname(host), { recursive: true });
    await writeFile(host, options.gzip ? gunzipSync(wire) : wire);
    this.uploads.push(transfer.path);
  }

  private async read(target: string, options: E2BTransferOptions): Promise<Uint8Array> {
    if (this.dead) throw sandboxTimedOut("502: The sandbox is not running");
    if (this.sdk.faults.hangReads?.test(target)) return new Promise(() => {});
    let bytes: Buffer;
    try {
      bytes = await readFile(this.hostPath(target));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        throw new FileNotFoundError(`path '${target}' does not exist`);
      }
      throw error;
    }
    const wire = options.gzip ? gzipSync(bytes).byteLength : bytes.byteLength;
    const transfer = { path: target, bytes: wire, gzip: options.gzip === true, aborted: false };
    await this.transferTime(wire, transfer, options.signal);
    return new Uint8Array(bytes);
  }

  private run(command: string, options: E2BRunOptions): Promise<E2BCommandOutput> {
    if (this.dead) {
      return Promise.reject(new SandboxNotFoundError("Sandbox is probably not running anymore"));
    }
    this.commandsRun.push(command);
    const faults = this.sdk.faults;
    const stalled = faults.stallCommands?.test(command) ?? false;
    const pythonPath = [this.sdk.siteDir];
    if (this.setup.withoutPandas) pythonPath.push(this.sdk.noPandasDir);
    const env: NodeJS.ProcessEnv = {
      PATH: `${this.sdk.binDir}:/usr/local/bin:/usr/bin:/bin`,
      HOME: this.home,
      USER: "user",
      LANG: "C.UTF-8",
      FAKE_E2B_EGRESS: this.setup.egress,
      PYTHONPATH: pythonPath.join(":"),
      ...(faults.vmMemoryMb ? { FAKE_E2B_MEMORY_MB: String(faults.vmMemoryMb) } : {}),
      ...options.envs,
    };
    const child = spawn("/bin/bash", ["-l", "-c", stalled ? "sleep 3600" : command], {
      cwd: this.hostPath(options.cwd ?? this.home),
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid !== undefined) this.groups.add(child.pid);
    const oom = faults.oomKillCommands?.test(command) ?? false;
    return new Promise((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      let settled = false;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(death);
        clearInterval(oomWatch);
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
        // E2B kills the command's own process, not what it started.
        child.kill("SIGKILL");
        fail(deadlineExceeded());
      }, options.timeoutMs);
      let death: NodeJS.Timeout | undefined;
      const doom = faults.dieDuringCommands;
      if (doom && doom.times > 0 && doom.match.test(command)) {
        doom.times -= 1;
        death = setTimeout(() => this.die("fault"), DEATH_DELAY_MS);
      }
      const shell = child.pid ?? 0;
      if (faults.killShellCommands?.test(command)) {
        death = setTimeout(() => child.kill("SIGKILL"), 200);
      }
      const oomWatch = oom ? setInterval(() => killPython(shell), 50) : undefined;
      child.on("error", fail);
      child.on("close", (code) => {
        // A shell killed by a signal: envd reports -1, not 128 + the signal.
        const exitCode = code ?? -1;
        const result = { exitCode, stdout, stderr };
        void sleep(faults.latencyMs).then(() => {
          if (exitCode === 0) finish(() => resolve(result));
          else fail(new CommandExitError({ ...result, error: `exit status ${exitCode}` }));
        });
      });
    });
  }
}

function signalGroup(group: number): void {
  try {
    process.kill(-group, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The guest's OOM killer, as seen from the shell: a python3 below it gets SIGKILL. */
function killPython(shellPid: number): void {
  for (const pid of descendants(shellPid)) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("python")) {
        process.kill(pid, "SIGKILL");
      }
    } catch {
      // gone
    }
  }
}

function descendants(parent: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}
