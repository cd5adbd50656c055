/**
 * The E2B backend's sandboxes: started (with retries) and checked for python3 and
 * pandas, kept in a pool, kept alive while in use within the plan's lifetime, and killed.
 */
import { createHash, randomUUID } from "node:crypto";
import path from "node:path";
import {
  CommandExitError,
  E2BConfigError,
  E2BStartError,
  E2BTemplateError,
  errorMessage,
  isBusy,
  isPermanentStartFailure,
  retryAfterMs,
  withDeadline,
} from "./e2b-errors.js";
import { PoolClosedError, SandboxPool } from "./e2b-pool.js";
import { forgetPool } from "./e2b-reaper.js";
import {
  type Expected,
  layoutUnder,
  PROBE_COMMAND,
  parseProbe,
  type SandboxLayout,
} from "./e2b-remote.js";
import type { E2BCommandOutput, E2BRemoteSandbox } from "./e2b-sdk.js";
import {
  describeTemplate,
  type E2BSettings,
  RUN_ENV,
  sdkCall,
  transferMs,
} from "./e2b-settings.js";

/** Importing pandas in a fresh sandbox can take a while. */
const PROBE_TIMEOUT_MS = 60_000;

const TEMPLATE_ADVICE =
  "The e2b backend needs a template with python3 and pandas: leave E2B_TEMPLATE unset " +
  '(E2B\'s code interpreter template "code-interpreter-v1" is the default) or set it to a ' +
  "custom template built from it.";

/** A Python file uploaded to every sandbox: the runner and what it imports. */
export interface RunnerFile {
  name: string;
  source: string;
  sha256: string;
}

export function runnerFile(filePath: string, source: string): RunnerFile {
  return {
    name: path.basename(filePath),
    source,
    sha256: createHash("sha256").update(source).digest("hex"),
  };
}

/** One sandbox of the pool, ready to run requests. */
export interface PooledSandbox {
  remote: E2BRemoteSandbox;
  layout: SandboxLayout;
  python: string;
  pandas: string;
  /** The VM's memory (0: unknown). */
  memoryMb: number;
  /** Sandbox paths already written, with their sha256: the runner's files, and tables. */
  uploaded: Map<string, string>;
  /** Requests given to it so far. */
  requests: number;
  /** When the create request was sent: E2B counts the sandbox's life from its creation. */
  createdAt: number;
  /** When E2B stops it unless it is extended (clock ms). */
  aliveUntil: number;
  /** When E2B stops it whatever we ask: creation + the plan's maximum lifetime. */
  diesBy: number;
}

export function lastLines(text: string, count = 3): string {
  return text.trim().split("\n").slice(-count).join("\n");
}

/** The first retry waits up to `backoffMs`, each next one up to twice as long (full jitter). */
export function backoffDelay(settings: E2BSettings, attempt: number, error: unknown): number {
  const asked = retryAfterMs(error);
  if (asked !== undefined) return asked;
  const ceiling = Math.min(settings.backoffCapMs, settings.backoffMs * 2 ** (attempt - 1));
  // A busy service gets at least half the ceiling, so that retries do not pile up at once.
  const floor = isBusy(error) ? ceiling / 2 : 0;
  return Math.round(floor + settings.random() * (ceiling - floor));
}

/** At most `poolSize` live sandboxes, each lent to one request at a time. */
export class E2BSandboxes {
  private readonly pool: SandboxPool<PooledSandbox>;
  /** Every sandbox of this pool carries it in its metadata, so that lost ones can be listed. */
  readonly poolTag = randomUUID();

  constructor(
    private readonly settings: E2BSettings,
    private readonly files: RunnerFile[],
  ) {
    this.pool = new SandboxPool(settings.poolSize, {
      open: () => this.openSandbox(),
      dispose: (sandbox) => this.kill(sandbox.remote),
    });
  }

  get members(): PooledSandbox[] {
    return this.pool.members;
  }

  get isClosed(): boolean {
    return this.pool.isClosed;
  }

  /**
   * A pooled sandbox with at least `needMs` of life it can still be given: one that E2B
   * stopped or will stop too soon (its plan's maximum lifetime) is replaced here.
   */
  async acquireFor(needMs: number): Promise<PooledSandbox> {
    for (let tries = 0; ; tries += 1) {
      const sandbox = await this.pool.acquire();
      const now = this.settings.clock.now();
      const fresh = sandbox.requests === 0;
      const living = fresh || sandbox.aliveUntil - now > this.settings.lifetimeMarginMs;
      if (living && sandbox.diesBy - now >= needMs) {
        sandbox.requests += 1;
        return sandbox;
      }
      this.pool.discard(sandbox);
      if (fresh && tries > this.settings.poolSize) {
        throw new E2BStartError(
          `no E2B sandbox has ${needMs} ms of life left after its start (the plan's maximum lifetime is ${this.settings.maxLifetimeMs} ms)`,
        );
      }
    }
  }

  /** Starts one sandbox now (so that a bad setup fails here) and keeps it for later. */
  async warm(): Promise<void> {
    this.giveBack(await this.pool.acquire(), true);
  }

  /** Gives a sandbox back: kept for the next request when it still works, else killed. */
  giveBack(sandbox: PooledSandbox, reusable: boolean): void {
    if (reusable && !this.settings.sandboxPerRequest) this.pool.release(sandbox);
    else this.pool.discard(sandbox);
  }

