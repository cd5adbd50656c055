import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  type ExecError,
  type ExecResult,
  type TableRef,
  TableRefSchema,
} from "../../blackboard/schemas.js";
import { readArtifact } from "../artifacts.js";
import {
  CommandExitError,
  E2BConfigError,
  E2BStartError,
  E2BTemplateError,
  errorMessage,
  FileNotFoundError,
  isCommandTimeout,
  isPermanentStartFailure,
  withDeadline,
} from "./e2b-errors.js";
import { PoolClosedError, SandboxPool } from "./e2b-pool.js";
import {
  layoutUnder,
  networkProbeCommand,
  PROBE_COMMAND,
  parseProbe,
  type RunPaths,
  removeCommand,
  runnerCommand,
  runPaths,
  type SandboxLayout,
  tablePath,
} from "./e2b-remote.js";
import {
  cloudE2BSdk,
  type E2BCommandOutput,
  type E2BCreateOptions,
  type E2BRemoteSandbox,
  type E2BSdk,
} from "./e2b-sdk.js";
import { execResultFromRunner, failedResult, RunnerResultSchema } from "./results.js";
import { type ExecRequest, ExecRequestSchema, type Sandbox, type SandboxInfo } from "./types.js";

export { E2BConfigError, E2BStartError, E2BTemplateError } from "./e2b-errors.js";
export type {
  E2BCommandOutput,
  E2BCreateOptions,
  E2BRemoteSandbox,
  E2BRunOptions,
  E2BSdk,
} from "./e2b-sdk.js";

const RUNNER_SCRIPT = fileURLToPath(new URL("./runner.py", import.meta.url));

/** Importing pandas in a fresh sandbox can take a while. */
const PROBE_TIMEOUT_MS = 60_000;
const REMOVE_TIMEOUT_MS = 10_000;
const NETWORK_PROBE_TIMEOUT_MS = 10_000;
/** A sandbox is kept alive at least this long past the end of the command it runs. */
const LIFETIME_MARGIN_MS = 60_000;
/** An idle sandbox this close to its end in E2B is not worth another request. */
const EXPIRY_MARGIN_MS = 5_000;

/** Passed to every command; nothing from this process's own environment goes along. */
const RUN_ENV: Record<string, string> = {
  PYTHONIOENCODING: "utf-8",
  PYTHONDONTWRITEBYTECODE: "1",
  OMP_NUM_THREADS: "1",
  OPENBLAS_NUM_THREADS: "1",
  MKL_NUM_THREADS: "1",
};

const MISSING_KEY_MESSAGE =
  "the e2b sandbox backend needs an E2B API key: set E2B_API_KEY (and E2B_DOMAIN for a " +
  "self-hosted E2B), or pass apiKey; or use the local sandbox instead";

const TEMPLATE_ADVICE =
  "The e2b backend needs a template with python3 and pandas: set E2B_TEMPLATE (or the " +
  'template option) to one, e.g. E2B\'s code interpreter template "code-interpreter-v1" ' +
  "or a custom template built from it.";

export interface E2BSandboxOptions {
  /** Default: E2B_API_KEY. */
  apiKey?: string;
  /** A self-hosted E2B; default: E2B_DOMAIN, else E2B's cloud. */
  domain?: string;
  /**
   * A template with python3 and pandas; default: E2B_TEMPLATE, else the SDK's default
   * template. Each new sandbox is checked, and refused with E2BTemplateError without pandas.
   */
  template?: string;
  /** Sandboxes kept and reused within the run (default 2). */
  poolSize?: number;
  /** Default: the real `e2b` SDK; tests pass a fake. */
  sdk?: E2BSdk;
  /** Further tries after a failed sandbox start (default 3). */
  startRetries?: number;
  /** Wait before the first retry, doubled before each next one (default 500 ms). */
  backoffMs?: number;
  /** How long an unused sandbox stays alive in E2B (default 10 min); use extends it. */
  sandboxTimeoutMs?: number;
  /** Bound of one sandbox creation (default 60 s). */
  createTimeoutMs?: number;
  /** Bound of every other SDK call but the run itself (default 30 s). */
  requestTimeoutMs?: number;
  /** How long past the request's timeout the runner may take (default 5 s). */
  graceMs?: number;
  /** Let code reach the internet (default false). */
  allowInternet?: boolean;
  /** Where info() checks that the internet is out of reach (default 1.1.1.1:443). */
  networkProbe?: { host: string; port: number };
  /** The runner uploaded to each sandbox (default: runner.py next to this file). */
  runnerPath?: string;
}

