import { readFile } from "node:fs/promises";
import type { ExecResult } from "../../blackboard/schemas.js";
import { CommandExitError, errorMessage } from "./e2b-errors.js";
import { PoolClosedError } from "./e2b-pool.js";
import { networkProbeCommand } from "./e2b-remote.js";
import { commandMs, E2BRun, type Finished, sandboxError } from "./e2b-run.js";
import { E2BSandboxes } from "./e2b-sandboxes.js";
import {
  type E2BSandboxOptions,
  type E2BSettings,
  RUN_ENV,
  resolveSettings,
  sdkCall,
} from "./e2b-settings.js";
import { failedResult } from "./results.js";
import {
  type ExecRequest,
  parseExecRequest,
  type Sandbox,
  type SandboxInfo,
  type ValidExecRequest,
  warmedUp,
} from "./types.js";

export { E2BConfigError, E2BStartError, E2BTemplateError } from "./e2b-errors.js";
export type {
  E2BCommandOutput,
  E2BCreateOptions,
  E2BRemoteSandbox,
  E2BRunOptions,
  E2BSdk,
} from "./e2b-sdk.js";
export type { E2BSandboxOptions } from "./e2b-settings.js";

const NETWORK_PROBE_TIMEOUT_MS = 10_000;

/**
 * Runs generated pandas code in E2B cloud sandboxes: each request is a one-shot run of
 * runner.py inside a pooled sandbox, with its tables uploaded once per sandbox.
 */
export class E2BSandbox implements Sandbox {
  private readonly sandboxes: E2BSandboxes;
  private closing: Promise<void> | undefined;
  private closeFailures: unknown[] = [];

  private constructor(
    private readonly settings: E2BSettings,
    runnerSource: string,
  ) {
    this.sandboxes = new E2BSandboxes(settings, runnerSource);
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
    const job = parseExecRequest(request);
    if (this.sandboxes.isClosed) throw new PoolClosedError();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    // Failing to get a sandbox at all is the setup's fault: that one throws.
    const first = await this.runOnce(job, elapsed);
    if ("result" in first) return first.result;
    if (this.sandboxes.isClosed) {
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
    const sandbox = await this.sandboxes.acquireLive();
    let internetBlocked = false;
    let healthy = true;
    try {
      const { host, port } = this.settings.networkProbe;
      try {
        await sdkCall(
          this.settings,
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
      this.sandboxes.giveBack(sandbox, healthy);
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
    this.closing ??= this.sandboxes.close().then((failures) => {
      this.closeFailures = failures;
    });
    return this.closing;
  }

  /** Runs the request on a pooled sandbox; `lost` when that sandbox failed under it. */
  private async runOnce(
    job: ValidExecRequest,
    elapsed: () => number,
  ): Promise<Finished | { lost: string }> {
    const sandbox = await this.sandboxes.acquireLive();
    let reusable = false;
    try {
      await this.sandboxes.keepAlive(sandbox, commandMs(this.settings, job));
      const finished = await new E2BRun(this.settings, sandbox, job, elapsed).finish();
      reusable = finished.reusable;
      return finished;
    } catch (error) {
      return { lost: errorMessage(error) };
    } finally {
      this.sandboxes.giveBack(sandbox, reusable);
    }
  }
}
