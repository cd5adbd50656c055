/**
 * The lifecycle of one warm interpreter (interpreter.py): spawn, readiness, one run at a time
 * with a watchdog, and its end (stop, kill, or death noticed and reported).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import type { Socket } from "node:net";
import os from "node:os";
import { fileURLToPath } from "node:url";
import type { ExecError } from "../blackboard/schemas.js";
import {
  type InterpreterMessage,
  type InterpreterReady,
  type InterpreterRequest,
  type InterpreterResult,
  type InterpreterVersions,
  LineSplitter,
  parseInterpreterLine,
  refusedResult,
  releaseLine,
  runLine,
} from "./local-protocol.js";
import { reclaimDeadScratch } from "./scratch-reclaim.js";

const INTERPRETER_SCRIPT = fileURLToPath(new URL("./interpreter.py", import.meta.url));
/** Importing pandas on a cold CI disk can take a while. */
const READY_TIMEOUT_MS = 60_000;
const STDERR_TAIL_CHARS = 4_000;
const KILL_WAIT_MS = 5_000;
/** How long an interpreter told to stop (stdin closed) may take to clean up before it is killed. */
const STOP_WAIT_MS = 3_000;

/** Variables passed to the interpreter; everything else (API keys included) stays out. */
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

export interface WarmInterpreterOptions {
  /** Where the interpreter makes its scratch directories; default: os.tmpdir(). */
  scratchRoot?: string;
  /** Keep a confined child forked ahead of the next request (default true). */
  forkAhead?: boolean;
  /**
   * false: children are not put under Landlock, as on a kernel without it. For tests of
   * what the other layers hold on their own; never weaker otherwise.
   */
  landlock?: boolean;
  readyTimeoutMs?: number;
}

/**
 * A reply, or the reason the interpreter was lost (it is dead afterwards and must be
 * replaced); `codeStarted` tells whether the code had begun to run.
 */
export type InterpreterOutcome =
  | { kind: "result"; result: InterpreterResult }
  | { kind: "lost"; error: ExecError; codeStarted: boolean };

/** How long the interpreter may stay silent: while loading tables, then once the code runs. */
export interface InterpreterBudget {
  loadMs: number;
  runMs: number;
}

interface PendingRun {
  id: string;
  runMs: number;
  codeStarted: boolean;
  timer?: NodeJS.Timeout;
  resolve(outcome: InterpreterOutcome): void;
}

