/**
 * What the E2B backend runs and where it keeps files inside a sandbox. Everything
 * lives under `<home>/tableminds`, where `<home>` is the sandbox user's home directory
 * (/home/user on E2B's templates), asked from the sandbox itself when it starts.
 */

/** The most of the runner's own stderr/stdout that is kept, for error messages. */
export const RUNNER_OUTPUT_TAIL_BYTES = 4_000;
/** A result file larger than this was not written by the runner alone; it is dropped. */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;

export interface SandboxLayout {
  workspace: string;
  runner: string;
  tables: string;
  runs: string;
}

export interface RunPaths {
  dir: string;
  request: string;
  result: string;
  /** The code's working directory, where it leaves its exported tables. */
  scratch: string;
}

export function layoutUnder(home: string): SandboxLayout {
  const workspace = `${home.replace(/\/+$/, "")}/tableminds`;
  return {
    workspace,
    runner: `${workspace}/runner.py`,
    tables: `${workspace}/tables`,
    runs: `${workspace}/runs`,
  };
}

export function runPaths(layout: SandboxLayout, runId: string): RunPaths {
  const dir = `${layout.runs}/${runId}`;
  return {
    dir,
    request: `${dir}/request.json`,
    result: `${dir}/result.json`,
    scratch: `${dir}/scratch`,
  };
}

/** A table's place in the sandbox: by content, so it is uploaded once per sandbox. */
export function tablePath(layout: SandboxLayout, sha256: string, uri: string): string {
  const extension = /\.parquet$/i.test(uri) ? "parquet" : "csv";
  return `${layout.tables}/${sha256}.${extension}`;
}

export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Run once per new sandbox: prints the home directory, then the Python and pandas
 * versions; fails (non-zero exit) when python3 or pandas is missing.
 */
export const PROBE_COMMAND = [
  "cd",
  "pwd",
  `python3 -c 'import sys, pandas; print(sys.version.split()[0]); print(pandas.__version__)'`,
].join(" && ");

export interface ProbeReport {
  home: string;
  python: string;
  pandas: string;
}

export function parseProbe(stdout: string): ProbeReport | undefined {
  const lines = stdout
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const [home, python, pandas] = lines.slice(-3);
  if (!home?.startsWith("/") || !python || !pandas) return undefined;
  return { home, python, pandas };
}

/**
 * One run of runner.py. The runner's own stdout and stderr (not the code's, which
 * the runner captures) are cut to their last few KB by `tail`, so that code writing
 * gigabytes to the raw descriptors fills neither the disk nor our memory; the exit
 * status is kept in a file, since a POSIX shell has no pipefail. `ulimit -v` bounds
 * the address space of the runner and of everything it starts.
 */
export function runnerCommand(layout: SandboxLayout, run: RunPaths, memoryMb: number): string {
  const memoryKb = Math.max(1, Math.floor(memoryMb * 1024));
  return [
    `cd ${shellQuote(run.dir)} && mkdir -p ${shellQuote(run.scratch)} && ulimit -v ${memoryKb}`,
    ` && { python3 ${shellQuote(layout.runner)} ${shellQuote(run.request)} ${shellQuote(run.result)}`,
    ` 2>&1 >/dev/null; echo "$?" > exit_status; } | tail -c ${RUNNER_OUTPUT_TAIL_BYTES};`,
    ` status=$(cat exit_status 2>/dev/null || echo 1);`,
    ` [ "$(wc -c < ${shellQuote(run.result)} 2>/dev/null || echo 0)" -le ${MAX_RESULT_BYTES} ]`,
    ` || rm -f ${shellQuote(run.result)};`,
    ` exit "$status"`,
  ].join("");
}

/** Exits 0 when `host:port` accepts a TCP connection within two seconds. */
export function networkProbeCommand(host: string, port: number): string {
  const script = `import socket; socket.create_connection((${JSON.stringify(host)}, ${port}), 2).close()`;
  return `python3 -c ${shellQuote(script)}`;
}

export function removeCommand(path: string): string {
  return `rm -rf ${shellQuote(path)}`;
}
