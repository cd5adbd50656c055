/**
 * The peak memory of a process and all its descendants together, for the benchmarks (Linux).
 *
 * getrusage cannot tell it: RUSAGE_CHILDREN's ru_maxrss is the largest single descendant, and
 * adding each process's own peak counts twice what forked children share with their parent
 * (a sandbox child sees the worker's DataFrame without copying it). So the tree is sampled:
 * every `intervalMs` the descendants are found through /proc/<pid>/task/<tid>/children, and
 * each one's proportional set size (Pss in /proc/<pid>/smaps_rollup: private pages whole,
 * shared pages split among their sharers) is summed. The peak of that sum is what the tree
 * held at once; a peak shorter than the interval can be missed, so it is a lower bound.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface PeakMemory {
  /** The largest sum of Pss over the whole tree at one sample, in MB. */
  totalMb: number;
  /** The root process's own largest Pss, in MB. */
  rootMb: number;
  /** The largest sum of Pss over the descendants alone, in MB. */
  descendantsMb: number;
  /** Most processes seen at once, the root included. */
  processes: number;
  samples: number;
  /** Each process's Pss at the sample of the peak, largest first (name from /proc/<pid>/comm). */
  atPeak: { pid: number; name: string; mb: number }[];
}

function children(pid: number): number[] {
  const found: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text) found.push(...text.split(/\s+/).map(Number));
    } catch {
      // The task ended meanwhile.
    }
  }
  return found;
}

/** Pss of one process in kB; 0 once it is gone. */
function pssKb(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** The root and every descendant alive now. */
function tree(root: number): number[] {
  const all = [root];
  for (let i = 0; i < all.length; i++) all.push(...children(all[i] as number));
  return all;
}

/** Samples the memory of `root`'s tree until `stop()`, which returns the peaks. */
export function watchMemory(root: number, intervalMs = 50): { stop(): PeakMemory } {
  const peak: PeakMemory = {
    totalMb: 0,
    rootMb: 0,
    descendantsMb: 0,
    processes: 0,
    samples: 0,
    atPeak: [],
  };
  const sample = () => {
    const each = tree(root).map((pid) => ({ pid, mb: pssKb(pid) / 1024 }));
    const own = each[0]?.mb ?? 0;
    const rest = each.slice(1).reduce((sum, p) => sum + p.mb, 0);
    if (own + rest > peak.totalMb) {
      peak.totalMb = own + rest;
      peak.atPeak = each
        .map((p) => ({ ...p, name: commandName(p.pid) }))
        .sort((a, b) => b.mb - a.mb);
    }
    peak.rootMb = Math.max(peak.rootMb, own);
    peak.descendantsMb = Math.max(peak.descendantsMb, rest);
    peak.processes = Math.max(peak.processes, each.length);
    peak.samples++;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}