  /** Kills every sandbox, then those its lost creates left in E2B; never throws. */
  async close(): Promise<unknown[]> {
    const failures = await this.pool.close();
    const { sdk, create } = this.settings;
    try {
      const ids = await withDeadline(
        sdk.list(create, { pool: this.poolTag }),
        this.settings.requestTimeoutMs,
        "listing this pool's sandboxes",
      );
      await Promise.all(
        ids.map((id) =>
          withDeadline(sdk.killById(create, id), this.settings.requestTimeoutMs, `killing ${id}`),
        ),
      );
      forgetPool(create, this.poolTag);
    } catch (error) {
      failures.push(error);
    }
    return failures;
  }

  /**
   * Extends the sandbox's life when a command of `commandMs` could outlast it: by what the
   * command needs plus a margin, at least the idle lifetime, at most the keep-alive cap
   * beyond the need, and never past the plan's maximum lifetime.
   */
  async keepAlive(sandbox: PooledSandbox, commandMs: number): Promise<void> {
    const { clock, lifetimeMarginMs, sandboxTimeoutMs, keepAliveCapMs } = this.settings;
    const now = clock.now();
    const needed = commandMs + lifetimeMarginMs;
    if (sandbox.aliveUntil - now >= needed) return;
    const wanted = Math.min(Math.max(sandboxTimeoutMs, needed), needed + keepAliveCapMs);
    const lifetime = Math.min(wanted, sandbox.diesBy - now);
    await sdkCall(
      this.settings,
      sandbox.remote.setTimeout(lifetime),
      "extending the sandbox's lifetime",
    );
    sandbox.aliveUntil = now + lifetime;
  }

  /** Starts a sandbox, retrying with jittered backoff within a window; permanent failures end at once. */
  private async openSandbox(): Promise<PooledSandbox> {
    const { startRetries, startWindowMs, clock } = this.settings;
    const began = clock.now();
    let lastError: unknown;
    let attempts = 0;
    for (let attempt = 0; attempt <= startRetries; attempt += 1) {
      if (attempt > 0) {
        const delay = backoffDelay(this.settings, attempt, lastError);
        if (clock.now() + delay - began > startWindowMs) break;
        await clock.sleep(delay);
      }
      if (this.pool.isClosed) throw new PoolClosedError();
      attempts += 1;
      try {
        return await this.createAndPrepare();
      } catch (error) {
        if (isPermanentStartFailure(error)) throw this.asConfigError(error);
        lastError = error;
      }
    }
    const { domain } = this.settings.create;
    const seconds = Math.round((clock.now() - began) / 1_000);
    throw new E2BStartError(
      `could not start an E2B sandbox (template ${describeTemplate(this.settings)}, domain ${
        domain ?? "default"
      }) in ${attempts} attempts over ${seconds} s: ${errorMessage(lastError)}`,
      { cause: lastError },
    );
  }

  private asConfigError(error: unknown): E2BConfigError {
    if (error instanceof E2BConfigError) return error;
    const { template, domain } = this.settings.create;
    return new E2BConfigError(
      `E2B refused to start a sandbox (template ${template}, domain ${
        domain ?? "default"
      }): ${errorMessage(error)}. Check E2B_API_KEY, E2B_DOMAIN and E2B_TEMPLATE.`,
      { cause: error },
    );
  }

  private async createAndPrepare(): Promise<PooledSandbox> {
    const { settings } = this;
    const createdAt = settings.clock.now();
    const remote = await withDeadline(
      settings.sdk.create({
        ...settings.create,
        metadata: { ...settings.create.metadata, pool: this.poolTag },
      }),
      settings.createTimeoutMs,
      "creating an E2B sandbox",
      // Created after we gave up on it: nobody would ever kill it.
      (late) => void this.kill(late).catch(() => undefined),
    );
    try {
      const probe = await this.probe(remote);
      const layout = layoutUnder(probe.home);
      const uploaded = new Map<string, string>();
      await Promise.all(
        this.files.map(async (file) => {
          const target = `${layout.bin}/${file.name}`;
          const timeoutMs = transferMs(settings, Buffer.byteLength(file.source));
          const abort = new AbortController();
          await withDeadline(
            remote.files.write(target, file.source, { timeoutMs, signal: abort.signal }),
            timeoutMs,
            `uploading ${file.name}`,
            undefined,
            abort,
          );
          uploaded.set(target, file.sha256);
        }),
      );
      return {
        remote,
        layout,
        python: probe.python,
        pandas: probe.pandas,
        memoryMb: probe.memoryMb,
        uploaded,
        requests: 0,
        createdAt,
        aliveUntil: createdAt + settings.sandboxTimeoutMs,
        diesBy: createdAt + settings.maxLifetimeMs,
      };
    } catch (error) {
      await this.kill(remote).catch(() => undefined);
      throw error;
    }
  }

  /** Finds the sandbox's home directory and memory, and checks that python3 can import pandas. */
  private async probe(remote: E2BRemoteSandbox) {
    let output: E2BCommandOutput;
    const template = describeTemplate(this.settings);
    try {
      output = await sdkCall(
        this.settings,
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
}

/** The files a run relies on, as the integrity check wants them. */
export function expectedFiles(sandbox: PooledSandbox, paths: string[]): Expected[] {
  return paths.flatMap((p) => {
    const sha256 = sandbox.uploaded.get(p);
    return sha256 ? [{ path: p, sha256 }] : [];
  });
}
