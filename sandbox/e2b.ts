import { readFile } from "node:fs/promises";
import type { ExecResult } from "../blackboard/schemas.js";
import { E2BConfigError, errorMessage } from "./e2b-errors.js";
import { PoolClosedError } from "./e2b-pool.js";
import { type NetworkCheck, networkProbeCommand, parseNetworkProbe } from "./e2b-remote.js";
import { commandMs, E2BRun, type Finished, sandboxError } from "./e2b-run.js";
import { E2BSandboxes, type PooledSandbox, runnerFile } from "./e2b-sandboxes.js";
import {
  describeTemplate,
  type E2BSandboxOptions,
  type E2BSettings,
  RUN_ENV,
  resolveSettings,
  sdkCall,
} from "./e2b-settings.js";
import { failedResult } from "./results.js";
import {
  type ExecRequest,
  localExecRequest,
  type Sandbox,
  type SandboxInfo,
  type ValidExecRequest,
  warmedUp,
} from "./types.js";

export { E2BConfigError, E2BStartError, E2BTemplateError } from "./e2b-errors.js";
export { installE2BExitHooks, killCreatedE2BSandboxes } from "./e2b-reaper.js";
export type {
  E2BCommandOutput,
  E2BConnection,
  E2BCreateOptions,
  E2BRemoteSandbox,
  E2BRunOptions,
  E2BSdk,
  E2BTransferOptions,
} from "./e2b-sdk.js";
export type { E2BClock, E2BSandboxOptions } from "./e2b-settings.js";
export { DEFAULT_TEMPLATE } from "./e2b-settings.js";

const NETWORK_PROBE_TIMEOUT_MS = 15_000;

/** What `doctor` shows about the E2B backend beyond SandboxInfo. */
export interface E2BDetails {
  template: string;
  network: NetworkCheck;
  networkDetail: string;
  vmMemoryMb: number;
  sandboxPerRequest: boolean;
  maxLifetimeMs: number;
}

/**
 * Runs generated pandas code in E2B cloud sandboxes: each request is a one-shot run of
 * the runner inside a pooled sandbox (or a sandbox of its own, with `sandboxPerRequest`),
 * with its tables uploaded once per sandbox and checked by hash before every run.
 */
export class E2BSandbox implements Sandbox {
  private readonly sandboxes: E2BSandboxes;
  private closing: Promise<void> | undefined;
  private closeFailures: unknown[] = [];

  private constructor(
    private readonly settings: E2BSettings,
    files: ReturnType<typeof runnerFile>[],
  ) {
    this.sandboxes = new E2BSandboxes(settings, files);
  }

  /** Checks the configuration and starts one sandbox, so that a bad setup fails here. */
  static async start(opts: E2BSandboxOptions = {}): Promise<E2BSandbox> {
    const settings = resolveSettings(opts);
    const files: ReturnType<typeof runnerFile>[] = [];
    for (const file of [settings.runnerPath, ...settings.helperPaths]) {
      try {
        files.push(runnerFile(file, await readFile(file, "utf8")));
      } catch (error) {
        throw new Error(`the sandbox runner is missing: ${errorMessage(error)}`);
      }
    }
    const sandbox = new E2BSandbox(settings, files);
    return warmedUp(sandbox, () => sandbox.sandboxes.warm());
  }

  /** Ids of the sandboxes in the pool (for diagnostics and tests). */
  get sandboxIds(): string[] {
    return this.sandboxes.members.map((sandbox) => sandbox.remote.sandboxId);
  }

  /** What went wrong while killing sandboxes at close(), if anything. */
  get failuresAtClose(): unknown[] {
    return [...this.closeFailures];
  }

  async execute(request: ExecRequest): Promise<ExecResult> {
    const job = await localExecRequest(request);
    if (this.sandboxes.isClosed) throw new PoolClosedError();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const { maxLifetimeMs, lifetimeMarginMs } = this.settings;
    if (commandMs(this.settings, job) + lifetimeMarginMs > maxLifetimeMs) {
      return failedResult(
        {
          type: "Timeout",
          message: `a timeout of ${job.timeoutMs} ms cannot be run on E2B: a sandbox lives at most ${maxLifetimeMs} ms (the plan's maximum lifetime, maxLifetimeMs)`,
          line: null,
        },
        elapsed(),
      );
    }

    const first = await this.runOnce(job, elapsed);
    if ("result" in first) return first.result;
    if (this.sandboxes.isClosed) {
      return failedResult(sandboxError("the E2B sandbox was closed during the run"), elapsed());
    }
    if (first.noStart) return failedResult(sandboxError(first.lost), elapsed());
    // The sandbox died under the request: once more, on a fresh one.
    const second = await this.runOnce(job, elapsed);
    if ("result" in second) return second.result;
    return failedResult(
      sandboxError(
        `the E2B sandbox was lost (${first.lost}); the retry failed too (${second.lost})`,
      ),
      elapsed(),
    );
  }

