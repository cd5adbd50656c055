import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { putArtifact } from "../../blackboard/artifacts.js";
import {
  ColumnSchema,
  type ExecError,
  ExecErrorSchema,
  type ExecResult,
  ExecResultSchema,
  OutputSpanSchema,
  type ProducedTable,
  type TableRef,
  TableRefSchema,
} from "../../blackboard/schemas.js";
import { findPython } from "./python.js";
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
});

const StartedMessageSchema = z.object({
  type: z.literal("started"),
  id: z.string(),
  pid: z.number().int().positive(),
});

const WorkerTableSchema = z.object({
  variable: z.string(),
  line: z.number().int().nullable(),
  file: z.string(),
  rows: z.number().int().nonnegative(),
  columns: z.array(ColumnSchema),
});

const ResultMessageSchema = z.object({
  type: z.literal("result"),
  id: z.string().nullable(),
  ok: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  error: ExecErrorSchema.nullable(),
  spans: z.array(OutputSpanSchema),
  truncated: z.boolean(),
  tables: z.array(WorkerTableSchema),
});

const WorkerMessageSchema = z.discriminatedUnion("type", [
  ReadyMessageSchema,
  StartedMessageSchema,
  ResultMessageSchema,
]);

export type WorkerVersions = Omit<z.infer<typeof ReadyMessageSchema>, "type" | "pid">;
export type WorkerResult = z.infer<typeof ResultMessageSchema>;

/** One request as worker.py reads it. */
export interface WorkerRequest {
  id: string;
  code: string;
  tables: { name: string; uri: string; sha256: string }[];
  timeout_ms: number;
  output_bytes: number;
  scratch: string;
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
  private versionsSeen: WorkerVersions | undefined;
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

  static async start(python: string, readyTimeoutMs = READY_TIMEOUT_MS): Promise<WarmWorker> {
    const child = spawn(python, [WORKER_SCRIPT], {
      stdio: ["pipe", "ignore", "pipe", "pipe"],
      // Its own process group, so that killing it takes everything it started.
      detached: true,
      env: workerEnv(),
    });
    const worker = new WarmWorker(child, python);
    try {
      await worker.ready(readyTimeoutMs);
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

  get versions(): WorkerVersions {
    if (!this.versionsSeen) throw new Error("the sandbox worker is not ready");
    return this.versionsSeen;
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
      this.child.stdin?.write(`${JSON.stringify(request)}\n`);
    });
  }

  /** Kills the worker and the code it is running; resolves once the worker is gone. */
  async kill(): Promise<void> {
    if (this.childPid !== undefined) killGroup(this.childPid);
    if (!this.exited && this.child.pid !== undefined) killGroup(this.child.pid);
    await waitAtMost(this.exitedPromise, KILL_WAIT_MS);
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
      const { type: _type, pid: _pid, ...versions } = message;
      this.versionsSeen = versions;
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
  }
}

function crashed(message: string): ExecError {
  return { type: "Crashed", message, line: null };
}

// --- the sandbox ---------------------------------------------------------------

export interface LocalSandboxOptions {
  /** Python with pandas; default: findPython(). */
  python?: string;
  /** Where per-request scratch directories are made; default: os.tmpdir(). */
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

/** A place for one warm worker; a pool is several slots sharing one queue. */
interface WorkerSlot {
  worker?: WarmWorker;
  starting?: Promise<WarmWorker>;
  busy: boolean;
}

function failedResult(error: ExecError, durationMs: number): ExecResult {
  return {
    ok: false,
    stdout: "",
    stderr: "",
    error,
    tables: [],
    spans: [],
    truncated: false,
    durationMs,
  };
}

function withNotes(stderr: string, notes: string[]): string {
  if (notes.length === 0) return stderr;
  const separator = stderr === "" || stderr.endsWith("\n") ? "" : "\n";
  return `${stderr}${separator}${notes.join("\n")}\n`;
}

/**
 * Runs generated pandas code on this machine: a warm worker forks a child per
 * request, with a wall-clock kill, an output cap and a scratch directory.
 */
export class LocalSandbox implements Sandbox {
  private readonly slots: [WorkerSlot, ...WorkerSlot[]] = [{ busy: false }];
  private readonly queue: Job[] = [];
  private closed = false;

