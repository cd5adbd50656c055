import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const BIN = path.join(ROOT, "cli/bin.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: ChildProcess;
  /** Settles when the process has exited and its output is closed. */
  done: Promise<CliResult>;
}

/** Starts the tableminds command as a subprocess, killed if it outlives `timeoutMs`. */
export function startCli(
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
  bin = BIN,
): RunningCli {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete merged[key];
    else merged[key] = value;
  }
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: path.dirname(path.dirname(bin)),
    env: merged,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

/** Runs the tableminds command as a subprocess, killed if it outlives `timeoutMs`. */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
  bin = BIN,
): Promise<CliResult> {
  return startCli(args, env, timeoutMs, bin).done;
}
