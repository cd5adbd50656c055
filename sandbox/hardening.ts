/**
 * Names and meanings of the protections the local sandbox reports (see hardening.py,
 * whose probe decides which of them hold on a given machine), and the rule that refuses
 * generated code where the kernel cannot confine it (no Landlock) unless the operator
 * accepted that.
 */
export const PROTECTION_DESCRIPTIONS: Readonly<Record<string, string>> = {
  netns: "no network: the interpreters live in an empty network namespace",
  auditHook:
    "Python audit hook: refuses sockets, new processes, ctypes, sqlite3, writes outside " +
    "scratch, changes of file metadata, reads outside the read allow-list and signals to " +
    "other processes",
  hookResolvesDescriptors:
    "audit hook: a change made through dir_fd or a descriptor is judged by where it really " +
    "points (/proc/self/fd), not by the working directory",
  seccomp:
    "seccomp filter: no fork/exec, no sockets, no namespaces, no ptrace, no chmod/chown/utime/" +
    "xattr writes, no pidfd, no prlimit on another process (kernel-enforced)",
  noNewProcesses: "a fork() made below Python (as ctypes would) fails",
  kernelMetadataConfinement:
    "chmod, chown, utime and xattr writes made below Python fail, in scratch too " +
    "(seccomp: Landlock does not cover metadata)",
  kernelProcessConfinement:
    "pidfd_open and prlimit on another process made below Python fail (seccomp)",
  landlock:
    "Landlock: writes only inside scratch, reads only of the allow-list, no TCP, no signals leaving",
  kernelWriteConfinement: "a write outside scratch made below Python fails",
  procIsolation: "another process's /proc/<pid>/environ cannot be read",
  readConfinement:
    "reads only of Python, system libraries and data, scratch and the run's own tables " +
    "(audit hook: open, listdir, scandir)",
  kernelReadConfinement: "a read of a file outside the allow-list made below Python fails",
  noNewPrivs: "no-new-privileges is set",
  capabilitiesDropped: "all capabilities dropped (root keeps uid 0 but no privileges)",
  rlimitCpu: "CPU time limit (timeout + 2 s)",
  rlimitAs: "address-space limit (memoryMb on top of the warm interpreter)",
  rlimitFsize: "file-size limit (64 MB)",
  rlimitNofile: "open-files limit (256)",
  rlimitNproc: "process-count limit (not enforced for root; only set without seccomp)",
  recursionCap: "sys.setrecursionlimit capped, with a 64 MB stack, so recursion cannot crash",
  scrubbedEnv: "no API keys or tokens in the code's environment",
  scratchDir: "a fresh scratch directory as working directory, removed afterwards",
  wallClockKill: "wall-clock kill of the code's whole process group",
  outputCap: "stdout/stderr capped at outputBytes",
  forkAhead: "a confined child is forked ahead of each request",
  fork: "each request runs in its own forked process",
};

/** A protection's meaning, or its bare name when it is not known here. */
export function describeProtection(name: string): string {
  return PROTECTION_DESCRIPTIONS[name] ?? name;
}

/** How reads are confined, for `tableminds doctor`; undefined when the backend does not say. */
export function readConfinementSummary(protections: Record<string, boolean>): string | undefined {
  if (!("readConfinement" in protections)) return undefined;
  if (!protections.readConfinement) {
    return "Read confinement: NONE - generated code can read every file this user can";
  }
  return protections.kernelReadConfinement
    ? "Read confinement: kernel-enforced (Landlock) and by the audit hook"
    : "Read confinement: DEGRADED to the audit hook alone (no Landlock read rules here)";
}

/**
 * The operator's opt-in to run generated code in the local pool on a kernel without
 * Landlock. An environment variable of the process that starts the pool, never a field of
 * a run's context: a caller of the API server cannot switch it on.
 */
export const DEGRADED_OPT_IN = "TABLEMINDS_ALLOW_DEGRADED_SANDBOX";

/** Whether the operator accepted the degraded confinement (`TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1`). */
export function degradedSandboxAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[DEGRADED_OPT_IN]?.trim() === "1";
}

/** Whether the kernel itself (Landlock) confines the children's reads and writes. */
export function kernelConfined(protections: Record<string, boolean>): boolean {
  return (
    protections.landlock === true &&
    protections.kernelWriteConfinement === true &&
    protections.kernelReadConfinement === true
  );
}

/** The one line the local pool answers generated code with where it refuses it. */
export const DEGRADED_REFUSAL =
  "the local sandbox refuses generated code: this kernel has no Landlock, so reads and writes " +
  "outside scratch would rest on the Python audit hook alone; use E2B (sandbox: e2b) or a " +
  `kernel with Landlock, or set ${DEGRADED_OPT_IN}=1 to accept the degraded confinement`;

/** Why the local pool refuses generated code on this machine; undefined when it runs it. */
export function degradedRefusal(
  protections: Record<string, boolean>,
  allowed: boolean = degradedSandboxAllowed(),
): string | undefined {
  return kernelConfined(protections) || allowed ? undefined : DEGRADED_REFUSAL;
}

/** The degraded-mode refusal, on or off, and what it means here; for `tableminds doctor`. */
export function degradedModeSummary(
  protections: Record<string, boolean>,
  allowed: boolean,
): string {
  const setting = allowed
    ? `Degraded-mode refusal: off (${DEGRADED_OPT_IN}=1)`
    : `Degraded-mode refusal: on (${DEGRADED_OPT_IN} not set)`;
  if (kernelConfined(protections)) return `${setting}; Landlock holds here, so generated code runs`;
  return allowed
    ? `${setting}; NO Landlock here: generated code runs DEGRADED, its reads and writes confined by the audit hook alone`
    : `${setting}; NO Landlock here, so generated code is REFUSED`;
}
