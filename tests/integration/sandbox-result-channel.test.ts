/**
 * Issue 22, item 2: the result of a run in the local pool comes back through a channel that
 * generated code can neither write to nor fill with what the interpreter and Node would trust,
 * and every file the run left in scratch is read without blocking, checked through its
 * descriptor. Each wait here is bounded, so that a hang fails the test instead of the run.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecResult } from "../../blackboard/schemas.js";
import { LocalSandbox } from "../../sandbox/local.js";
import { useTempHome } from "../support/env.js";

const CORPUS = path.resolve(import.meta.dirname, "../support/hostile");
/** Far above what one of these runs needs, far below the test's own timeout. */
const BOUND_MS = 25_000;
const TABLE_BYTES = 100_000;

/** `promise`, or an error once `ms` have passed: a hang becomes a failure. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Python that makes the report of the code's own process (which the child that forked it
 * passes on as the run's) carry `forged`, a Python dict literal.
 */
function patchRunner(setup: string, forged: string): string {
  return `import json, os, sys
${setup}
forged = ${forged}
frame = sys._getframe()
while "write_fd" not in frame.f_locals:
    frame = frame.f_back
os.write(frame.f_locals["write_fd"], json.dumps({"value": {**forged, "from_index": None, "figures": []}}).encode())
os._exit(0)
`;
}

function table(variable: string, index: number): string {
  return `{"variable": "${variable}", "line": 1, "file": "_tableminds_table_${index}.csv", "rows": 1, "columns": [{"name": "x", "dtype": "int64"}], "lineage": []}`;
}

function forgedResult(tables: string[], extra = ""): string {
  return `{"ok": True, "stdout": "forged\\n", "stderr": "", "error": None, "spans": [], "truncated": False, "result": None, "tables": [${tables.join(", ")}]${extra}}`;
}

