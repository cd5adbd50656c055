import { readdirSync, readFileSync } from "node:fs";

/** What /proc says about one process (Linux only). */
export interface ProcEntry {
  pid: number;
  ppid: number;
  state: string;
  cmdline: string;
}

function readEntry(pid: number): ProcEntry | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    return { pid, state: fields[0] ?? "?", ppid: Number(fields[1]), cmdline };
  } catch {
    return undefined; // it ended while we looked
  }
}

export function processes(): ProcEntry[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => readEntry(Number(name)) ?? []);
}

/** Every process below `root` (children, grandchildren, ...). */
export function descendants(root: number, all: ProcEntry[] = processes()): ProcEntry[] {
  const found: ProcEntry[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = all.filter((entry) => frontier.includes(entry.ppid));
    found.push(...next);
    frontier = next.map((entry) => entry.pid);
  }
  return found;
}

export function withCmdline(fragment: string): ProcEntry[] {
  return processes().filter((entry) => entry.cmdline.includes(fragment));
}

/** Polls `check` until it returns true or `ms` pass; returns its last answer. */
export async function eventually(check: () => boolean, ms = 3_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
