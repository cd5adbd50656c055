import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { findPython } from "../../sandbox/python.js";
import { reclaimDeadScratch } from "../../sandbox/scratch-reclaim.js";

const INTERPRETER_SCRIPT = fileURLToPath(new URL("../../sandbox/interpreter.py", import.meta.url));
const root = mkdtempSync(path.join(os.tmpdir(), "tableminds-reclaim-"));

/** A pid that ran and has exited. */
function deadPid(): number {
  const pid = spawnSync("true").pid;
  if (!pid) throw new Error("could not start `true`");
  return pid;
}

async function gone(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`process ${pid} is still there`);
}

describe("scratch folders of sandbox interpreters killed with SIGKILL", () => {
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reclaims the folders of interpreters that are gone, and only those", () => {
    const dead = path.join(root, `tableminds-interpreter-${deadPid()}-abc`);
    mkdirSync(path.join(dead, "run-1", "inputs"), { recursive: true });
    writeFileSync(path.join(dead, "run-1", "inputs", "table.csv"), "a\n1\n");
    const alive = path.join(root, `tableminds-interpreter-${process.pid}-def`);
    const unnamed = path.join(root, "tableminds-interpreter-xyz");
    const older = path.join(root, `tableminds-worker-${deadPid()}-ghi`);
    const olderAlive = path.join(root, `tableminds-worker-${process.pid}-jkl`);
    for (const folder of [alive, unnamed, older, olderAlive]) mkdirSync(folder);
    expect(reclaimDeadScratch(root).sort()).toEqual([dead, older].sort());
    expect([dead, alive, unnamed, older, olderAlive].map((f) => existsSync(f))).toEqual([
      false,
      true,
      true,
      false,
      true,
    ]);
  });

  it("names an interpreter's folder by its pid, so a start after kill -9 removes what it left", async () => {
    const python = (await findPython()).executable;
    // The interpreter alone, with no WarmInterpreter to clean up after it: as after `kill -9` of the
    // whole process, nobody runs a clean-up.
    const child = spawn(python, [INTERPRETER_SCRIPT, root], {
      stdio: ["pipe", "ignore", "ignore", "pipe"],
      detached: true,
    });
    const protocol = child.stdio[3] as Readable;
    const [line] = (await once(createInterface({ input: protocol }), "line")) as [string];
    const ready = JSON.parse(line) as { type: string; pid: number; scratch_root: string };
    expect(ready.type).toBe("ready");
    const folder = ready.scratch_root;
    const pid = ready.pid;
    expect(path.basename(folder)).toMatch(new RegExp(`^tableminds-interpreter-${pid}-`));
    process.kill(-pid, "SIGKILL");
    await gone(pid);
    expect(existsSync(folder)).toBe(true);
    expect(reclaimDeadScratch(root)).toContain(folder);
    expect(existsSync(folder)).toBe(false);
    child.stdin?.destroy();
    protocol.destroy();
  });
});
