import { readFileSync } from "node:fs";

/** Busy and total CPU ms of the whole machine so far, every process counted, from /proc/stat. */
export function machineCpuMs(): { busy: number; total: number } {
  try {
    const ticks = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: ((total - idle) * 1000) / 100, total: (total * 1000) / 100 };
  } catch {
    return { busy: 0, total: 0 };
  }
}