  async info(): Promise<SandboxInfo> {
    return (await this.describe()).info;
  }

  /** SandboxInfo, and what `doctor` shows besides. */
  async describe(): Promise<{ info: SandboxInfo; details: E2BDetails }> {
    const sandbox = await this.sandboxes.acquireFor(0);
    let network: NetworkCheck = "undetermined";
    let networkDetail = "";
    let healthy = true;
    try {
      const { host, port, answerMs } = this.settings.networkProbe;
      const output = await sdkCall(
        this.settings,
        sandbox.remote.commands.run(networkProbeCommand(host, port, answerMs), {
          timeoutMs: NETWORK_PROBE_TIMEOUT_MS,
          envs: RUN_ENV,
        }),
        "checking network access",
        NETWORK_PROBE_TIMEOUT_MS,
      );
      network = parseNetworkProbe(output.stdout);
      networkDetail = `${host}:${port}: ${output.stdout.trim().split("\n")[0] ?? ""}`;
    } catch (error) {
      networkDetail = `the check itself failed: ${errorMessage(error)}`;
      healthy = !(error instanceof E2BConfigError);
    } finally {
      this.sandboxes.giveBack(sandbox, healthy);
    }
    const { settings } = this;
    const info: SandboxInfo = {
      backend: "e2b",
      runtime: `E2B template ${settings.create.template}: Python ${sandbox.python}, pandas ${sandbox.pandas}`,
      protections: {
        // Requests share a VM unless each gets a sandbox of its own.
        isolatedVm: settings.sandboxPerRequest,
        // The runner's files and the tables are checked by hash before every request.
        integrityCheck: true,
        auditHook: true,
        // E2B stops the shell at its timeout; the sandbox is then killed with what it left.
        wallClockKill: true,
        outputCap: true,
        // A new run directory for every request, removed afterwards.
        scratchDir: true,
        scrubbedEnv: true,
        memoryLimit: sandbox.memoryMb > 0 && memoryBelowVm(settings, sandbox.memoryMb),
        // Asked of E2B at creation, and confirmed by a request that got no answer just now.
        noInternet: !settings.create.allowInternetAccess && network === "blocked",
      },
    };
    return {
      info,
      details: {
        template: describeTemplate(settings),
        network,
        networkDetail,
        vmMemoryMb: sandbox.memoryMb,
        sandboxPerRequest: settings.sandboxPerRequest,
        maxLifetimeMs: settings.maxLifetimeMs,
      },
    };
  }

  /** Kills every sandbox of the pool; never throws, and a second call does nothing more. */
  close(): Promise<void> {
    this.closing ??= this.sandboxes.close().then((failures) => {
      this.closeFailures = failures;
    });
    return this.closing;
  }

  /** Runs the request on a pooled sandbox; `lost` when that sandbox failed under it. */
  private async runOnce(
    job: ValidExecRequest,
    elapsed: () => number,
  ): Promise<Finished | { lost: string; noStart?: boolean }> {
    const needMs = commandMs(this.settings, job) + this.settings.lifetimeMarginMs;
    let sandbox: PooledSandbox;
    try {
      sandbox = await this.sandboxes.acquireFor(needMs);
    } catch (error) {
      if (error instanceof PoolClosedError) throw error;
      // No sandbox after every retry: this attempt fails, the run goes on.
      return { lost: `no E2B sandbox could be started: ${errorMessage(error)}`, noStart: true };
    }
    let reusable = false;
    try {
      await this.sandboxes.keepAlive(sandbox, commandMs(this.settings, job));
      const finished = await new E2BRun(this.settings, sandbox, job, elapsed).finish();
      reusable = finished.reusable;
      return finished;
    } catch (error) {
      return { lost: this.whyLost(sandbox, error) };
    } finally {
      this.sandboxes.giveBack(sandbox, reusable);
    }
  }

  private whyLost(sandbox: PooledSandbox, error: unknown): string {
    const now = this.settings.clock.now();
    if (now >= sandbox.diesBy) {
      return `the sandbox reached the plan's maximum lifetime (${this.settings.maxLifetimeMs} ms from its creation): ${errorMessage(error)}`;
    }
    if (now >= sandbox.aliveUntil) {
      return `the sandbox's timeout in E2B ran out: ${errorMessage(error)}`;
    }
    return errorMessage(error);
  }
}

function memoryBelowVm(settings: E2BSettings, vmMb: number): boolean {
  return vmMb - settings.memoryReserveMb > 0;
}
