import { lstatSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isAlive } from "../storage/pids.js";

/*
 * A sandbox interpreter keeps its scratch folders (the tables handed to generated code among them)
 * under `tableminds-interpreter-<pid>-*` in the temp directory and removes them when it exits.
 * An interpreter killed with SIGKILL cannot: those of interpreters that no longer run are
 * reclaimed when a pool starts and by `tableminds prune`. Earlier versions named them
 * `tableminds-worker-<pid>-*`; those are reclaimed too.
 */

const NAME = /^tableminds-(?:interpreter|worker)-(\d+)-/;

/** Removes this user's scratch folders of sandbox interpreters that are gone; returns their paths. */
export function reclaimDeadScratch(root = os.tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(NAME.exec(name)?.[1]);
    if (!pid || isAlive(pid)) continue;
    const folder = path.join(root, name);
    try {
      const stat = lstatSync(folder);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      rmSync(folder, { recursive: true, force: true });
      removed.push(folder);
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}
