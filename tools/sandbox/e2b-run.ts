/**
 * One request on one E2B sandbox: upload what it lacks, run runner.py as a one-shot
 * command, read back its result and tables, clean up.
 */
import { randomUUID } from "node:crypto";
import type { ExecError, ExecResult, TableRef } from "../../blackboard/schemas.js";
import { readArtifact } from "../artifacts.js";
import {
  CommandExitError,
  errorMessage,
  FileNotFoundError,
  isCommandTimeout,
} from "./e2b-errors.js";
import { type RunPaths, removeCommand, runnerCommand, runPaths, tablePath } from "./e2b-remote.js";
import { lastLines, type PooledSandbox } from "./e2b-sandboxes.js";
import type { E2BCommandOutput } from "./e2b-sdk.js";
import { type E2BSettings, RUN_ENV, sdkCall } from "./e2b-settings.js";
import {
  execResultFromRunner,
  failedResult,
  type RunnerResult,
  RunnerResultSchema,
} from "./results.js";
import type { ValidExecRequest } from "./types.js";

const REMOVE_TIMEOUT_MS = 10_000;

/** The sandbox kept working: the result stands; `reusable` says whether it goes back to the pool. */
export interface Finished {
  result: ExecResult;
  reusable: boolean;
}

function timeoutError(timeoutMs: number): ExecError {
  return { type: "Timeout", message: `execution exceeded ${timeoutMs} ms`, line: null };
}

export function sandboxError(message: string): ExecError {
  return { type: "SandboxError", message, line: null };
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

/** How long the runner's command may take: the request's timeout and the grace. */
export function commandMs(settings: E2BSettings, job: ValidExecRequest): number {
  return job.timeoutMs + settings.graceMs;
}

/** Runs one request on `sandbox`. Throws when the sandbox failed (it is then discarded and the request retried). */
export class E2BRun {
  constructor(
    private readonly settings: E2BSettings,
    private readonly sandbox: PooledSandbox,
    private readonly job: ValidExecRequest,
    private readonly elapsed: () => number,
  ) {}

  async finish(): Promise<Finished> {
    const { sandbox, job, elapsed } = this;
    const tableError = await this.uploadTables(job.tables);
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
      const exit = await this.runRunner(run);
      if (exit === "timeout") {
        // The runner overran its own timeout: whatever it left running dies with the sandbox.
        finished = {
          result: failedResult(timeoutError(job.timeoutMs), elapsed()),
          reusable: false,
        };
        return finished;
      }
      const report = await this.readReport(run, exit);
      const result =
        "type" in report
          ? failedResult(report, elapsed())
          : await execResultFromRunner(
              report,
              (file) =>
                this.call(
                  sandbox.remote.files.read(`${run.scratch}/${file}`),
                  `downloading table ${file}`,
                ),
              elapsed,
            );
      finished = { result, reusable: true };
      return finished;
    } finally {
      if (finished?.reusable) await this.removeQuietly(run);
    }
  }

  private call<T>(work: Promise<T>, what: string, extraMs = 0): Promise<T> {
    return sdkCall(this.settings, work, what, extraMs);
  }

  private async runRunner(run: RunPaths): Promise<E2BCommandOutput | "timeout"> {
    const { sandbox, job } = this;
    const timeoutMs = commandMs(this.settings, job);
    try {
      return await this.call(
        sandbox.remote.commands.run(runnerCommand(sandbox.layout, run, job.memoryMb), {
          timeoutMs,
          envs: RUN_ENV,
        }),
        "running the code",
        timeoutMs,
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
    run: RunPaths,
    exit: E2BCommandOutput,
  ): Promise<RunnerResult | ExecError> {
    let bytes: Uint8Array;
    try {
      bytes = await this.call(this.sandbox.remote.files.read(run.result), "reading the result");
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
  private async uploadTables(tables: TableRef[]): Promise<ExecError | undefined> {
    const { sandbox } = this;
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

  private async removeQuietly(run: RunPaths): Promise<void> {
    try {
      await this.call(
        this.sandbox.remote.commands.run(removeCommand(run.dir), { timeoutMs: REMOVE_TIMEOUT_MS }),
        "removing the run directory",
        REMOVE_TIMEOUT_MS,
      );
    } catch {
      // Best effort: the next request finds out whether the sandbox is still there.
    }
  }
}
