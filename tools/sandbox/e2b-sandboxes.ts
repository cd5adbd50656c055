/**
 * The E2B backend's sandboxes: started (with retries) and checked for python3 and
 * pandas, kept in a pool, kept alive while in use, and killed.
 */
import {
  CommandExitError,
  E2BConfigError,
  E2BStartError,
  E2BTemplateError,
  errorMessage,
  isPermanentStartFailure,
  withDeadline,
} from "./e2b-errors.js";
import { PoolClosedError, SandboxPool } from "./e2b-pool.js";
import { layoutUnder, PROBE_COMMAND, parseProbe, type SandboxLayout } from "./e2b-remote.js";
import type { E2BCommandOutput, E2BRemoteSandbox } from "./e2b-sdk.js";
import { type E2BSettings, RUN_ENV, sdkCall } from "./e2b-settings.js";

/** Importing pandas in a fresh sandbox can take a while. */
const PROBE_TIMEOUT_MS = 60_000;
/** A sandbox is kept alive at least this long past the end of the command it runs. */
const LIFETIME_MARGIN_MS = 60_000;
/** An idle sandbox this close to its end in E2B is not worth another request. */
const EXPIRY_MARGIN_MS = 5_000;

const TEMPLATE_ADVICE =
  "The e2b backend needs a template with python3 and pandas: set E2B_TEMPLATE (or the " +
  'template option) to one, e.g. E2B\'s code interpreter template "code-interpreter-v1" ' +
  "or a custom template built from it.";

/** One sandbox of the pool, ready to run requests. */
export interface PooledSandbox {
  remote: E2BRemoteSandbox;
  layout: SandboxLayout;
  python: string;
  pandas: string;
  /** Sandbox paths already written: the runner, and tables by content hash. */
  uploaded: Set<string>;
  /** When E2B stops it unless it is extended (ms since the epoch). */
  aliveUntil: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function lastLines(text: string, count = 3): string {
  return text.trim().split("\n").slice(-count).join("\n");
}

/** At most `poolSize` live sandboxes, each lent to one request at a time. */
export class E2BSandboxes {
  private readonly pool: SandboxPool<PooledSandbox>;

  constructor(
    private readonly settings: E2BSettings,
    private readonly runnerSource: string,
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
   * A pooled sandbox that E2B has not stopped yet: one left idle past its lifetime is
   * gone, and is replaced here rather than costing the request its one retry.
   */
  async acquireLive(): Promise<PooledSandbox> {
    for (;;) {
      const sandbox = await this.pool.acquire();
      if (sandbox.aliveUntil - Date.now() > EXPIRY_MARGIN_MS) return sandbox;
      this.pool.discard(sandbox);
    }
  }

  /** Starts one sandbox now (so that a bad setup fails here) and keeps it for later. */
  async warm(): Promise<void> {
    this.pool.release(await this.pool.acquire());
  }

  /** Gives a sandbox back: kept for the next request when it still works, else killed. */
  giveBack(sandbox: PooledSandbox, reusable: boolean): void {
    if (reusable) this.pool.release(sandbox);
    else this.pool.discard(sandbox);
  }

  /** Kills every sandbox; never throws, and returns what failed. */
  close(): Promise<unknown[]> {
    return this.pool.close();
  }

  /** Extends the sandbox's life in E2B when a command of `commandMs` could outlast it. */
  async keepAlive(sandbox: PooledSandbox, commandMs: number): Promise<void> {
    const needed = commandMs + LIFETIME_MARGIN_MS;
    if (sandbox.aliveUntil - Date.now() >= needed) return;
    const lifetime = Math.max(this.settings.sandboxTimeoutMs, needed);
    await sdkCall(
      this.settings,
      sandbox.remote.setTimeout(lifetime),
      "extending the sandbox's lifetime",
    );
    sandbox.aliveUntil = Date.now() + lifetime;
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
      await sdkCall(
        this.settings,
        remote.files.write(layout.runner, this.runnerSource),
        "uploading runner.py",
      );
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
