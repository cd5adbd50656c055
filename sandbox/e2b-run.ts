/**
 * One request on one E2B sandbox: upload what it lacks, run the runner as a one-shot
 * command in a new run directory (after checking the runner's files and the tables by
 * hash), read back its result and tables, clean up.
 */
import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import type { ExecError, ExecResult, TableRef } from "../blackboard/schemas.js";
import { readArtifact } from "../storage/artifacts.js";
import {
  CommandExitError,
  errorMessage,
  FileNotFoundError,
  isCommandTimeout,
  withDeadline,
} from "./e2b-errors.js";
import {
  type RunPaths,
  removeCommand,
  runnerCommand,
  runPaths,
  splitMarks,
  TAMPERED_EXIT,
  tablePath,
} from "./e2b-remote.js";
import { expectedFiles, lastLines, type PooledSandbox } from "./e2b-sandboxes.js";
import type { E2BCommandOutput } from "./e2b-sdk.js";
import { type E2BSettings, RUN_ENV, sdkCall, transferMs } from "./e2b-settings.js";
import {
  execResultFromRunner,
  failedResult,
  type RunnerResult,
  RunnerResultSchema,
} from "./results.js";
import { datesOf, type ValidExecRequest } from "./types.js";

const REMOVE_TIMEOUT_MS = 10_000;
/** A limit below this leaves pandas no room at all; the VM is then too small to bound. */
const MIN_MEMORY_MB = 192;

const FileBytesSchema = z.object({ file_bytes: z.record(z.string(), z.number()).optional() });

/** The sandbox kept working: the result stands; `reusable` says whether it goes back to the pool. */
export interface Finished {
  result: ExecResult;
  reusable: boolean;
}

/** The runner's files or a table changed since upload: an earlier request rewrote them. */
export class E2BTamperedError extends Error {
  override name = "E2BTamperedError";
  constructor() {
    super("the runner or a table in the sandbox changed since it was uploaded");
  }
}

function timeoutError(timeoutMs: number): ExecError {
  return { type: "Timeout", message: `execution exceeded ${timeoutMs} ms`, line: null };
}

export function sandboxError(message: string): ExecError {
  return { type: "SandboxError", message, line: null };
}

/** The address-space limit: the request's, kept below the VM's memory so the guest's OOM killer is not first. */
export function memoryLimitMb(settings: E2BSettings, vmMb: number, requestedMb: number): number {
  if (vmMb <= 0) return requestedMb;
  return Math.max(MIN_MEMORY_MB, Math.min(requestedMb, vmMb - settings.memoryReserveMb));
}

