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
  /** The runner and the Python files it imports. */
  bin: string;
  runner: string;
  tables: string;
  runs: string;
}

export interface RunPaths {
  /** The run's own directory, new for each request. */
  dir: string;
  request: string;
  result: string;
  /** The code's working directory, where it leaves its exported tables. */
  scratch: string;
}

export const RUNNER_FILE = "e2b_runner.py";

export function layoutUnder(home: string): SandboxLayout {
  const workspace = `${home.replace(/\/+$/, "")}/tableminds`;
  return {
    workspace,
    bin: `${workspace}/bin`,
    runner: `${workspace}/bin/${RUNNER_FILE}`,
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
 * versions and the VM's memory in MB; fails (non-zero exit) when python3 or pandas is
 * missing.
 */
export const PROBE_COMMAND = [
  "cd",
  "pwd",
  `python3 -c 'import os, sys, pandas; print(sys.version.split()[0]); print(pandas.__version__); print(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1048576)'`,
].join(" && ");

export interface ProbeReport {
  home: string;
  python: string;
  pandas: string;
  /** The VM's memory; 0 when unknown. */
  memoryMb: number;
}

export function parseProbe(stdout: string): ProbeReport | undefined {
  const lines = stdout
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const [home, python, pandas, memory] = lines.slice(-4);
  if (!home?.startsWith("/") || !python || !pandas || !memory) return undefined;
  const memoryMb = Number(memory);
  return { home, python, pandas, memoryMb: Number.isFinite(memoryMb) ? memoryMb : 0 };
}

/** Marks the lines the runner's command adds to its own output. */
export const MARK = "@@tableminds";
/** Exit status of a command that found the runner or a table changed since upload. */
export const TAMPERED_EXIT = 86;

/** A file the command checks before it runs anything: its path and expected sha256. */
export interface Expected {
  path: string;
  sha256: string;
}

export interface RunnerCommand {
  layout: SandboxLayout;
  run: RunPaths;
  /** Every file the run relies on, checked by hash first. */
  expected: Expected[];
  /** Bound of the runner's address space. */
  memoryMb: number;
  /** Marks the run's processes, so that whatever it leaves behind is found and killed. */
  token: string;
}

/**
 * One run of the runner. It checks the runner's files and the tables first (exit 86 when
 * one changed: an earlier request rewrote it). The runner's own stdout and stderr (not the
 * code's, which the runner captures) are cut to their last few KB by `tail`, so that code
 * writing gigabytes to the raw descriptors fills neither the disk nor our memory; the exit
 * status is kept in a file, since a POSIX shell has no pipefail. `ulimit -v` bounds the
 * address space of the runner and of everything it starts. Afterwards every process still
 * carrying the run's token is killed, and the result's size is printed.
 */
export function runnerCommand({ layout, run, expected, memoryMb, token }: RunnerCommand): string {
  const memoryKb = Math.max(1, Math.floor(memoryMb * 1024));
  const manifest = expected.map((file) => `${file.sha256}  ${file.path}`).join("\n");
  const partial = `${run.result}.partial`;
  const tokenVar = `TABLEMINDS_RUN=${token}`;
  return [
    `printf '%s\\n' ${shellQuote(manifest)} | sha256sum -c --status - 2>/dev/null`,
    ` || { echo "${MARK} tampered"; exit ${TAMPERED_EXIT}; };`,
    ` cd ${shellQuote(run.dir)} && mkdir -p ${shellQuote(run.scratch)}`,
    ` && { ( ulimit -v ${memoryKb} && ${tokenVar} exec python3 ${shellQuote(layout.runner)}`,
    ` ${shellQuote(run.request)} ${shellQuote(partial)} ${shellQuote(layout.workspace)} )`,
    ` 2>&1 >/dev/null; echo "$?" > exit_status; } | tail -c ${RUNNER_OUTPUT_TAIL_BYTES};`,
    ` status=$(cat exit_status 2>/dev/null || echo 1);`,
    ` for f in $(grep -lsz -- ${shellQuote(`^${tokenVar}$`)} /proc/[0-9]*/environ); do`,
    ` p=\${f#/proc/}; kill -9 "\${p%/environ}" 2>/dev/null; done;`,
    ` [ -s ${shellQuote(partial)} ] && mv -f ${shellQuote(partial)} ${shellQuote(run.result)};`,
    ` [ "$(wc -c < ${shellQuote(run.result)} 2>/dev/null || echo 0)" -le ${MAX_RESULT_BYTES} ]`,
    ` || rm -f ${shellQuote(run.result)};`,
    ` echo; echo "${MARK} result_bytes=$(wc -c < ${shellQuote(run.result)} 2>/dev/null || echo 0)";`,
    ` exit "$status"`,
  ].join("");
}

/** The runner output with the command's own marked lines taken out, and what they said. */
export function splitMarks(stdout: string): {
  output: string;
  tampered: boolean;
  resultBytes?: number;
} {
  let tampered = false;
  let resultBytes: number | undefined;
  const kept: string[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(MARK)) {
      kept.push(line);
      continue;
    }
    if (line.includes(" tampered")) tampered = true;
    const size = /result_bytes=(\d+)/.exec(line);
    if (size) resultBytes = Number(size[1]);
  }
  return { output: kept.join("\n").trim(), tampered, resultBytes };
}

/**
 * Sends an HTTP request to `host:port` and says what came back: `answered` (the network
 * is open), `no-answer` (accepted, then nothing: E2B's firewall accepts a connection and
 * drops it), `refused` or `unreachable`. Always exits 0; anything else is a failed probe.
 */
export function networkProbeCommand(host: string, port: number, answerMs = 5_000): string {
  const script = [
    "import socket",
    `h, p = ${JSON.stringify(host)}, ${port}`,
    "try:",
    "    s = socket.create_connection((h, p), 3)",
    "except ConnectionRefusedError as e:",
    "    print('refused', e); raise SystemExit(0)",
    "except OSError as e:",
    "    print('unreachable', e); raise SystemExit(0)",
    "try:",
    `    s.settimeout(${answerMs / 1_000})`,
    "    s.sendall(b'HEAD / HTTP/1.0\\r\\nHost: ' + h.encode() + b'\\r\\n\\r\\n')",
    "    data = s.recv(64)",
    "except OSError as e:",
    "    data = b''",
    "print('answered' if data else 'no-answer', data[:12])",
  ].join("\n");
  return `python3 -c ${shellQuote(script)}`;
}

export type NetworkCheck = "open" | "blocked" | "undetermined";

/** What the probe's output shows; `undetermined` unless it said one thing clearly. */
export function parseNetworkProbe(stdout: string): NetworkCheck {
  const word = stdout.trim().split(/\s+/)[0];
  if (word === "answered") return "open";
  if (word === "no-answer" || word === "refused" || word === "unreachable") return "blocked";
  return "undetermined";
}

export function removeCommand(path: string): string {
  return `rm -rf ${shellQuote(path)}`;
}
