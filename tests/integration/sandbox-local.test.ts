import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSandboxes, getSandbox } from "../../sandbox/index.js";
import { defaultInterpreterCount, LocalSandbox } from "../../sandbox/local.js";
import { LineSplitter, parseInterpreterLine } from "../../sandbox/local-protocol.js";
import { findPython, PythonNotFoundError } from "../../sandbox/python.js";
import { useTempHome } from "../support/env.js";
import { tableRef } from "../support/table-fixtures.js";
import { descendants, eventually, withCmdline } from "./hostile/procfs.js";

const INTERPRETER_SCRIPT = fileURLToPath(new URL("../../sandbox/interpreter.py", import.meta.url));

function someTable() {
  return tableRef("single", "x\n1", [{ name: "x", dtype: "int64" }]);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the local sandbox", () => {
  let sandbox: LocalSandbox;

  beforeAll(async () => {
    useTempHome();
    sandbox = await LocalSandbox.start({ interpreters: 2 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  // Its backend name and versions: the shared contract (sandbox-contract.test.ts).
  it("reports the protections it has, each probed on this machine", async () => {
    const info = await sandbox.info();
    expect(info.protections).toMatchObject({
      fork: true,
      wallClockKill: true,
      outputCap: true,
      scratchDir: true,
      scrubbedEnv: true,
      auditHook: true,
      readConfinement: true,
      forkAhead: true,
    });
    // Probed, not assumed: every answer is a boolean, whatever this machine allows.
    const probed = ["netns", "seccomp", "landlock", "noNewProcesses", "rlimitNproc"];
    for (const key of [...probed, "kernelReadConfinement"]) {
      expect(typeof info.protections[key]).toBe("boolean");
    }
    if (process.getuid?.() === 0) expect(info.protections.rlimitNproc).toBe(false);
  });

  it("runs requests on several interpreters at once", async () => {
    const started = performance.now();
    const results = await Promise.all(
      [1, 2].map(() => sandbox.execute({ code: "import time\ntime.sleep(0.4)", tables: [] })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(performance.now() - started).toBeLessThan(750);
  });

  it("gives a parked child the tables loaded after it was forked", async () => {
    const first = await tableRef("first_seen", "k,v\na,1\nb,2", [
      { name: "k", dtype: "object" },
      { name: "v", dtype: "int64" },
    ]);
    const later = await tableRef("loaded_later", "k,w\na,10", [
      { name: "k", dtype: "object" },
      { name: "w", dtype: "int64" },
    ]);
    for (const [tables, expected] of [
      [[first], "3\n"],
      [[later], "10\n"],
      [[first, later], "11\n"],
    ] as const) {
      const code =
        tables.length === 2
          ? "print(int(first_seen.merge(loaded_later, on='k')[['v', 'w']].sum().sum()))"
          : "print(int(df.iloc[:, 1].sum()))";
      const result = await sandbox.execute({ code, tables: [...tables] });
      expect(result.error).toBeNull();
      expect(result.stdout).toBe(expected);
    }
  });

  it("imports matplotlib into the interpreter once code uses it, so later children have it", async () => {
    const single = await LocalSandbox.start({ interpreters: 1 });
    try {
      // The check names no matplotlib itself, or the interpreter would import it for the check.
      const check = "import sys\nprint(any(m.endswith('.pyplot') for m in sys.modules))";
      expect((await single.execute({ code: check, tables: [] })).stdout).toBe("False\n");
      const plot = await single.execute({
        code: "import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nprint(matplotlib.get_backend())",
        tables: [],
      });
      expect(plot.error).toBeNull();
      expect(plot.stdout.toLowerCase()).toBe("agg\n");
      expect((await single.execute({ code: check, tables: [] })).stdout).toBe("True\n");
    } finally {
      await single.close();
    }
  });

  it("limits memory to memoryMb on top of what the warm interpreter holds", async () => {
    const code = "block = bytearray(300 * 1024 * 1024)\nprint(len(block) // 2**20)";
    const small = await sandbox.execute({ code, tables: [], memoryMb: 100 });
    expect(small.error?.type).toBe("MemoryError");
    // The warm interpreter alone maps over 100 MB: 400 MB would not fit 300 more if the
    // limit counted it.
    const large = await sandbox.execute({ code, tables: [], memoryMb: 400 });
    expect(large.stdout).toBe("300\n");
  });

  it("kills code that ignores the soft timeout", async () => {
    const pidBefore = sandbox.interpreterPids;
    const result = await sandbox.execute({
      code: "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass",
      tables: [],
      timeoutMs: 300,
    });
    expect(result.error).toEqual({
      type: "Timeout",
      message: "execution exceeded 300 ms",
      line: null,
    });
    // The interpreter survived: it only killed its child.
    expect(sandbox.interpreterPids).toEqual(pidBefore);
  });
});

describe("the local sandbox's own watchdog and lifecycle", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("replaces an interpreter that stops answering, and the next request works", async () => {
    const sandbox = await LocalSandbox.start({
      interpreters: 1,
      graceMs: 200,
      loadTimeoutMs: 1500,
    });
    try {
      const [stuck] = sandbox.interpreterPids;
      expect(stuck).toBeDefined();
      process.kill(stuck as number, "SIGSTOP");
      const result = await sandbox.execute({ code: "print(1)", tables: [], timeoutMs: 300 });
      expect(result.ok).toBe(false);
      expect(result.error?.type).toBe("Timeout");
      expect(isRunning(stuck as number)).toBe(false);

      const next = await sandbox.execute({ code: "print('fresh')", tables: [] });
      expect(next.stdout).toBe("fresh\n");
      expect(sandbox.interpreterPids).not.toContain(stuck);
    } finally {
      await sandbox.close();
    }
  });

  it("restarts an interpreter that died, even when the next request was already on its way", async () => {
    const sandbox = await LocalSandbox.start({ interpreters: 1 });
    try {
      const [first] = sandbox.interpreterPids;
      // Sent at once: the death may or may not have been noticed yet.
      process.kill(first as number, "SIGKILL");
      const result = await sandbox.execute({ code: "print('back')", tables: [] });
      expect(result.stdout).toBe("back\n");
      expect(sandbox.interpreterPids).not.toContain(first);
    } finally {
      await sandbox.close();
    }
  });

  it("close() leaves no interpreter process behind", async () => {
    const scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-close-"));
    const sandbox = await LocalSandbox.start({ interpreters: 2, scratchRoot });
    const pids = sandbox.interpreterPids;
    expect(pids).toHaveLength(2);
    expect(pids.every(isRunning)).toBe(true);
    await sandbox.execute({ code: "print(1)", tables: [] });
    // Each interpreter and its parked child carry the scratch root on their command line.
    expect(withCmdline(scratchRoot).length).toBeGreaterThanOrEqual(2);
    await sandbox.close();
    expect(pids.some(isRunning)).toBe(false);
    expect(withCmdline(scratchRoot)).toEqual([]);
    expect(readdirSync(scratchRoot)).toEqual([]);
    rmSync(scratchRoot, { recursive: true, force: true });
    await expect(sandbox.execute({ code: "print(1)", tables: [] })).rejects.toThrow(/closed/);
  });

  it("defaults to one interpreter per core and works without forking ahead", async () => {
    const sandbox = await LocalSandbox.start({ forkAhead: false });
    try {
      expect(sandbox.interpreterPids).toHaveLength(defaultInterpreterCount());
      expect((await sandbox.info()).protections.forkAhead).toBe(false);
      const result = await sandbox.execute({
        code: "print(df.shape)",
        tables: [await someTable()],
      });
      expect(result.stdout).toBe("(1, 1)\n");
      expect(
        await eventually(() =>
          sandbox.interpreterPids.every((pid) => descendants(pid).length === 0),
        ),
      ).toBe(true);
    } finally {
      await sandbox.close();
    }
  });
});

describe("interpreter.py", () => {
  it("finds the modules next to it whatever the working directory, and says it is ready", async () => {
    const scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-cwd-"));
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), "tableminds-elsewhere-"));
    const python = (await findPython()).executable;
    const interpreter = spawn(python, [INTERPRETER_SCRIPT, scratchRoot, "--no-fork-ahead"], {
      cwd: elsewhere,
      stdio: ["pipe", "ignore", "pipe", "pipe"],
    });
    try {
      const protocol = interpreter.stdio[3] as Readable;
      const lines = new LineSplitter();
      const first = await new Promise<string>((resolve, reject) => {
        protocol.setEncoding("utf8");
        protocol.on("data", (chunk: string) => {
          const [line] = lines.push(chunk);
          if (line !== undefined) resolve(line);
        });
        interpreter.on("exit", (code) => reject(new Error(`interpreter.py exited with ${code}`)));
      });
      expect(parseInterpreterLine(first)).toMatchObject({
        type: "ready",
        python: expect.any(String),
      });
      const exited = new Promise((resolve) => interpreter.once("exit", resolve));
      interpreter.stdin?.end();
      expect(await exited).toBe(0);
      // It removed its scratch directories on the way out.
      expect(readdirSync(scratchRoot)).toEqual([]);
    } finally {
      interpreter.kill("SIGKILL");
      rmSync(scratchRoot, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe("the shared sandbox", () => {
  it("is started once for concurrent callers and closed by closeSandboxes()", async () => {
    const [a, b] = await Promise.all([getSandbox("local"), getSandbox("local")]);
    expect(a).toBe(b);
    expect(a).toBeInstanceOf(LocalSandbox);
    const pids = (a as LocalSandbox).interpreterPids;
    expect((await a.execute({ code: "print('shared')", tables: [] })).stdout).toBe("shared\n");
    await closeSandboxes();
    expect(pids.some(isRunning)).toBe(false);
    const fresh = await getSandbox("local");
    expect(fresh).not.toBe(a);
    await closeSandboxes();
  });
});

describe("findPython", () => {
  it("finds a python with pandas", async () => {
    const python = await findPython();
    expect(python.executable).toMatch(/python/);
    expect(python.pandas).toMatch(/^\d+\.\d+/);
  });

  it("says what to do when TABLEMINDS_PYTHON cannot import pandas", async () => {
    const saved = process.env.TABLEMINDS_PYTHON;
    process.env.TABLEMINDS_PYTHON = "/bin/false";
    try {
      const failure = findPython();
      await expect(failure).rejects.toBeInstanceOf(PythonNotFoundError);
      await expect(failure).rejects.toThrow(/TABLEMINDS_PYTHON=\/bin\/false cannot import pandas/);
    } finally {
      if (saved === undefined) delete process.env.TABLEMINDS_PYTHON;
      else process.env.TABLEMINDS_PYTHON = saved;
    }
  });
});