interface Settings {
  sdk: E2BSdk;
  create: E2BCreateOptions;
  poolSize: number;
  startRetries: number;
  backoffMs: number;
  sandboxTimeoutMs: number;
  createTimeoutMs: number;
  requestTimeoutMs: number;
  graceMs: number;
  networkProbe: { host: string; port: number };
  runnerPath: string;
}

/** One sandbox of the pool, ready to run requests. */
interface PooledSandbox {
  remote: E2BRemoteSandbox;
  layout: SandboxLayout;
  python: string;
  pandas: string;
  /** Sandbox paths already written: the runner, and tables by content hash. */
  uploaded: Set<string>;
  /** When E2B stops it unless it is extended (ms since the epoch). */
  aliveUntil: number;
}

type ValidRequest = z.output<typeof ExecRequestSchema> & { tables: TableRef[] };

/** The sandbox kept working: the result stands, and the sandbox goes back to the pool. */
interface Finished {
  result: ExecResult;
  reusable: boolean;
}

function setting(value: number | undefined, fallback: number, name: string, min = 0): number {
  const chosen = value ?? fallback;
  if (!Number.isFinite(chosen) || chosen < min) {
    throw new E2BConfigError(`${name} must be a number >= ${min}, not ${String(value)}`);
  }
  return chosen;
}