/** Why the runner left no result, from how its command ended. */
function missingResultError(exit: E2BCommandOutput, vmMb: number, output: string): ExecError {
  const detail = output ? `: ${lastLines(output)}` : "";
  const vm = vmMb > 0 ? ` (the VM has ${vmMb} MB)` : "";
  if (exit.exitCode === 0) return sandboxError(`the runner ended without a result${detail}`);
  if (exit.exitCode === -1) {
    return {
      type: "Crashed",
      message: `E2B reports the run's shell killed by a signal (exit -1), most likely because the sandbox ran out of memory${vm}${detail}`,
      line: null,
    };
  }
  if (exit.exitCode === 137) {
    return {
      type: "MemoryError",
      message: `the code's process was killed by signal 9, most likely by the sandbox's out-of-memory killer${vm}: use less memory${detail}`,
      line: null,
    };
  }
  if (exit.exitCode > 128) {
    return {
      type: "Crashed",
      message: `the code's process was killed by signal ${exit.exitCode - 128} before returning a result${detail}`,
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
    const tables = job.tables.map((table) => tablePath(sandbox.layout, table.sha256, table.uri));
    const request = JSON.stringify({
      code: job.code,
      tables: job.tables.map((table, i) => ({
        name: table.name,
        path: tables[i],
        ...datesOf(table),
      })),
      timeout_ms: job.timeoutMs,
      output_bytes: job.outputBytes,
      scratch: run.scratch,
      lineage: job.lineage,
    });
    await this.upload(run.request, request, "writing the request");
    const exit = await this.runRunner(run, [...this.runnerPaths(), ...tables]);
    if (exit === "timeout") {
      // E2B stopped the shell only: what the runner started runs on, so the sandbox goes.
      return { result: failedResult(timeoutError(job.timeoutMs), elapsed()), reusable: false };
    }
    const marks = splitMarks(exit.stdout);
    if (marks.tampered || exit.exitCode === TAMPERED_EXIT) throw new E2BTamperedError();
    const report = await this.readReport(run, exit, marks.output, marks.resultBytes);
    const result =
      "type" in report
        ? failedResult(report, elapsed())
        : await execResultFromRunner(
            report.result,
            (file) =>
              this.download(
                `${run.scratch}/${file}`,
                report.fileBytes[file] ?? 0,
                `downloading table ${file}`,
              ),
            elapsed,
          );
    // A shell killed under the runner (-1) may have left processes running.
    const reusable = exit.exitCode !== -1;
    if (reusable) await this.removeQuietly(run);
    return { result, reusable };
  }

  private runnerPaths(): string[] {
    return [...this.sandbox.uploaded.keys()].filter((p) =>
      p.startsWith(`${this.sandbox.layout.bin}/`),
    );
  }

  /** Writes a file with a deadline that grows with its size, compressed when large, aborted at the deadline. */
  private upload(target: string, data: string | Uint8Array, what: string): Promise<unknown> {
    const bytes = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
    const timeoutMs = transferMs(this.settings, bytes);
    const abort = new AbortController();
    const gzip = bytes >= this.settings.gzipMinBytes;
    return withDeadline(
      this.sandbox.remote.files.write(target, data, { timeoutMs, signal: abort.signal, gzip }),
      timeoutMs,
      what,
      undefined,
      abort,
    );
  }

  private download(target: string, bytes: number, what: string): Promise<Uint8Array> {
    const timeoutMs = transferMs(this.settings, bytes);
    const abort = new AbortController();
    return withDeadline(
      this.sandbox.remote.files.read(target, {
        timeoutMs,
        signal: abort.signal,
        gzip: bytes >= this.settings.gzipMinBytes,
      }),
      timeoutMs,
      what,
      undefined,
      abort,
    );
  }

  private async runRunner(run: RunPaths, checked: string[]): Promise<E2BCommandOutput | "timeout"> {
    const { sandbox, job } = this;
    const timeoutMs = commandMs(this.settings, job);
    const command = runnerCommand({
      layout: sandbox.layout,
      run,
      expected: expectedFiles(sandbox, checked),
      memoryMb: memoryLimitMb(this.settings, sandbox.memoryMb, job.memoryMb),
      token: randomUUID(),
    });
    try {
      return await sdkCall(
        this.settings,
        sandbox.remote.commands.run(command, { timeoutMs, envs: RUN_ENV }),
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
    output: string,
    resultBytes: number | undefined,
  ): Promise<{ result: RunnerResult; fileBytes: Record<string, number> } | ExecError> {
    const missing = () =>
      missingResultError(exit, this.sandbox.memoryMb, `${output}\n${exit.stderr}`.trim());
    if (resultBytes === 0) return missing();
    let bytes: Uint8Array;
    try {
      bytes = await this.download(run.result, resultBytes ?? 0, "reading the result");
    } catch (error) {
      if (error instanceof FileNotFoundError) return missing();
      throw error;
    }
    if (bytes.byteLength === 0) return missing();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(bytes).toString("utf8"));
    } catch (error) {
      return sandboxError(`the runner wrote a result that is not JSON: ${errorMessage(error)}`);
    }
    const checked = RunnerResultSchema.safeParse(parsed);
    if (!checked.success) {
      return sandboxError(`the runner wrote an unexpected result: ${checked.error.message}`);
    }
    const sizes = FileBytesSchema.safeParse(parsed);
    return { result: checked.data, fileBytes: (sizes.success && sizes.data.file_bytes) || {} };
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
      await this.upload(target, bytes, `uploading table ${table.name}`);
      sandbox.uploaded.set(target, createHash("sha256").update(bytes).digest("hex"));
    }
    return undefined;
  }

  private async removeQuietly(run: RunPaths): Promise<void> {
    try {
      await sdkCall(
        this.settings,
        this.sandbox.remote.commands.run(removeCommand(run.dir), { timeoutMs: REMOVE_TIMEOUT_MS }),
        "removing the run directory",
        REMOVE_TIMEOUT_MS,
      );
    } catch {
      // Best effort: the next request finds out whether the sandbox is still there.
    }
  }
}