function interpreterEnv(): NodeJS.ProcessEnv {
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
/** Scratch roots already swept of dead interpreters' folders by this process. */
const reclaimed = new Set<string>();

function reclaimOnce(root: string): void {
  if (reclaimed.has(root)) return;
  reclaimed.add(root);
  reclaimDeadScratch(root);
}

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

function crashed(message: string): ExecError {
  return { type: "Crashed", message, line: null };
}

/**
 * One warm Python process (interpreter.py) with pandas imported. It runs one request at
 * a time; whatever goes wrong, `run` settles, and an interpreter that was lost is dead.
 */
export class WarmInterpreter {
  private readySeen: InterpreterReady | undefined;
  private pending: PendingRun | undefined;
  private childPid: number | undefined;
  private exited = false;
  private stopping = false;
  private markExited: () => void = () => {};
  private readonly exitedPromise = new Promise<void>((resolve) => {
    this.markExited = resolve;
  });
  private readyWaiter: { resolve(): void; reject(error: Error): void } | undefined;
  private stderrTail = "";
  private readonly lines = new LineSplitter();

  private constructor(
    private readonly child: ChildProcess,
    private readonly python: string,
  ) {
    const protocol = child.stdio[3] as Socket;
    const stderr = child.stderr as Socket;
    const stdin = child.stdin as Socket;
    protocol.setEncoding("utf8");
    protocol.on("data", (chunk: string) => {
      for (const line of this.lines.push(chunk)) this.onLine(line);
    });
    protocol.on("error", () => {});
    stderr.setEncoding("utf8");
    stderr.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    stderr.on("error", () => {});
    // A write to an interpreter that just died fails with EPIPE; its exit is handled below.
    stdin.on("error", () => {});
    child.on("error", (error) => this.onGone(`could not run ${python}: ${error.message}`));
    child.on("exit", (code, signal) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      const gone = () => this.onGone(`the sandbox interpreter exited (${how})`);
      // Let a reply that is still in the pipe arrive before giving up on it. An interpreter told to
      // stop owes none, and its ending children may hold the pipe open a while.
      if (this.stopping && !this.pending) return gone();
      const drained = new Promise<void>((resolve) => protocol.once("close", resolve));
      void waitAtMost(drained, 250).then(gone);
    });
    // Idle interpreters must not keep Node alive; pending runs hold a timer instead.
    child.unref();
    protocol.unref();
    stderr.unref();
    stdin.unref();
  }

  static async start(python: string, opts: WarmInterpreterOptions = {}): Promise<WarmInterpreter> {
    const root = opts.scratchRoot ?? os.tmpdir();
    reclaimOnce(root);
    const args = [INTERPRETER_SCRIPT, root];
    if (opts.forkAhead === false) args.push("--no-fork-ahead");
    if (opts.landlock === false) args.push("--no-landlock");
    const child = spawn(python, args, {
      stdio: ["pipe", "ignore", "pipe", "pipe"],
      // Its own process group, so that killing it takes everything it started.
      detached: true,
      env: interpreterEnv(),
    });
    const interpreter = new WarmInterpreter(child, python);
    try {
      await interpreter.ready(opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
    } catch (error) {
      await interpreter.kill();
      throw error;
    }
    return interpreter;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** What the interpreter said when it was ready: versions, scratch root, protections. */
  get readiness(): InterpreterReady {
    if (!this.readySeen) throw new Error("the sandbox interpreter is not ready");
    return this.readySeen;
  }

  get versions(): InterpreterVersions {
    const { python, pandas, numpy } = this.readiness;
    return { python, pandas, numpy };
  }

  /** Tells the interpreter that the table files of a finished run were read. */
  release(scratch: string): void {
    if (!this.exited) this.child.stdin?.write(releaseLine(scratch));
  }

  run(request: InterpreterRequest, budget: InterpreterBudget): Promise<InterpreterOutcome> {
    if (this.pending) throw new Error("a WarmInterpreter runs one request at a time");
    if (this.exited) {
      return Promise.resolve({
        kind: "lost",
        error: crashed("the sandbox interpreter is not running"),
        codeStarted: false,
      });
    }
    return new Promise((resolve) => {
      this.pending = { id: request.id, runMs: budget.runMs, codeStarted: false, resolve };
      this.arm(budget.loadMs);
      this.child.stdin?.write(runLine(request));
    });
  }

  /** Kills the interpreter and the code it is running; resolves once the interpreter is gone. */
  async kill(): Promise<void> {
    if (this.childPid !== undefined) killGroup(this.childPid);
    if (!this.exited && this.child.pid !== undefined) killGroup(this.child.pid);
    await waitAtMost(this.exitedPromise, KILL_WAIT_MS);
    await this.removeScratchRoot();
  }

  /**
   * Lets an idle interpreter end on its own (it ends its parked child and removes its
   * scratch directories), killing it if it takes too long or is busy.
   */
  async stop(): Promise<void> {
    if (!this.exited && !this.pending) {
      this.stopping = true;
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
          reject(
            new Error(`the sandbox interpreter (${this.python}) was not ready in ${timeoutMs} ms`),
          ),
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
        message: `the sandbox interpreter did not answer within ${ms} ms; it was stopped and will be replaced`,
        line: null,
      });
    }, ms);
  }

  private settle(outcome: InterpreterOutcome): void {
    const pending = this.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending = undefined;
    // A lost interpreter is killed with the child it was running; otherwise the child is gone.
    if (outcome.kind === "result") this.childPid = undefined;
    pending.resolve(outcome);
  }

  /** Gives up on an interpreter: kills it, and only then reports the pending run as lost. */
  private async abandon(error: ExecError): Promise<void> {
    const pending = this.pending;
    if (pending) clearTimeout(pending.timer);
    this.pending = undefined;
    await this.kill();
    pending?.resolve({ kind: "lost", error, codeStarted: pending.codeStarted });
  }

  private onLine(line: string): void {
    const message = parseInterpreterLine(line);
    const refused = message ? undefined : refusedResult(line);
    if (refused) {
      // A well-framed reply carrying a result that is not one: that run fails, the interpreter
      // goes on, and the run's folder is let go.
      if (refused.scratch !== undefined) this.release(refused.scratch);
      this.onMessage(refused.result);
      return;
    }
    if (!message) {
      void this.abandon(
        crashed(`the sandbox interpreter sent an unreadable reply: ${line.slice(0, 200)}`),
      );
      return;
    }
    this.onMessage(message);
  }

  private onMessage(message: InterpreterMessage): void {
    if (message.type === "ready") {
      // Said once, at start; what it names (the scratch root above all, which kill()
      // removes) is never changed afterwards.
      if (this.readySeen) return;
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
