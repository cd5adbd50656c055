import { randomUUID } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import type { ExecResult } from "../blackboard/schemas.js";
import { degradedRefusal } from "./hardening.js";
import { type InterpreterOutcome, WarmInterpreter } from "./local-interpreter.js";
import {
  defaultInterpreterCount,
  InterpreterPool,
  type Lease,
  LocalSandboxClosedError,
} from "./local-pool.js";
import type { InterpreterResult } from "./local-protocol.js";
import { findPython } from "./python.js";
import { execResultFromRunner, failedResult, leftFiles } from "./results.js";
import { TraceCache } from "./trace-cache.js";
import {
  datesOf,
  type ExecRequest,
  localExecRequest,
  type Sandbox,
  type SandboxInfo,
  type ValidExecRequest,
  warmedUp,
} from "./types.js";

export {
  type InterpreterBudget,
  type InterpreterOutcome,
  WarmInterpreter,
  type WarmInterpreterOptions,
} from "./local-interpreter.js";
export { defaultInterpreterCount, LocalSandboxClosedError } from "./local-pool.js";
export type {
  InterpreterReady,
  InterpreterRequest,
  InterpreterResult,
  InterpreterVersions,
} from "./local-protocol.js";

const DEFAULT_GRACE_MS = 3_000;
const DEFAULT_LOAD_TIMEOUT_MS = 60_000;
/** Mirrors EXPORT_GRACE_S in interpreter.py: time a timed-out child gets to save its tables. */
const INTERPRETER_EXPORT_GRACE_MS = 1_000;
/** Mirrors MAX_TABLE_FILE_BYTES in interpreter_protocol.py (and the children's RLIMIT_FSIZE). */
export const MAX_TABLE_FILE_BYTES = 64 * 1024 * 1024;
/** How long reading one table file a run left may take. */
const TABLE_READ_TIMEOUT_MS = 10_000;
const READ_CHUNK_BYTES = 1 << 20;
const MIN_READ_BYTES = 1 << 16;

export interface LocalSandboxOptions {
  /** Python with pandas; default: findPython(). */
  python?: string;
  /** Warm interpreters in the pool; default: the number of cores. */
  interpreters?: number;
  /** Keep a confined child forked ahead of each interpreter's next request (default true). */
  forkAhead?: boolean;
  /** Where the interpreters make their scratch directories; default: os.tmpdir(). */
  scratchRoot?: string;
  /** How long past a request's timeout a silent interpreter is tolerated before it is replaced. */
  graceMs?: number;
  /** How long an interpreter may take to load a request's tables before it is replaced. */
  loadTimeoutMs?: number;
  /** The largest table file a run may leave (default 64 MB); a bigger one becomes a note. */
  tableFileBytes?: number;
  /**
   * false: children are not put under Landlock, as on a kernel without it (tests only, like
   * WarmInterpreterOptions.landlock): code is then refused unless TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1.
   */
  landlock?: boolean;
}

/**
 * Generated code refused: the kernel has no Landlock and the operator did not accept the
 * degraded confinement (TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1); the message says what to do.
 */
export class LocalSandboxRefusedError extends Error {
  override name = "LocalSandboxRefusedError";
}

export interface ScratchReadLimits {
  maxBytes: number;
  timeoutMs: number;
}

