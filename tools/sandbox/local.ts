import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { open, rm } from "node:fs/promises";
import type { Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  type ExecError,
  ExecErrorSchema,
  type ExecResult,
  OutputSpanSchema,
  type TableRef,
  TableRefSchema,
} from "../../blackboard/schemas.js";
import { findPython } from "./python.js";
import { appendNotes, failedResult, RunnerTableSchema, storeProducedTables } from "./results.js";
import { type ExecRequest, ExecRequestSchema, type Sandbox, type SandboxInfo } from "./types.js";

const WORKER_SCRIPT = fileURLToPath(new URL("./worker.py", import.meta.url));
/** Importing pandas on a cold CI disk can take a while. */
const READY_TIMEOUT_MS = 60_000;
const DEFAULT_GRACE_MS = 3_000;
const DEFAULT_LOAD_TIMEOUT_MS = 60_000;
/** Mirrors EXPORT_GRACE_S in worker.py: time a timed-out child gets to save its tables. */
const WORKER_EXPORT_GRACE_MS = 1_000;
const STDERR_TAIL_CHARS = 4_000;
const KILL_WAIT_MS = 5_000;
/** How long a worker told to stop (stdin closed) may take to clean up before it is killed. */
const STOP_WAIT_MS = 3_000;

/** Variables passed to the worker; everything else (API keys included) stays out. */
const PASSED_ENV = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "PYTHONPATH",
  "PYTHONHOME",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "LD_LIBRARY_PATH",
];

// --- the worker protocol (see worker.py) -------------------------------------

const ReadyMessageSchema = z.object({
  type: z.literal("ready"),
  pid: z.number().int(),
  python: z.string(),
  pandas: z.string(),
  numpy: z.string(),
  /** The worker's own directory, under which each run gets its scratch directory. */
  scratch_root: z.string(),
  /** What the worker's probe child found to hold on this machine. */
  protections: z.record(z.string(), z.boolean()),
  details: z.record(z.string(), z.string()),
});

const StartedMessageSchema = z.object({
  type: z.literal("started"),
  id: z.string(),
  pid: z.number().int().positive(),
});

const ResultMessageSchema = z.object({
  type: z.literal("result"),
  id: z.string().nullable(),
  /** Where the run's table files are; absent when the run left none. */
  scratch: z.string().optional(),
  ok: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  error: ExecErrorSchema.nullable(),
  spans: z.array(OutputSpanSchema),
  truncated: z.boolean(),
  tables: z.array(RunnerTableSchema),
});

const WorkerMessageSchema = z.discriminatedUnion("type", [
  ReadyMessageSchema,
  StartedMessageSchema,
  ResultMessageSchema,
]);

export type WorkerReady = Omit<z.infer<typeof ReadyMessageSchema>, "type">;
export type WorkerVersions = Pick<WorkerReady, "python" | "pandas" | "numpy">;
export type WorkerResult = z.infer<typeof ResultMessageSchema>;

/** One request as worker.py reads it. */
export interface WorkerRequest {
  id: string;
  code: string;
  tables: { name: string; uri: string; sha256: string }[];
  timeout_ms: number;
  output_bytes: number;
  memory_mb: number;
}

export interface WarmWorkerOptions {
  /** Where the worker makes its scratch directories; default: os.tmpdir(). */
  scratchRoot?: string;
  /** Keep a confined child forked ahead of the next request (default true). */
  forkAhead?: boolean;
  readyTimeoutMs?: number;
}

/**
 * A reply, or the reason the worker was lost (it is dead afterwards and must be
 * replaced); `codeStarted` tells whether the code had begun to run.
 */
export type WorkerOutcome =
  | { kind: "result"; result: WorkerResult }
  | { kind: "lost"; error: ExecError; codeStarted: boolean };

/** How long the worker may stay silent: while loading tables, then once the code runs. */
export interface WorkerBudget {
  loadMs: number;
  runMs: number;
}

interface PendingRun {
  id: string;
  runMs: number;
  codeStarted: boolean;
  timer?: NodeJS.Timeout;
  resolve(outcome: WorkerOutcome): void;
}

function workerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PYTHONIOENCODING: "utf-8",
    PYTHONDONTWRITEBYTECODE: "1",
    OMP_NUM_THREADS: "1",
    OPENBLAS_NUM_THREADS: "1",
    MKL_NUM_THREADS: "1",
    // The Python heap in glibc's malloc, on transparent huge pages where the kernel offers
    // them: fork() then copies a page-table entry per 2 MB instead of per 4 KB, and a
    // child's exit is as much cheaper (about 2.5 ms less CPU per request measured).
    PYTHONMALLOC: "malloc",
    GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
  };
  for (const name of PASSED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** SIGKILLs a process group, or the process alone when it leads no group. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Waits for `promise`, at most `ms`; the timer is cleared as soon as either ends. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One warm Python process (worker.py) with pandas imported. It runs one request at
 * a time; whatever goes wrong, `run` settles, and a worker that was lost is dead.
 */
export class WarmWorker {
  private readySeen: WorkerReady | undefined;
  private pending: PendingRun | undefined;
  private childPid: number | undefined;
  private exited = false;
  private markExited: () => void = () => {};
  private readonly exitedPromise = new Promise<void>((resolve) => {
    this.markExited = resolve;
  });
  private readyWaiter: { resolve(): void; reject(error: Error): void } | undefined;
  private stderrTail = "";
  private partialLine = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly python: string,
  ) {
    const protocol = child.stdio[3] as Socket;
    const stderr = child.stderr as Socket;
    const stdin = child.stdin as Socket;
    protocol.setEncoding("utf8");
    protocol.on("data", (chunk: string) => this.onProtocolData(chunk));
    protocol.on("error", () => {});
    stderr.setEncoding("utf8");
    stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    stderr.on("error", () => {});
    // A write to a worker that just died fails with EPIPE; its exit is handled below.
    stdin.on("error", () => {});
    child.on("error", (error) => this.onGone(`could not run ${python}: ${error.message}`));
    child.on("exit", (code, signal) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      // Let a reply that is still in the pipe arrive before giving up on it.
      const drained = new Promise<void>((resolve) => protocol.once("close", resolve));
      void waitAtMost(drained, 250).then(() => this.onGone(`the sandbox worker exited (${how})`));
    });
    // Idle workers must not keep Node alive; pending runs hold a timer instead.
    child.unref();
    protocol.unref();
    stderr.unref();
    stdin.unref();
  }

  static async start(python: string, opts: WarmWorkerOptions = {}): Promise<WarmWorker> {
    const args = [WORKER_SCRIPT, opts.scratchRoot ?? os.tmpdir()];
    if (opts.forkAhead === false) args.push("--no-fork-ahead");
    const child = spawn(python, args, {
      stdio: ["pipe", "ignore", "pipe", "pipe"],
      // Its own process group, so that killing it takes everything it started.
      detached: true,
      env: workerEnv(),
    });
    const worker = new WarmWorker(child, python);
    try {
      await worker.ready(opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
    } catch (error) {
      await worker.kill();
      throw error;
    }
    return worker;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** What the worker said when it was ready: versions, scratch root, protections. */
  get readiness(): WorkerReady {
    if (!this.readySeen) throw new Error("the sandbox worker is not ready");
    return this.readySeen;
  }

  get versions(): WorkerVersions {
    const { python, pandas, numpy } = this.readiness;
    return { python, pandas, numpy };
  }

  /** Tells the worker that the table files of a finished run were read. */
  release(scratch: string): void {
    if (!this.exited) this.child.stdin?.write(`${JSON.stringify({ type: "release", scratch })}\n`);
  }

  run(request: WorkerRequest, budget: WorkerBudget): Promise<WorkerOutcome> {
    if (this.pending) throw new Error("a WarmWorker runs one request at a time");
    if (this.exited) {
      return Promise.resolve({
        kind: "lost",
        error: crashed("the sandbox worker is not running"),
        codeStarted: false,
      });
    }
    return new Promise((resolve) => {
      this.pending = { id: request.id, runMs: budget.runMs, codeStarted: false, resolve };
      this.arm(budget.loadMs);
      this.child.stdin?.write(`${JSON.stringify({ type: "run", ...request })}\n`);
    });
  }

  /** Kills the worker and the code it is running; resolves once the worker is gone. */
  async kill(): Promise<void> {
    if (this.childPid !== undefined) killGroup(this.childPid);
    if (!this.exited && this.child.pid !== undefined) killGroup(this.child.pid);
    await waitAtMost(this.exitedPromise, KILL_WAIT_MS);
    await this.removeScratchRoot();
  }

  /**
   * Lets an idle worker end on its own (it ends its parked child and removes its
   * scratch directories), killing it if it takes too long or is busy.
   */
  async stop(): Promise<void> {
    if (!this.exited && !this.pending) {
      this.child.stdin?.end();
      await waitAtMost(this.exitedPromise, STOP_WAIT_MS);
    }
    await this.kill();
  }

  private async removeScratchRoot(): Promise<void> {
    const root = this.readySeen?.scratch_root;
    if (root) await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }

  private ready(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`the sandbox worker (${this.python}) was not ready in ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.readyWaiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  private arm(ms: number): void {
    const pending = this.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => {
      void this.abandon({
        type: "Timeout",
        message: `the sandbox worker did not answer within ${ms} ms; it was stopped and will be replaced`,
        line: null,
      });
    }, ms);
  }

  private settle(outcome: WorkerOutcome): void {
    const pending = this.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending = undefined;
    // A lost worker is killed with the child it was running; otherwise the child is gone.
    if (outcome.kind === "result") this.childPid = undefined;
    pending.resolve(outcome);
  }

  /** Gives up on a worker: kills it, and only then reports the pending run as lost. */
  private async abandon(error: ExecError): Promise<void> {
    const pending = this.pending;
    if (pending) clearTimeout(pending.timer);
    this.pending = undefined;
    await this.kill();
    pending?.resolve({ kind: "lost", error, codeStarted: pending.codeStarted });
  }

  private onProtocolData(chunk: string): void {
    const lines = (this.partialLine + chunk).split("\n");
    this.partialLine = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim()) this.onMessage(line);
    }
  }

  private onMessage(line: string): void {
    let message: z.infer<typeof WorkerMessageSchema>;
    try {
      message = WorkerMessageSchema.parse(JSON.parse(line));
    } catch {
      void this.abandon(
        crashed(`the sandbox worker sent an unreadable reply: ${line.slice(0, 200)}`),
      );
      return;
    }
    if (message.type === "ready") {
      const { type: _type, ...ready } = message;
      this.readySeen = ready;
      this.readyWaiter?.resolve();
    } else if (message.type === "started") {
      if (this.pending?.id !== message.id) return;
      this.childPid = message.pid;
      this.pending.codeStarted = true;
      this.arm(this.pending.runMs);
    } else if (this.pending && (message.id === this.pending.id || message.id === null)) {
      this.settle({ kind: "result", result: message });
    }
  }

  private onGone(reason: string): void {
    if (!this.exited) {
      this.exited = true;
      this.markExited();
    }
    const detail = this.stderrTail.trim().split("\n").slice(-3).join("\n");
    const message = detail ? `${reason}: ${detail}` : reason;
    this.readyWaiter?.reject(new Error(`${message} (python: ${this.python})`));
    this.settle({
      kind: "lost",
      error: crashed(message),
      codeStarted: this.pending?.codeStarted ?? false,
    });
    // The child it was running has PDEATHSIG set, but it may have started others.
    if (this.childPid !== undefined) killGroup(this.childPid);
    this.childPid = undefined;
    void this.removeScratchRoot();
  }
}

/** Reads a file the code's process may have replaced: a symlink is refused, not followed. */
async function readPlainFile(file: string): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function crashed(message: string): ExecError {
  return { type: "Crashed", message, line: null };
}

// --- the sandbox ---------------------------------------------------------------

export interface LocalSandboxOptions {
  /** Python with pandas; default: findPython(). */
  python?: string;
  /** Warm workers in the pool; default: the number of cores. */
  workers?: number;
  /** Keep a confined child forked ahead of each worker's next request (default true). */
  forkAhead?: boolean;
  /** Where the workers make their scratch directories; default: os.tmpdir(). */
  scratchRoot?: string;
  /** How long past a request's timeout a silent worker is tolerated before it is replaced. */
  graceMs?: number;
  /** How long a worker may take to load a request's tables before it is replaced. */
  loadTimeoutMs?: number;
}

type ValidRequest = z.output<typeof ExecRequestSchema> & { tables: TableRef[] };

interface Job {
  request: ValidRequest;
  resolve(result: ExecResult): void;
  reject(error: unknown): void;
}

/** A place for one warm worker; the pool is several slots sharing one queue. */
interface WorkerSlot {
  worker?: WarmWorker;
  starting?: Promise<WarmWorker>;
  busy: boolean;
  /** Tables (by sha256) this slot's worker has loaded, so requests go where their tables are. */
  loaded: Set<string>;
  idleSince: number;
}

/** How many cores this process may use. */
export function defaultWorkerCount(): number {
  return Math.max(
    1,
    typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length,
  );
}

/** Among free slots, the one whose worker has most of the job's tables, then the longest idle. */
function chooseSlot(free: WorkerSlot[], job: Job): WorkerSlot | undefined {
  let best: WorkerSlot | undefined;
  let bestLoaded = -1;
  for (const slot of free) {
    const loaded = job.request.tables.filter((table) => slot.loaded.has(table.sha256)).length;
    if (loaded > bestLoaded || (loaded === bestLoaded && best && slot.idleSince < best.idleSince)) {
      best = slot;
      bestLoaded = loaded;
    }
  }
  return best;
}

/**
 * Runs generated pandas code on this machine: a pool of warm workers, each running
 * every request in a forked, confined child (see worker.py and hardening.py).
 */
export class LocalSandbox implements Sandbox {
  private readonly slots: WorkerSlot[];
  private readonly queue: Job[] = [];
  private closed = false;

  private constructor(
    private readonly python: string,
    private readonly options: LocalSandboxOptions,
  ) {
    const count = options.workers ?? defaultWorkerCount();
    if (!Number.isInteger(count) || count < 1) {
      throw new Error(`workers must be a positive integer, got ${count}`);
    }
    this.slots = Array.from({ length: count }, () => ({
      busy: false,
      loaded: new Set<string>(),
      idleSince: 0,
    }));
  }

  static async start(opts: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const python = opts.python ?? (await findPython()).executable;
    const sandbox = new LocalSandbox(python, opts);
    try {
      await Promise.all(sandbox.slots.map((slot) => sandbox.workerFor(slot)));
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    return sandbox;
  }

  /** Process ids of the live workers (for diagnostics and tests). */
  get workerPids(): number[] {
    return this.slots.flatMap((slot) =>
      slot.worker?.alive && slot.worker.pid !== undefined ? [slot.worker.pid] : [],
    );
  }

  async execute(request: ExecRequest): Promise<ExecResult> {
    const parsed = ExecRequestSchema.parse(request);
    const tables = z.array(TableRefSchema).parse(parsed.tables);
    if (this.closed) throw new Error("the local sandbox is closed");
    return new Promise((resolve, reject) => {
      this.queue.push({ request: { ...parsed, tables }, resolve, reject });
      this.pump();
    });
  }

  async info(): Promise<SandboxInfo> {
    return this.describe().then(({ info }) => info);
  }

  /** info(), plus how each protection was found (network namespace kind, Landlock ABI, uid). */
  async describe(): Promise<{ info: SandboxInfo; details: Record<string, string> }> {
    const worker = await this.workerFor(this.slots[0] as WorkerSlot);
    const { python, pandas, numpy, protections, details } = worker.readiness;
    return {
      info: {
        backend: "local",
        runtime: `Python ${python}, pandas ${pandas}, numpy ${numpy} (${this.python})`,
        protections: { fork: true, ...protections },
      },
      details: { ...details, workers: String(this.slots.length) },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error("the local sandbox was closed"));
    await Promise.all(
      this.slots.map(async (slot) => {
        await slot.starting?.catch(() => undefined);
        await slot.worker?.stop();
        slot.worker = undefined;
      }),
    );
  }

  private workerFor(slot: WorkerSlot): Promise<WarmWorker> {
    if (this.closed) return Promise.reject(new Error("the local sandbox is closed"));
    if (slot.worker?.alive) return Promise.resolve(slot.worker);
    if (!slot.starting) {
      slot.loaded.clear();
      const starting = WarmWorker.start(this.python, {
        scratchRoot: this.options.scratchRoot,
        forkAhead: this.options.forkAhead,
      }).then(async (worker) => {
        if (this.closed) {
          await worker.kill();
          throw new Error("the local sandbox is closed");
        }
        slot.worker = worker;
        return worker;
      });
      slot.starting = starting;
      const forget = () => {
        if (slot.starting === starting) slot.starting = undefined;
      };
      starting.then(forget, forget);
    }
    return slot.starting;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const free = this.slots.filter((slot) => !slot.busy);
      const job = this.queue[0];
      const slot = job && chooseSlot(free, job);
      if (!job || !slot) return;
      this.queue.shift();
      slot.busy = true;
      void this.run(slot, job.request)
        .then(job.resolve, job.reject)
        .finally(() => {
          slot.busy = false;
          slot.idleSince = performance.now();
          this.pump();
        });
    }
  }

  private async run(slot: WorkerSlot, request: ValidRequest): Promise<ExecResult> {
    const started = performance.now();
    let outcome = await this.attempt(slot, request);
    // A worker that died before it began the code (it was dying when the request
    // came) says nothing about the code: send the request once more, to a fresh one.
    if (
      outcome.kind === "lost" &&
      !outcome.codeStarted &&
      outcome.error.type === "Crashed" &&
      !this.closed
    ) {
      outcome = await this.attempt(slot, request);
    }
    if (outcome.kind === "lost") {
      return failedResult(outcome.error, Math.round(performance.now() - started));
    }
    const { worker, result } = outcome;
    const stored = await this.storeTables(result);
    if (result.scratch && result.tables.length > 0) worker.release(result.scratch);
    return {
      ok: result.ok,
      stdout: result.stdout,
      stderr: appendNotes(result.stderr, stored.notes),
      error: result.error,
      tables: stored.tables,
      spans: result.spans,
      truncated: result.truncated,
      durationMs: Math.max(1, Math.round(performance.now() - started)),
    };
  }

  private async attempt(
    slot: WorkerSlot,
    request: ValidRequest,
  ): Promise<
    | { kind: "result"; worker: WarmWorker; result: WorkerResult }
    | Extract<WorkerOutcome, { kind: "lost" }>
  > {
    const worker = await this.workerFor(slot);
    const tables = request.tables.map(({ name, uri, sha256 }) => ({ name, uri, sha256 }));
    for (const table of tables) slot.loaded.add(table.sha256);
    const outcome = await worker.run(
      {
        id: randomUUID(),
        code: request.code,
        tables,
        timeout_ms: request.timeoutMs,
        output_bytes: request.outputBytes,
        memory_mb: request.memoryMb,
      },
      {
        loadMs: this.options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
        runMs:
          request.timeoutMs + WORKER_EXPORT_GRACE_MS + (this.options.graceMs ?? DEFAULT_GRACE_MS),
      },
    );
    if (outcome.kind === "lost") {
      if (slot.worker === worker) slot.worker = undefined;
      // Warm the replacement now; a failure shows up on the next request.
      if (!this.closed) this.workerFor(slot).catch(() => undefined);
      return outcome;
    }
    return { kind: "result", worker, result: outcome.result };
  }

  /** Moves the tables the code left behind from its scratch directory into the artifact store. */
  private async storeTables(
    result: WorkerResult,
  ): Promise<Awaited<ReturnType<typeof storeProducedTables>>> {
    const scratch = result.scratch;
    if (result.tables.length === 0) return { tables: [], notes: [] };
    if (!scratch) {
      return { tables: [], notes: ["note: the sandbox worker did not say where its tables are"] };
    }
    return storeProducedTables(result.tables, (file) => readPlainFile(path.join(scratch, file)));
  }
}
