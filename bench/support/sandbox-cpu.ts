import { readFileSync } from "node:fs";
import { getSandbox } from "../../sandbox/index.js";
import { LocalSandbox } from "../../sandbox/local.js";

/*
 * The CPU the local sandbox has used so far, in ms: each interpreter's own time and that of the
 * children it has reaped (every run, re-run and lineage run is a child it forks and waits for),
 * from /proc/<pid>/stat. Null where /proc cannot be read.
 */

const TICKS_PER_SECOND = 100;

function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command's name, which may hold spaces: state is the first of them.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime are fields 14-17 of the line, 12-15 after the name.
    const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export async function sandboxCpuMs(): Promise<number | null> {
  const sandbox = await getSandbox("local");
  if (!(sandbox instanceof LocalSandbox)) return null;
  let total = 0;
  for (const pid of sandbox.interpreterPids) {
    const ms = processCpuMs(pid);
    if (ms === null) return null;
    total += ms;
  }
  return total;
}