function resolveSettings(opts: E2BSandboxOptions): Settings {
  const apiKey = (opts.apiKey ?? process.env.E2B_API_KEY ?? "").trim();
  if (!apiKey) throw new E2BConfigError(MISSING_KEY_MESSAGE);
  const domain = opts.domain ?? (process.env.E2B_DOMAIN?.trim() || undefined);
  const template = opts.template ?? (process.env.E2B_TEMPLATE?.trim() || undefined);
  const sandboxTimeoutMs = setting(opts.sandboxTimeoutMs, 10 * 60_000, "sandboxTimeoutMs", 1);
  const createTimeoutMs = setting(opts.createTimeoutMs, 60_000, "createTimeoutMs", 1);
  return {
    sdk: opts.sdk ?? cloudE2BSdk,
    create: {
      apiKey,
      domain,
      template,
      timeoutMs: sandboxTimeoutMs,
      requestTimeoutMs: createTimeoutMs,
      allowInternetAccess: opts.allowInternet ?? false,
      metadata: { app: "tableminds" },
    },
    poolSize: Math.floor(setting(opts.poolSize, 2, "poolSize", 1)),
    startRetries: Math.floor(setting(opts.startRetries, 3, "startRetries")),
    backoffMs: setting(opts.backoffMs, 500, "backoffMs"),
    sandboxTimeoutMs,
    createTimeoutMs,
    requestTimeoutMs: setting(opts.requestTimeoutMs, 30_000, "requestTimeoutMs", 1),
    graceMs: setting(opts.graceMs, 5_000, "graceMs"),
    networkProbe: opts.networkProbe ?? { host: "1.1.1.1", port: 443 },
    runnerPath: opts.runnerPath ?? RUNNER_SCRIPT,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function timeoutError(timeoutMs: number): ExecError {
  return { type: "Timeout", message: `execution exceeded ${timeoutMs} ms`, line: null };
}

function sandboxError(message: string): ExecError {
  return { type: "SandboxError", message, line: null };
}

function lastLines(text: string, count = 3): string {
  return text.trim().split("\n").slice(-count).join("\n");
}

/** Why runner.py left no result, from how its command ended. */
function missingResultError(exit: E2BCommandOutput): ExecError {
  const output = lastLines(`${exit.stdout}\n${exit.stderr}`);
  const detail = output ? `: ${output}` : "";
  if (exit.exitCode === 0) return sandboxError(`runner.py ended without a result${detail}`);
  if (exit.exitCode > 128) {
    const signal = exit.exitCode - 128;
    const hint = signal === 9 ? " (out of memory, or killed)" : "";
    return {
      type: "Crashed",
      message: `the code's process was killed by signal ${signal}${hint} before returning a result${detail}`,
      line: null,
    };
  }
  return {
    type: "Crashed",
    message: `the code's process exited with code ${exit.exitCode} before returning a result${detail}`,
    line: null,
  };
}

/**
 * Runs generated pandas code in E2B cloud sandboxes: each request is a one-shot run of
 * runner.py inside a pooled sandbox, with its tables uploaded once per sandbox.
 */
export class E2BSandbox implements Sandbox {
  private readonly pool: SandboxPool<PooledSandbox>;
  private closing: Promise<void> | undefined;
  private closeFailures: unknown[] = [];

  private constructor(
    private readonly settings: Settings,
    private readonly runnerSource: string,
  ) {
    this.pool = new SandboxPool(settings.poolSize, {
      open: () => this.openSandbox(),
      dispose: (sandbox) => this.kill(sandbox.remote),
    });
  }

  /** Checks the configuration and starts one sandbox, so that a bad setup fails here. */
  static async start(opts: E2BSandboxOptions = {}): Promise<E2BSandbox> {
    const settings = resolveSettings(opts);
    let runnerSource: string;
    try {
      runnerSource = await readFile(settings.runnerPath, "utf8");
    } catch (error) {
      throw new Error(`the sandbox runner is missing: ${errorMessage(error)}`);
    }
    const sandbox = new E2BSandbox(settings, runnerSource);
    try {
      sandbox.pool.release(await sandbox.pool.acquire());
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    return sandbox;
  }

  /** Ids of the sandboxes in the pool (for diagnostics and tests). */
  get sandboxIds(): string[] {
    return this.pool.members.map((sandbox) => sandbox.remote.sandboxId);
  }

  /** What went wrong while killing sandboxes at close(), if anything. */
  get failuresAtClose(): unknown[] {
    return [...this.closeFailures];
  }

  async execute(request: ExecRequest): Promise<ExecResult> {
    const parsed = ExecRequestSchema.parse(request);
    const tables = z.array(TableRefSchema).parse(parsed.tables);
    if (this.pool.isClosed) throw new PoolClosedError();
    const job: ValidRequest = { ...parsed, tables };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    // Failing to get a sandbox at all is the setup's fault: that one throws.
    const first = await this.runOnce(job, elapsed);
    if ("result" in first) return first.result;
    if (this.pool.isClosed) {
      return failedResult(sandboxError("the E2B sandbox was closed during the run"), elapsed());
    }
    // The sandbox died under the request: once more, on a fresh one.
    let second: Finished | { lost: string };
    try {
      second = await this.runOnce(job, elapsed);
    } catch (error) {
      second = { lost: `no replacement could be started: ${errorMessage(error)}` };
    }
    if ("result" in second) return second.result;
    return failedResult(
      sandboxError(
        `the E2B sandbox was lost (${first.lost}); the retry failed too (${second.lost})`,
      ),
      elapsed(),
    );
  }

  async info(): Promise<SandboxInfo> {
    const sandbox = await this.acquireLive();
    let internetBlocked = false;
    let healthy = true;
    try {
      const { host, port } = this.settings.networkProbe;
      try {
        await this.call(
          sandbox.remote.commands.run(networkProbeCommand(host, port), {
            timeoutMs: NETWORK_PROBE_TIMEOUT_MS,
            envs: RUN_ENV,
          }),
          "checking network access",
          NETWORK_PROBE_TIMEOUT_MS,
        );
      } catch (error) {
        // Only a probe that ran and could not connect shows that the network is closed.
        if (error instanceof CommandExitError) internetBlocked = true;
        else healthy = false;
      }
    } finally {
      if (healthy) this.pool.release(sandbox);
      else this.pool.discard(sandbox);
    }
    const template = this.settings.create.template ?? "the SDK's default";
    return {
      backend: "e2b",
      runtime: `E2B template ${template}: Python ${sandbox.python}, pandas ${sandbox.pandas}`,
      protections: {
        // E2B runs every sandbox in its own microVM.
        isolatedVm: true,
        // A run past its timeout is cut off, and its sandbox killed.
        wallClockKill: true,
        outputCap: true,
        scratchDir: true,
        // No variable of this process is sent to the sandbox.
        scrubbedEnv: true,
        memoryLimit: true,
        // Asked of E2B at creation, and confirmed by a failed connection just now.
        noInternet: !this.settings.create.allowInternetAccess && internetBlocked,
      },
    };
  }

  /** Kills every sandbox of the pool; never throws, and a second call does nothing more. */
  close(): Promise<void> {
    this.closing ??= this.pool.close().then((failures) => {
      this.closeFailures = failures;
    });
    return this.closing;
  }

  // --- one request ---------------------------------------------------------------

  /** Runs the request on a pooled sandbox; `lost` when that sandbox failed under it. */
  private async runOnce(
    job: ValidRequest,
    elapsed: () => number,
  ): Promise<Finished | { lost: string }> {
    const sandbox = await this.acquireLive();
    let reusable = false;
    try {
      const finished = await this.attempt(sandbox, job, elapsed);
      reusable = finished.reusable;
      return finished;
    } catch (error) {
      return { lost: errorMessage(error) };
    } finally {
      if (reusable) this.pool.release(sandbox);
      else this.pool.discard(sandbox);
    }
  }

  /** Throws when the sandbox failed (it is then discarded and the request retried). */
  private async attempt(
    sandbox: PooledSandbox,
    job: ValidRequest,
    elapsed: () => number,
  ): Promise<Finished> {
    const commandMs = job.timeoutMs + this.settings.graceMs;
    await this.keepAlive(sandbox, commandMs);
    const tableError = await this.uploadTables(sandbox, job.tables);
    if (tableError) return { result: failedResult(tableError, elapsed()), reusable: true };

    const run = runPaths(sandbox.layout, randomUUID());
    const request = {
      code: job.code,
      tables: job.tables.map((table) => ({
        name: table.name,
        path: tablePath(sandbox.layout, table.sha256, table.uri),
      })),
      timeout_ms: job.timeoutMs,
      output_bytes: job.outputBytes,
      scratch: run.scratch,
    };
    await this.call(
      sandbox.remote.files.write(run.request, JSON.stringify(request)),
      "writing the request",
    );
    let finished: Finished | undefined;
    try {
      const exit = await this.runRunner(sandbox, run, job.memoryMb, commandMs);
      if (exit === "timeout") {
        // The runner overran its own timeout: whatever it left running dies with the sandbox.
        finished = {
          result: failedResult(timeoutError(job.timeoutMs), elapsed()),
          reusable: false,
        };
        return finished;
      }
      const report = await this.readReport(sandbox, run, exit);
      const durationMs = elapsed();
      const result =
        "type" in report
          ? failedResult(report, durationMs)
          : await execResultFromRunner(
              report,
              (file) =>
                this.call(
                  sandbox.remote.files.read(`${run.scratch}/${file}`),
                  `downloading table ${file}`,
                ),
              durationMs,
            );
      finished = { result, reusable: true };
      return finished;
    } finally {
      if (finished?.reusable) await this.removeQuietly(sandbox, run);
    }
  }

  private async runRunner(
    sandbox: PooledSandbox,
    run: RunPaths,
    memoryMb: number,
    commandMs: number,
  ): Promise<E2BCommandOutput | "timeout"> {
    try {
      return await this.call(
        sandbox.remote.commands.run(runnerCommand(sandbox.layout, run, memoryMb), {
          timeoutMs: commandMs,
          envs: RUN_ENV,
        }),
        "running the code",
        commandMs,
      );
    } catch (error) {
      if (error instanceof CommandExitError) {
        return { exitCode: error.exitCode, stdout: error.stdout, stderr: error.stderr };
      }
      if (isCommandTimeout(error)) return "timeout";
      throw error;
    }
  }

  /** The runner's result, or the error that explains why there is none. */
  private async readReport(
    sandbox: PooledSandbox,
    run: RunPaths,
    exit: E2BCommandOutput,
  ): Promise<z.infer<typeof RunnerResultSchema> | ExecError> {
    let bytes: Uint8Array;
    try {
      bytes = await this.call(sandbox.remote.files.read(run.result), "reading the result");
    } catch (error) {
      if (error instanceof FileNotFoundError) return missingResultError(exit);
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(bytes).toString("utf8"));
    } catch (error) {
      return sandboxError(`runner.py wrote a result that is not JSON: ${errorMessage(error)}`);
    }
    const checked = RunnerResultSchema.safeParse(parsed);
    if (!checked.success) {
      return sandboxError(`runner.py wrote an unexpected result: ${checked.error.message}`);
    }
    return checked.data;
  }

  /**
   * Uploads the tables this sandbox does not have yet. A table whose bytes cannot be
   * read here is the request's problem, returned as an error; upload failures throw.
   */
  private async uploadTables(
    sandbox: PooledSandbox,
    tables: TableRef[],
  ): Promise<ExecError | undefined> {
    for (const table of tables) {
      const target = tablePath(sandbox.layout, table.sha256, table.uri);
      if (sandbox.uploaded.has(target)) continue;
      let bytes: Buffer;
      try {
        bytes = await readArtifact(table.uri);
      } catch (error) {
        return {
          type: "TableLoadError",
          message: `table ${table.name} could not be read: ${errorMessage(error)}`,
          line: null,
        };
      }
      await this.call(sandbox.remote.files.write(target, bytes), `uploading table ${table.name}`);
      sandbox.uploaded.add(target);
    }
    return undefined;
  }

  /** Extends the sandbox's life in E2B when the coming command could outlast it. */
  private async keepAlive(sandbox: PooledSandbox, commandMs: number): Promise<void> {
    const needed = commandMs + LIFETIME_MARGIN_MS;
    if (sandbox.aliveUntil - Date.now() >= needed) return;
    const lifetime = Math.max(this.settings.sandboxTimeoutMs, needed);
    await this.call(sandbox.remote.setTimeout(lifetime), "extending the sandbox's lifetime");
    sandbox.aliveUntil = Date.now() + lifetime;
  }

  private async removeQuietly(sandbox: PooledSandbox, run: RunPaths): Promise<void> {
    try {
      await this.call(
        sandbox.remote.commands.run(removeCommand(run.dir), { timeoutMs: REMOVE_TIMEOUT_MS }),
        "removing the run directory",
        REMOVE_TIMEOUT_MS,
      );
    } catch {
      // Best effort: the next request finds out whether the sandbox is still there.
    }
  }

  // --- sandboxes -------------------------------------------------------------------

  /**
   * A pooled sandbox that E2B has not stopped yet: one left idle past its lifetime is
   * gone, and is replaced here rather than costing the request its one retry.
   */
  private async acquireLive(): Promise<PooledSandbox> {
    for (;;) {
      const sandbox = await this.pool.acquire();
      if (sandbox.aliveUntil - Date.now() > EXPIRY_MARGIN_MS) return sandbox;
      this.pool.discard(sandbox);
    }
  }

  /** Starts a sandbox, retrying with exponential backoff; permanent failures end at once. */
  private async openSandbox(): Promise<PooledSandbox> {
    const { startRetries, backoffMs } = this.settings;
    let lastError: unknown;
    for (let attempt = 0; attempt <= startRetries; attempt += 1) {
      if (attempt > 0) await sleep(backoffMs * 2 ** (attempt - 1));
      if (this.pool.isClosed) throw new PoolClosedError();
      try {
        return await this.createAndPrepare();
      } catch (error) {
        if (isPermanentStartFailure(error)) throw this.asConfigError(error);
        lastError = error;
      }
    }
    const { template, domain } = this.settings.create;
    throw new E2BStartError(
      `could not start an E2B sandbox (template ${template ?? "default"}, domain ${
        domain ?? "default"
      }) in ${startRetries + 1} attempts: ${errorMessage(lastError)}`,
      { cause: lastError },
    );
  }

  private asConfigError(error: unknown): E2BConfigError {
    if (error instanceof E2BConfigError) return error;
    const { template, domain } = this.settings.create;
    return new E2BConfigError(
      `E2B refused to start a sandbox (template ${template ?? "default"}, domain ${
        domain ?? "default"
      }): ${errorMessage(error)}. Check E2B_API_KEY, E2B_DOMAIN and E2B_TEMPLATE.`,
      { cause: error },
    );
  }

  private async createAndPrepare(): Promise<PooledSandbox> {
    const remote = await withDeadline(
      this.settings.sdk.create(this.settings.create),
      this.settings.createTimeoutMs,
      "creating an E2B sandbox",
      // Created after we gave up on it: nobody would ever kill it.
      (late) => void this.kill(late).catch(() => undefined),
    );
    try {
      const probe = await this.probe(remote);
      const layout = layoutUnder(probe.home);
      await this.call(remote.files.write(layout.runner, this.runnerSource), "uploading runner.py");
      return {
        remote,
        layout,
        python: probe.python,
        pandas: probe.pandas,
        uploaded: new Set([layout.runner]),
        aliveUntil: Date.now() + this.settings.sandboxTimeoutMs,
      };
    } catch (error) {
      await this.kill(remote).catch(() => undefined);
      throw error;
    }
  }

  /** Finds the sandbox's home directory and checks that python3 can import pandas. */
  private async probe(remote: E2BRemoteSandbox) {
    let output: E2BCommandOutput;
    const template = this.settings.create.template ?? "(the SDK's default)";
    try {
      output = await this.call(
        remote.commands.run(PROBE_COMMAND, { timeoutMs: PROBE_TIMEOUT_MS, envs: RUN_ENV }),
        "checking python3 and pandas",
        PROBE_TIMEOUT_MS,
      );
    } catch (error) {
      if (!(error instanceof CommandExitError)) throw error;
      const detail = lastLines(`${error.stdout}\n${error.stderr}`);
      throw new E2BTemplateError(
        `E2B template ${template} cannot run python3 with pandas (exit ${error.exitCode}: ${detail}). ${TEMPLATE_ADVICE}`,
      );
    }
    const probe = parseProbe(output.stdout);
    if (!probe) {
      throw new E2BTemplateError(
        `E2B template ${template} gave an unexpected answer to the python3/pandas check: ${lastLines(output.stdout)}. ${TEMPLATE_ADVICE}`,
      );
    }
    return probe;
  }

  private kill(remote: E2BRemoteSandbox): Promise<void> {
    return withDeadline(
      remote.kill(),
      this.settings.requestTimeoutMs,
      `killing E2B sandbox ${remote.sandboxId}`,
    ).then(() => undefined);
  }

  /** Every SDK call goes through here: none may take longer than `ms`. */
  private call<T>(work: Promise<T>, what: string, extraMs = 0): Promise<T> {
    return withDeadline(work, this.settings.requestTimeoutMs + extraMs, what);
  }
}
