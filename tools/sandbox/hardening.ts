/**
 * Names and meanings of the protections the local sandbox reports (see hardening.py,
 * whose probe decides which of them hold on a given machine).
 */
export const PROTECTION_DESCRIPTIONS: Readonly<Record<string, string>> = {
  netns: "no network: the workers live in an empty network namespace",
  auditHook:
    "Python audit hook: refuses sockets, new processes, ctypes, writes outside scratch, " +
    "reads outside the read allow-list and signals to other processes",
  seccomp: "seccomp filter: no fork/exec, no sockets, no namespaces, no ptrace (kernel-enforced)",
  noNewProcesses: "a fork() made below Python (as ctypes would) fails",
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
  rlimitAs: "address-space limit (memoryMb on top of the warm worker)",
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
