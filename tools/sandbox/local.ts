import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import type { ExecResult } from "../../blackboard/schemas.js";
import {
  defaultWorkerCount,
  type Lease,
  LocalSandboxClosedError,
  WorkerPool,
} from "./local-pool.js";
import type { WorkerResult } from "./local-protocol.js";
import { WarmWorker, type WorkerOutcome } from "./local-worker.js";
import { findPython } from "./python.js";
import { execResultFromRunner, failedResult } from "./results.js";
import {
  type ExecRequest,
  parseExecRequest,
  type Sandbox,
  type SandboxInfo,
  type ValidExecRequest,
  warmedUp,
} from "./types.js";

export { defaultWorkerCount, LocalSandboxClosedError } from "./local-pool.js";
export type { WorkerReady, WorkerRequest, WorkerResult, WorkerVersions } from "./local-protocol.js";
export {
  WarmWorker,
  type WarmWorkerOptions,
  type WorkerBudget,
  type WorkerOutcome,
} from "./local-worker.js";

const DEFAULT_GRACE_MS = 3_000;
const DEFAULT_LOAD_TIMEOUT_MS = 60_000;
/** Mirrors EXPORT_GRACE_S in worker.py: time a timed-out child gets to save its tables. */
const WORKER_EXPORT_GRACE_MS = 1_000;

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

/** Reads a file the code's process may have replaced: a symlink is refused, not followed. */
async function readPlainFile(file: string): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

type Attempt =
  | { kind: "result"; worker: WarmWorker; result: WorkerResult }
  | Extract<WorkerOutcome, { kind: "lost" }>;

/**
 * Runs generated pandas code on this machine: a pool of warm workers, each running
 * every request in a forked, confined child (see worker.py and hardening.py).
 */
export class LocalSandbox implements Sandbox {
  private readonly pool: WorkerPool<WarmWorker>;

  private constructor(
    private readonly python: string,
    private readonly options: LocalSandboxOptions,
  ) {
    this.pool = new WorkerPool(options.workers ?? defaultWorkerCount(), () =>
      WarmWorker.start(python, { scratchRoot: options.scratchRoot, forkAhead: options.forkAhead }),
    );
  }

  static async start(opts: LocalSandboxOptions = {}): Promise<LocalSandbox> {
    const python = opts.python ?? (await findPython()).executable;
    const sandbox = new LocalSandbox(python, opts);
    return warmedUp(sandbox, () => sandbox.pool.warm());
  }

  /** Process ids of the live workers (for diagnostics and tests). */
  get workerPids(): number[] {
    return this.pool.pids;
  }

  async execute(request: ExecRequest): Promise<ExecResult> {
    const valid = parseExecRequest(request);
    if (this.pool.isClosed) throw new LocalSandboxClosedError();
    const tables = valid.tables.map((table) => table.sha256);
    return this.pool.schedule(tables, (lease) => this.run(lease, valid));
  }

  async info(): Promise<SandboxInfo> {
    return this.describe().then(({ info }) => info);
  }

  /** info(), plus how each protection was found (network namespace kind, Landlock ABI, uid). */
  async describe(): Promise<{ info: SandboxInfo; details: Record<string, string> }> {
    const worker = await this.pool.anyWorker();
    const { python, pandas, numpy, protections, details } = worker.readiness;
    return {
      info: {
        backend: "local",
        runtime: `Python ${python}, pandas ${pandas}, numpy ${numpy} (${this.python})`,
        protections: { fork: true, ...protections },
      },
      details: { ...details, workers: String(this.pool.size) },
    };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async run(lease: Lease<WarmWorker>, request: ValidExecRequest): Promise<ExecResult> {
    const started = performance.now();
    const elapsed = () => Math.max(1, Math.round(performance.now() - started));
    let outcome = await this.attempt(lease, request);
    // A worker that died before it began the code (it was dying when the request
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
    const { worker, result } = outcome;
    const { scratch } = result;
    // Moves the tables the code left behind from its scratch directory into the artifact store.
    const execResult = await execResultFromRunner(
      result,
      async (file) => {
        if (!scratch) throw new Error("the sandbox worker did not say where its tables are");
        return readPlainFile(path.join(scratch, file));
      },
      elapsed,
    );
    if (scratch && result.tables.length > 0) worker.release(scratch);
    return execResult;
  }

  private async attempt(lease: Lease<WarmWorker>, request: ValidExecRequest): Promise<Attempt> {
    const worker = await lease.worker();
    const outcome = await worker.run(
      {
        id: randomUUID(),
        code: request.code,
        tables: request.tables.map(({ name, uri, sha256 }) => ({ name, uri, sha256 })),
        timeout_ms: request.timeoutMs,
        output_bytes: request.outputBytes,
        memory_mb: request.memoryMb,
        lineage: request.lineage,
      },
      {
        loadMs: this.options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
        runMs:
          request.timeoutMs + WORKER_EXPORT_GRACE_MS + (this.options.graceMs ?? DEFAULT_GRACE_MS),
      },
    );
    if (outcome.kind === "lost") {
      lease.lost(worker);
      return outcome;
    }
    return { kind: "result", worker, result: outcome.result };
  }
}
