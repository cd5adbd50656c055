import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { closeSandboxes, getSandbox } from "../../tools/sandbox/index.js";
import { defaultWorkerCount, LocalSandbox } from "../../tools/sandbox/local.js";
import { findPython, PythonNotFoundError } from "../../tools/sandbox/python.js";
import { useTempHome } from "../support/env.js";
import { MEDALS_CSV, tableRef } from "../support/table-fixtures.js";
import { descendants, eventually, withCmdline } from "./hostile/procfs.js";

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
  let medals: TableRef;

  beforeAll(async () => {
    useTempHome();
    medals = await tableRef("medals", MEDALS_CSV, [
      { name: "nation", dtype: "object" },
      { name: "gold", dtype: "int64" },
      { name: "silver", dtype: "int64" },
    ]);
    sandbox = await LocalSandbox.start({ workers: 2 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it("reports itself as the local backend with python and pandas versions", async () => {
    const info = await sandbox.info();
    expect(info.backend).toBe("local");
    expect(info.runtime).toMatch(/Python 3\.\d+.*pandas \d+\.\d+/);
    expect(info.protections).toMatchObject({
      fork: true,
      wallClockKill: true,
      outputCap: true,
      scratchDir: true,
      scrubbedEnv: true,
      auditHook: true,
      forkAhead: true,
    });
    // Probed, not assumed: every answer is a boolean, whatever this machine allows.
    for (const key of ["netns", "seccomp", "landlock", "noNewProcesses", "rlimitNproc"]) {
      expect(typeof info.protections[key]).toBe("boolean");
    }
    if (process.getuid?.() === 0) expect(info.protections.rlimitNproc).toBe(false);
  });

  it("runs requests on several workers at once", async () => {
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

  it("reports a table the child cannot read as TableLoadError, and the next request works", async () => {
    const gone = await tableRef("gone", "g\n4242", [{ name: "g", dtype: "int64" }]);
    rmSync(gone.uri);
    const result = await sandbox.execute({ code: "print(len(df))", tables: [gone] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("TableLoadError");
    const next = await sandbox.execute({ code: "print(int(df.gold.sum()))", tables: [medals] });
    expect(next.stdout).toBe("126\n");
  });

  it("imports matplotlib into the worker once code uses it, so later children have it", async () => {
    const single = await LocalSandbox.start({ workers: 1 });
    try {
      // The check names no matplotlib itself, or the worker would import it for the check.
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

  it("runs each request in a fresh scratch directory that is removed afterwards", async () => {
    const code =
      "import os\nopen('note.txt', 'w').write('x')\nprint(os.getcwd())\nprint(os.listdir('.'))";
    const first = await sandbox.execute({ code, tables: [] });
    const second = await sandbox.execute({ code, tables: [] });
    const [dirA, listingA] = first.stdout.split("\n");
    const [dirB, listingB] = second.stdout.split("\n");
    expect(dirA).not.toBe(dirB);
    expect(listingA).toBe("['note.txt']");
    expect(listingB).toBe("['note.txt']");
    expect(await eventually(() => !existsSync(dirA ?? "") && !existsSync(dirB ?? ""))).toBe(true);
  });

  it("removes the scratch directory of a run with tables once they are stored", async () => {
    const result = await sandbox.execute({
      code: "import os\nprint(os.getcwd())\nkept = df.head(2)",
      tables: [medals],
    });
    expect(result.tables.map((t) => t.variable)).toEqual(["kept"]);
    const scratch = result.stdout.trim();
    expect(await eventually(() => !existsSync(scratch))).toBe(true);
    expect(await readFile(result.tables[0]?.table.uri ?? "", "utf8")).toMatch(
      /^nation,gold,silver\n/,
    );
  });

  it("limits memory to memoryMb on top of what the warm worker holds", async () => {
    const code = "block = bytearray(300 * 1024 * 1024)\nprint(len(block) // 2**20)";
    const small = await sandbox.execute({ code, tables: [], memoryMb: 100 });
    expect(small.error?.type).toBe("MemoryError");
    // The warm interpreter alone maps over 100 MB: 400 MB would not fit 300 more if the
    // limit counted it.
    const large = await sandbox.execute({ code, tables: [], memoryMb: 400 });
    expect(large.stdout).toBe("300\n");
  });

  it("gives one table as df and by its name", async () => {
    const result = await sandbox.execute({
      code: "print(int(df['gold'].sum()))\nprint(medals is df, len(medals))",
      tables: [medals],
    });
    expect(result.error).toBeNull();
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("126\nTrue 4\n");
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it("gives several tables by name only", async () => {
    const other = await tableRef("codes", "nation,code\nChina,CHN\nJapan,JPN", [
      { name: "nation", dtype: "object" },
      { name: "code", dtype: "object" },
    ]);
    const result = await sandbox.execute({
      code: "print(len(medals.merge(codes, on='nation')))\nprint('df' in globals())",
      tables: [medals, other],
    });
    expect(result.stdout).toBe("2\nFalse\n");
  });

  it("records which line wrote each part of stdout", async () => {
    const code = [
      "total = 0",
      "print('first')",
      "def shout(text):\n    print(text.upper(), end='!\\n')",
      "print('second', 2)",
      "shout('third')",
    ].join("\n");
    const result = await sandbox.execute({ code, tables: [] });
    expect(result.stdout).toBe("first\nsecond 2\nTHIRD!\n");
    expect(result.spans).toEqual([
      { line: 2, start: 0, end: 6 },
      { line: 5, start: 6, end: 15 },
      { line: 4, start: 15, end: 22 },
    ]);
  });

  it("reports an exception with its type, message and line", async () => {
    const result = await sandbox.execute({
      code: "x = 1\nprint('before')\ny = df['no such column']\nprint('after')",
      tables: [medals],
    });
    expect(result.ok).toBe(false);
    expect(result.error).toEqual({ type: "KeyError", message: "'no such column'", line: 3 });
    expect(result.stdout).toBe("before\n");
  });

  it("reports the line of an exception raised inside a function", async () => {
    const result = await sandbox.execute({
      code: "def f():\n    return 1 / 0\n\nf()",
      tables: [],
    });
    expect(result.error).toMatchObject({ type: "ZeroDivisionError", line: 2 });
  });

  it("reports a syntax error with its line", async () => {
    const result = await sandbox.execute({ code: "a = 1\nb = = 2\nprint(a)", tables: [] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("SyntaxError");
    expect(result.error?.line).toBe(2);
  });

  it("returns intermediate DataFrames as artifacts with their assigning line", async () => {
    const code = [
      "import pandas as pd",
      "top = df[df['gold'] > 30]",
      "top = top[['nation', 'gold']].reset_index(drop=True)",
      "golds = df['gold']",
      "_hidden = df.head(1)",
      "by_nation = df.set_index('nation')",
    ].join("\n");
    const result = await sandbox.execute({ code, tables: [medals] });
    expect(result.ok).toBe(true);
    const byName = new Map(result.tables.map((t) => [t.variable, t]));
    expect([...byName.keys()]).toEqual(["top", "golds", "by_nation"]);

    const top = byName.get("top");
    expect(top?.line).toBe(3);
    expect(top?.table).toMatchObject({
      id: "table:top",
      name: "top",
      rows: 2,
      columns: [
        { name: "nation", dtype: "object" },
        { name: "gold", dtype: "int64" },
      ],
    });
    const topCsv = await readFile(top?.table.uri ?? "", "utf8");
    expect(topCsv).toBe("nation,gold\nUnited States,39\nChina,38\n");

    expect(byName.get("golds")?.line).toBe(4);
    expect(byName.get("golds")?.table.columns).toEqual([{ name: "gold", dtype: "int64" }]);
    // A non-default index is kept as a column.
    const nationCsv = await readFile(byName.get("by_nation")?.table.uri ?? "", "utf8");
    expect(nationCsv.split("\n")[0]).toBe("nation,gold,silver");
    expect(byName.get("by_nation")?.table.rows).toBe(4);
  });

  it("reports an input table only when the code rebinds its name", async () => {
    const untouched = await sandbox.execute({
      code: "alias = df\nmedals['gold'] = 0\nprint(len(df))",
      tables: [medals],
    });
    expect(untouched.tables).toEqual([]);

    const rebound = await sandbox.execute({
      code: "print('x')\ndf = df[df['silver'] > 20]",
      tables: [medals],
    });
    expect(rebound.tables.map((t) => [t.variable, t.line, t.table.rows])).toEqual([["df", 2, 3]]);
  });

  it("kills an endless loop at its timeout, and the next request works", async () => {
    const started = Date.now();
    const result = await sandbox.execute({
      code: "print('start')\nwhile True:\n    pass",
      tables: [],
      timeoutMs: 500,
    });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("Timeout");
    expect(result.error?.message).toBe("execution exceeded 500 ms");
    expect(Date.now() - started).toBeLessThan(3_000);

    const next = await sandbox.execute({ code: "print(6 * 7)", tables: [] });
    expect(next.stdout).toBe("42\n");
  });

  it("kills code that ignores the soft timeout", async () => {
    const pidBefore = sandbox.workerPids;
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
    // The worker survived: it only killed its child.
    expect(sandbox.workerPids).toEqual(pidBefore);
  });

  it("truncates output over the cap", async () => {
    const result = await sandbox.execute({
      code: "print('a' * 5000)\nprint('never seen')",
      tables: [],
      outputBytes: 1000,
    });
    expect(result.ok).toBe(true);
    expect(result.truncated).toBe(true);
    expect(result.stdout).toBe("a".repeat(1000));
  });

  it("reports a child that exits on its own as Crashed, and the next request works", async () => {
    const result = await sandbox.execute({ code: "import os\nos._exit(3)", tables: [] });
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe("Crashed");
    expect(result.error?.message).toMatch(/exited with code 3/);

    const next = await sandbox.execute({ code: "print('still here')", tables: [] });
    expect(next.stdout).toBe("still here\n");
  });

  it("round-trips non-ASCII output with spans in JavaScript string offsets", async () => {
    const result = await sandbox.execute({
      code: "print('Zürich → 東京 🏅')\nprint('end')",
      tables: [],
    });
    expect(result.stdout).toBe("Zürich → 東京 🏅\nend\n");
    const [first, second] = result.spans;
    expect(result.stdout.slice(first?.start, first?.end)).toBe("Zürich → 東京 🏅\n");
    expect(result.stdout.slice(second?.start, second?.end)).toBe("end\n");
  });

  it("keeps writes to the raw file descriptors away from the protocol", async () => {
    const result = await sandbox.execute({
      code: "import os, sys\nos.write(1, b'{not json\\n')\nos.write(2, b'noise\\n')\nprint('ok')",
      tables: [],
    });
    expect(result.ok).toBe(true);
    expect(result.stdout).toBe("ok\n");
  });

  it("runs concurrent requests one after another", async () => {
    const results = await Promise.all(
      [1, 2, 3].map((n) => sandbox.execute({ code: `print(${n} * 10)`, tables: [] })),
    );
    expect(results.map((r) => r.stdout)).toEqual(["10\n", "20\n", "30\n"]);
  });

  it("rejects a malformed request", async () => {
    await expect(
      sandbox.execute({ code: "print(1)", tables: [{ name: "broken" } as unknown as TableRef] }),
    ).rejects.toThrow();
  });
});

describe("the local sandbox's own watchdog and lifecycle", () => {
  beforeAll(() => {
    useTempHome();
  });

  it("replaces a worker that stops answering, and the next request works", async () => {
    const sandbox = await LocalSandbox.start({ workers: 1, graceMs: 200, loadTimeoutMs: 1500 });
    try {
      const [stuck] = sandbox.workerPids;
      expect(stuck).toBeDefined();
      process.kill(stuck as number, "SIGSTOP");
      const result = await sandbox.execute({ code: "print(1)", tables: [], timeoutMs: 300 });
      expect(result.ok).toBe(false);
      expect(result.error?.type).toBe("Timeout");
      expect(isRunning(stuck as number)).toBe(false);

      const next = await sandbox.execute({ code: "print('fresh')", tables: [] });
      expect(next.stdout).toBe("fresh\n");
      expect(sandbox.workerPids).not.toContain(stuck);
    } finally {
      await sandbox.close();
    }
  });

  it("restarts a worker that died, even when the next request was already on its way", async () => {
    const sandbox = await LocalSandbox.start({ workers: 1 });
    try {
      const [first] = sandbox.workerPids;
      // Sent at once: the death may or may not have been noticed yet.
      process.kill(first as number, "SIGKILL");
      const result = await sandbox.execute({ code: "print('back')", tables: [] });
      expect(result.stdout).toBe("back\n");
      expect(sandbox.workerPids).not.toContain(first);
    } finally {
      await sandbox.close();
    }
  });

  it("close() leaves no worker process behind", async () => {
    const scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-close-"));
    const sandbox = await LocalSandbox.start({ workers: 2, scratchRoot });
    const pids = sandbox.workerPids;
    expect(pids).toHaveLength(2);
    expect(pids.every(isRunning)).toBe(true);
    await sandbox.execute({ code: "print(1)", tables: [] });
    // Each worker and its parked child carry the scratch root on their command line.
    expect(withCmdline(scratchRoot).length).toBeGreaterThanOrEqual(2);
    await sandbox.close();
    expect(pids.some(isRunning)).toBe(false);
    expect(withCmdline(scratchRoot)).toEqual([]);
    expect(readdirSync(scratchRoot)).toEqual([]);
    rmSync(scratchRoot, { recursive: true, force: true });
    await expect(sandbox.execute({ code: "print(1)", tables: [] })).rejects.toThrow(/closed/);
  });

  it("defaults to one worker per core and works without forking ahead", async () => {
    const sandbox = await LocalSandbox.start({ forkAhead: false });
    try {
      expect(sandbox.workerPids).toHaveLength(defaultWorkerCount());
      expect((await sandbox.info()).protections.forkAhead).toBe(false);
      const result = await sandbox.execute({
        code: "print(df.shape)",
        tables: [await someTable()],
      });
      expect(result.stdout).toBe("(1, 1)\n");
      expect(
        await eventually(() => sandbox.workerPids.every((pid) => descendants(pid).length === 0)),
      ).toBe(true);
    } finally {
      await sandbox.close();
    }
  });
});

describe("the shared sandbox", () => {
  it("is started once for concurrent callers and closed by closeSandboxes()", async () => {
    const [a, b] = await Promise.all([getSandbox("local"), getSandbox("local")]);
    expect(a).toBe(b);
    expect(a).toBeInstanceOf(LocalSandbox);
    const pids = (a as LocalSandbox).workerPids;
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

describe("runner.py as a one-shot command", () => {
  const RUNNER = fileURLToPath(new URL("../../tools/sandbox/runner.py", import.meta.url));

  async function runOnce(request: object, dir: string): Promise<{ code: number; result: unknown }> {
    const requestPath = path.join(dir, "request.json");
    const resultPath = path.join(dir, "result.json");
    writeFileSync(requestPath, JSON.stringify(request));
    const python = (await findPython()).executable;
    const code = await new Promise<number>((resolve) => {
      execFile(python, [RUNNER, requestPath, resultPath], { timeout: 20_000 }, (error) =>
        resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
      );
    });
    const result = existsSync(resultPath) ? JSON.parse(await readFile(resultPath, "utf8")) : null;
    return { code, result };
  }

  it("runs a request file and writes the documented result file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-runner-"));
    try {
      const scratch = path.join(dir, "scratch");
      mkdirSync(scratch);
      writeFileSync(path.join(dir, "sales.csv"), "region,amount\nnorth,5\nsouth,7\nnorth,1\n");
      const { code, result } = await runOnce(
        {
          code: "total = int(df.amount.sum())\nprint(total)\nby_region = df.groupby('region').amount.sum()\nraise ValueError('late')",
          tables: [{ name: "sales", path: path.join(dir, "sales.csv") }],
          timeout_ms: 5_000,
          output_bytes: 1_000,
          scratch,
        },
        dir,
      );
      expect(code).toBe(0);
      expect(result).toEqual({
        ok: false,
        stdout: "13\n",
        stderr: "",
        error: { type: "ValueError", message: "late", line: 4 },
        spans: [{ line: 2, start: 0, end: 3 }],
        truncated: false,
        tables: [
          {
            variable: "by_region",
            line: 3,
            file: "_tableminds_table_0.csv",
            rows: 2,
            columns: [
              { name: "region", dtype: "object" },
              { name: "amount", dtype: "int64" },
            ],
          },
        ],
      });
      expect(await readFile(path.join(scratch, "_tableminds_table_0.csv"), "utf8")).toBe(
        "region,amount\nnorth,6\nsouth,7\n",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits with 2 and writes nothing for a request it cannot read", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-runner-"));
    try {
      const { code, result } = await runOnce({ code: 42 }, dir);
      expect(code).toBe(2);
      expect(result).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