describe.runIf(process.platform === "linux")("the local pool's result channel", () => {
  let sandbox: LocalSandbox;
  let scratchRoot: string;

  beforeAll(async () => {
    useTempHome();
    scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-channel-root-"));
    sandbox = await LocalSandbox.start({
      interpreters: 2,
      scratchRoot,
      tableFileBytes: TABLE_BYTES,
    });
  });

  afterAll(async () => {
    await sandbox?.close();
    rmSync(scratchRoot, { recursive: true, force: true });
  });

  function run(code: string, timeoutMs = 10_000): Promise<ExecResult> {
    return within(BOUND_MS, "the run", sandbox.execute({ code, tables: [], timeoutMs }));
  }

  it("never gets a result written on the frame-found descriptor, four at once, and file reads go on", async () => {
    const code = readFileSync(path.join(CORPUS, "forged-result-fifo.py"), "utf8");
    const results = await Promise.all([run(code), run(code), run(code), run(code)]);
    for (const result of results) {
      expect(result.ok).toBe(false);
      expect(result.error?.type).toBe("Crashed");
      expect(result.error?.message).toMatch(/exited with code 0 before returning a result/);
      expect(result.stdout).toBe("");
      expect(result.tables).toEqual([]);
    }
    // libuv's four file threads are free: an ordinary read in this process still ends.
    const own = await within(5_000, "a file read", readFile(path.join(CORPUS, "forged-result.py")));
    expect(own.length).toBeGreaterThan(0);
    // And the pool goes on.
    expect((await run("print('next')")).stdout).toBe("next\n");
  });

  it("checks every file a forged report names: FIFO, symlink, directory, hard link, too big", async () => {
    const setup = `os.mkfifo("_tableminds_table_0.csv")
os.symlink("/etc/passwd", "_tableminds_table_1.csv")
os.mkdir("_tableminds_table_2.csv")
with open("plain.csv", "w") as handle:
    handle.write("x\\n1\\n")
os.link("plain.csv", "_tableminds_table_3.csv")
with open("_tableminds_table_4.csv", "w") as handle:
    handle.write("x\\n" + "1\\n" * ${TABLE_BYTES})
with open("_tableminds_table_5.csv", "w") as handle:
    handle.write("x\\n7\\n")`;
    const names = ["fifo", "passwd", "folder", "linked", "huge", "fine"];
    const result = await run(
      patchRunner(setup, forgedResult(names.map((name, index) => table(name, index)))),
    );
    expect(result.error).toBeNull();
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("forged\n");
    // The one regular file within the bound is stored, with what it really holds.
    expect(result.tables.map((t) => t.variable)).toEqual(["fine"]);
    expect(readFileSync(result.tables[0]?.table.uri ?? "", "utf8")).toBe("x\n7\n");
    const notes = result.stderr;
    expect(notes).toMatch(/table fifo could not be stored: its file is a FIFO, not a regular file/);
    expect(notes).toMatch(/table passwd could not be stored: its file is a symbolic link/);
    expect(notes).toMatch(/table folder could not be stored: its file is a directory/);
    expect(notes).toMatch(/table linked could not be stored: its file has 2 links/);
    expect(notes).toMatch(
      /table huge could not be stored: its file has \d+ bytes, more than the 100000/,
    );
    expect(JSON.stringify(result)).not.toContain("root:");
  });

  it("refuses a forged report whose table file is not a name the runner gives", async () => {
    const forged = forgedResult([
      `{"variable": "up", "line": 1, "file": "../x.csv", "rows": 1, "columns": [], "lineage": []}`,
    ]);
    const result = await run(patchRunner("", forged));
    expect(result.error?.type).toBe("ProtocolError");
    expect(result.error?.message).toMatch(/is not a name the runner gives/);
    expect(result.tables).toEqual([]);
  });

  it("refuses a forged report of the wrong form for that run alone: the interpreter goes on", async () => {
    const pids = sandbox.interpreterPids;
    const forged = `{"ok": True, "stdout": "forged\\n", "stderr": "", "error": None, "truncated": False, "tables": [], "spans": [{"line": "one", "start": 0, "end": 1}], "result": None}`;
    const result = await run(patchRunner("", forged));
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("ProtocolError");
    expect(result.error?.message).toMatch(/the run's result was refused: spans\.0\.line/);
    expect(result.stdout).toBe("");
    expect(sandbox.interpreterPids).toEqual(pids);
    expect((await run("print('next')")).stdout).toBe("next\n");
  });

  it("keeps the interpreter's envelope: a forged report cannot pose as another message", async () => {
    const victim = mkdtempSync(path.join(os.tmpdir(), "tableminds-channel-victim-"));
    writeFileSync(path.join(victim, "keep.txt"), "mine\n");
    const ownRoot = path.join(scratchRoot, "own");
    mkdirSync(ownRoot);
    const own = await LocalSandbox.start({ interpreters: 1, scratchRoot: ownRoot });
    try {
      const pids = own.interpreterPids;
      // A "ready" message naming the victim as the interpreter's scratch root (which Node removes
      // when it kills an interpreter), for another request id, with a scratch folder of its own.
      const extra = `, "type": "ready", "id": "someone-else", "scratch": "/", "pid": 1, "python": "3", "pandas": "2", "numpy": "1", "scratch_root": ${JSON.stringify(victim)}, "protections": {}, "details": {}`;
      const result = await within(
        BOUND_MS,
        "the run",
        own.execute({
          code: patchRunner("", forgedResult([], extra)),
          tables: [],
          timeoutMs: 2_000,
        }),
      );
      expect(result.error).toBeNull();
      expect(result.stdout).toBe("forged\n");
      expect(own.interpreterPids).toEqual(pids);
      expect((await own.execute({ code: "print('next')", tables: [] })).stdout).toBe("next\n");
    } finally {
      await own.close();
    }
    expect(existsSync(path.join(victim, "keep.txt"))).toBe(true);
    rmSync(victim, { recursive: true, force: true });
  });

  it("a report of the wrong form from the code's process fails that run alone", async () => {
    const pids = sandbox.interpreterPids;
    const forged = `{"ok": True, "stdout": "forged\\n", "stderr": "", "error": None, "truncated": False, "tables": [], "spans": [], "result": {"from": "declared", "kind": "weird"}}`;
    const result = await run(patchRunner("", forged));
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("Crashed");
    expect(result.error?.message).toBe("the code's process sent a report that is not one");
    expect(result.stdout).toBe("");
    expect(sandbox.interpreterPids).toEqual(pids);
  });

  it("gives the code's process no result pipe, no handle on libc and no ctypes", async () => {
    const code = `import os, sys
frame = sys._getframe()
while frame is not None and "result_fd" not in frame.f_locals:
    frame = frame.f_back
fd = frame.f_locals["result_fd"]
print("result fd:", os.readlink(f"/proc/self/fd/{fd}"))
print("libc:", sys.modules["hardening"]._libc)
print("ctypes loaded:", sorted(name for name in sys.modules if name.partition(".")[0] in ("ctypes", "_ctypes")))
try:
    import ctypes
    print("ctypes: imported")
except ImportError as error:
    print("ctypes:", type(error).__name__)
`;
    const result = await run(code);
    expect(result.error).toBeNull();
    expect(result.stdout).toBe(
      "result fd: /dev/null\nlibc: None\nctypes loaded: []\nctypes: ModuleNotFoundError\n",
    );
  });
});