function fileKind(info: Stats): string {
  if (info.isFIFO()) return "a FIFO";
  if (info.isDirectory()) return "a directory";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  if (info.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * Reads a file that a run left in its scratch directory `dir`, where the code may have put
 * anything under that name. `name` must be a plain file name. The file is opened without
 * following a symlink and without blocking (opening a FIFO would otherwise wait for a
 * writer, holding one of libuv's four file threads for ever), then checked through the
 * open descriptor, so that what is read is what was checked: a regular file with one link
 * (not a hard link to some other file), of at most `maxBytes`, read in chunks within
 * `timeoutMs`. Anything else is an error that says what the file was.
 */
export async function readScratchFile(
  dir: string,
  name: string,
  limits: ScratchReadLimits,
): Promise<Buffer> {
  if (path.basename(name) !== name || name === "." || name === ".." || name.includes("\0")) {
    throw new Error(`bad file name ${JSON.stringify(name)}`);
  }
  const deadline = performance.now() + limits.timeoutMs;
  const flags =
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
  const handle = await open(path.join(dir, name), flags).catch((error: NodeJS.ErrnoException) => {
    throw error.code === "ELOOP" ? new Error("its file is a symbolic link") : error;
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`its file is ${fileKind(info)}, not a regular file`);
    if (info.nlink !== 1) {
      throw new Error(`its file has ${info.nlink} links (a hard link to another file?)`);
    }
    if (info.size > limits.maxBytes) {
      throw new Error(`its file has ${info.size} bytes, more than the ${limits.maxBytes} allowed`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      if (performance.now() > deadline) {
        throw new Error(`reading its file took longer than ${limits.timeoutMs} ms`);
      }
      // What fstat said is there, and one byte more: a file that grew since is noticed. Never
      // more than one byte past the limit.
      const wanted = Math.max(info.size + 1 - total, MIN_READ_BYTES);
      const room = Math.min(wanted, READ_CHUNK_BYTES, limits.maxBytes + 1 - total);
      const chunk = Buffer.allocUnsafe(room);
      const { bytesRead } = await handle.read(chunk, 0, room, total);
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limits.maxBytes) {
        throw new Error(`its file grew past the ${limits.maxBytes} bytes allowed`);
      }
      // A short read of a regular file is its end.
      if (bytesRead < room) break;
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

type Attempt =
  | { kind: "result"; interpreter: WarmInterpreter; result: InterpreterResult }
  | Extract<InterpreterOutcome, { kind: "lost" }>;

/**
 * Runs generated pandas code on this machine: a pool of warm interpreters, each running
 * every request in a forked, confined child (see interpreter.py and hardening.py).
 */
export class LocalSandbox implements Sandbox {
  private readonly pool: InterpreterPool<WarmInterpreter>;
  /** Set once the pool is warm: why generated code is refused on this machine, if it is. */
  private refusalLine: string | undefined;
  private readonly tableFileBytes: number;
  private readonly traces = new TraceCache();

  private constructor(
    private readonly python: string,
    private readonly options: LocalSandboxOptions,
  ) {
    this.tableFileBytes = options.tableFileBytes ?? MAX_TABLE_FILE_BYTES;
    if (!Number.isInteger(this.tableFileBytes) || this.tableFileBytes < 0) {
      throw new Error(`tableFileBytes must be a non-negative integer, got ${this.tableFileBytes}`);
    }
    this.pool = new InterpreterPool(options.interpreters ?? defaultInterpreterCount(), () =>
      WarmInterpreter.start(python, {
        scratchRoot: options.scratchRoot,
        forkAhead: options.forkAhead,
        landlock: options.landlock,
      }),
    );
  }

  static async start(opts: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const python = opts.python ?? (await findPython()).executable;
    const sandbox = new LocalSandbox(python, opts);
    await warmedUp(sandbox, () => sandbox.pool.warm());
    // The kernel's answer is the same for every interpreter: the first one's probe tells it.
    sandbox.refusalLine = degradedRefusal((await sandbox.info()).protections);
    return sandbox;
  }

  /** Why generated code is refused here (no Landlock, no opt-in); undefined when it runs. */
  get refusal(): string | undefined {
    return this.refusalLine;
  }

  /** Process ids of the live interpreters (for diagnostics and tests). */
  get interpreterPids(): number[] {
    return this.pool.pids;
  }

  /** Runs whose derivation and lineage were taken from an earlier run of the same code. */
  get tracesReused(): number {
    return this.traces.reused;
  }

  async execute(request: ExecRequest): Promise<ExecResult> {
    const valid = await localExecRequest(request);
    if (this.pool.isClosed) throw new LocalSandboxClosedError();
    if (this.refusalLine) throw new LocalSandboxRefusedError(this.refusalLine);
    const tables = valid.tables.map((table) => table.sha256);
    return this.pool.schedule(tables, (lease) => this.run(lease, valid));
  }

  async info(): Promise<SandboxInfo> {
    return this.describe().then(({ info }) => info);
  }

  /** info(), plus how each protection was found (network namespace kind, Landlock ABI, uid). */
  async describe(): Promise<{ info: SandboxInfo; details: Record<string, string> }> {
    const interpreter = await this.pool.anyInterpreter();
    const { python, pandas, numpy, protections, details } = interpreter.readiness;
    return {
      info: {
        backend: "local",
        runtime: `Python ${python}, pandas ${pandas}, numpy ${numpy} (${this.python})`,
        protections: { fork: true, ...protections },
      },
      details: { ...details, interpreters: String(this.pool.size) },
    };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async run(lease: Lease<WarmInterpreter>, request: ValidExecRequest): Promise<ExecResult> {
    const started = performance.now();
    const elapsed = () => Math.max(1, Math.round(performance.now() - started));
    let outcome = await this.attempt(lease, request);
    // An interpreter that died before it began the code (it was dying when the request
    // came) says nothing about the code: send the request once more, to a fresh one.
    if (
      outcome.kind === "lost" &&
      !outcome.codeStarted &&
      outcome.error.type === "Crashed" &&
      !this.pool.isClosed
    ) {
      outcome = await this.attempt(lease, request);
    }
    if (outcome.kind === "lost") return failedResult(outcome.error, elapsed());
    const { interpreter, result } = outcome;
    const { scratch } = result;
    // The interpreter names the run's folder: one of its own, directly in its scratch root.
    const ownFolder =
      scratch !== undefined &&
      path.isAbsolute(scratch) &&
      path.dirname(scratch) === interpreter.readiness.scratch_root;
    // Moves the tables and figures the code left from its scratch directory into the artifact store.
    const execResult = await execResultFromRunner(
      result,
      async (file) => {
        if (!scratch || !ownFolder) {
          throw new Error("the sandbox interpreter did not say where its files are");
        }
        return readScratchFile(scratch, file, {
          maxBytes: this.tableFileBytes,
          timeoutMs: TABLE_READ_TIMEOUT_MS,
        });
      },
      elapsed,
    );
    if (scratch && leftFiles(result)) interpreter.release(scratch);
    return execResult;
  }

  private async attempt(
    lease: Lease<WarmInterpreter>,
    request: ValidExecRequest,
  ): Promise<Attempt> {
    const interpreter = await lease.interpreter();
    const tables = request.tables.map((table) => ({
      name: table.name,
      uri: table.uri,
      sha256: table.sha256,
      ...datesOf(table),
    }));
    const runKey = TraceCache.keyOf({ code: request.code, tables });
    const known = request.lineage === false ? undefined : this.traces.known(runKey);
    const outcome = await interpreter.run(
      {
        id: randomUUID(),
        code: request.code,
        tables,
        timeout_ms: request.timeoutMs,
        output_bytes: request.outputBytes,
        memory_mb: request.memoryMb,
        lineage: request.lineage,
        table_bytes: this.tableFileBytes,
        ...(known ? { known_trace: known } : {}),
      },
      {
        loadMs: this.options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
        runMs:
          request.timeoutMs +
          INTERPRETER_EXPORT_GRACE_MS +
          (this.options.graceMs ?? DEFAULT_GRACE_MS),
      },
    );
    if (outcome.kind === "lost") {
      lease.lost(interpreter);
      return outcome;
    }
    this.traces.settle(runKey, known, outcome.result.trace, outcome.result.result);
    return { kind: "result", interpreter, result: outcome.result };
  }
}