  private constructor(
    private readonly python: string,
    private readonly options: LocalSandboxOptions,
  ) {}

  static async start(opts: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const python = opts.python ?? (await findPython()).executable;
    const sandbox = new LocalSandbox(python, opts);
    await Promise.all(sandbox.slots.map((slot) => sandbox.workerFor(slot)));
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
    const worker = await this.workerFor(this.slots[0]);
    const { python, pandas, numpy } = worker.versions;
    return {
      backend: "local",
      runtime: `Python ${python}, pandas ${pandas}, numpy ${numpy} (${this.python})`,
      protections: {
        fork: true,
        wallClockKill: true,
        outputCap: true,
        scratchDir: true,
        scrubbedEnv: true,
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error("the local sandbox was closed"));
    await Promise.all(
      this.slots.map(async (slot) => {
        await slot.starting?.catch(() => undefined);
        await slot.worker?.kill();
        slot.worker = undefined;
      }),
    );
  }

  private workerFor(slot: WorkerSlot): Promise<WarmWorker> {
    if (this.closed) return Promise.reject(new Error("the local sandbox is closed"));
    if (slot.worker?.alive) return Promise.resolve(slot.worker);
    if (!slot.starting) {
      const starting = WarmWorker.start(this.python).then(async (worker) => {
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
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.busy = true;
      void this.run(slot, job.request)
        .then(job.resolve, job.reject)
        .finally(() => {
          slot.busy = false;
          this.pump();
        });
    }
  }

  private async run(slot: WorkerSlot, request: ValidRequest): Promise<ExecResult> {
    const root = this.options.scratchRoot ?? os.tmpdir();
    const scratch = await mkdtemp(path.join(root, "tableminds-scratch-"));
    try {
      const started = performance.now();
      let outcome = await this.attempt(slot, request, scratch);
      // A worker that died before it began the code (it was dying when the request
      // came) says nothing about the code: send the request once more, to a fresh one.
      if (
        outcome.kind === "lost" &&
        !outcome.codeStarted &&
        outcome.error.type === "Crashed" &&
        !this.closed
      ) {
        outcome = await this.attempt(slot, request, scratch);
      }
      const durationMs = Math.round(performance.now() - started);
      if (outcome.kind === "lost") return failedResult(outcome.error, durationMs);
      return await this.collect(outcome.result, scratch, durationMs);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  private async attempt(
    slot: WorkerSlot,
    request: ValidRequest,
    scratch: string,
  ): Promise<WorkerOutcome> {
    const worker = await this.workerFor(slot);
    const outcome = await worker.run(
      {
        id: randomUUID(),
        code: request.code,
        tables: request.tables.map(({ name, uri, sha256 }) => ({ name, uri, sha256 })),
        timeout_ms: request.timeoutMs,
        output_bytes: request.outputBytes,
        scratch,
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
    }
    return outcome;
  }

  /** Moves the tables the code left behind from scratch into the artifact store. */
  private async collect(
    result: WorkerResult,
    scratch: string,
    durationMs: number,
  ): Promise<ExecResult> {
    const tables: ProducedTable[] = [];
    const notes: string[] = [];
    for (const produced of result.tables) {
      try {
        const bytes = await readFile(path.join(scratch, path.basename(produced.file)));
        const { sha256, uri } = await putArtifact(bytes, "csv");
        tables.push({
          variable: produced.variable,
          line: produced.line,
          table: {
            id: `table:${produced.variable}`,
            name: produced.variable,
            uri,
            sha256,
            rows: produced.rows,
            columns: produced.columns,
          },
        });
      } catch (error) {
        notes.push(`note: table ${produced.variable} could not be stored: ${String(error)}`);
      }
    }
    return ExecResultSchema.parse({
      ok: result.ok,
      stdout: result.stdout,
      stderr: withNotes(result.stderr, notes),
      error: result.error,
      tables,
      spans: result.spans,
      truncated: result.truncated,
      durationMs,
    });
  }
}
