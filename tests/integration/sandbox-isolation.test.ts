/**
 * What one request of the local pool can reach of another, and whether generated code can
 * switch the audit hook off: against real interpreters, with and without Landlock.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableRef } from "../../blackboard/schemas.js";
import { LocalSandbox, WarmInterpreter } from "../../sandbox/local.js";
import { findPython } from "../../sandbox/python.js";
import { putArtifact } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";
import { tableRef } from "../support/table-fixtures.js";
import { useInterpreterWithoutLandlock } from "../support/unconfined-interpreter.js";

const run = promisify(execFile);
const SANDBOX_DIR = path.resolve(import.meta.dirname, "../../sandbox");
const MARKER = `foreign-${process.pid}-${Date.now()}`;

async function table(csv: string, name: string): Promise<TableRef> {
  const stored = await putArtifact(csv, "csv");
  return { id: `table:${name}`, name, ...stored, rows: 1, columns: [] };
}

/**
 * Looks for MARKER in everything plain Python reaches without gc: the interpreter's table
 * cache, every module's globals (one level into dicts, lists and DataFrames), and the
 * locals of every frame up the stack. Prints "clean" or what it found.
 */
const LOOK_FOR_MARKER = `
import sys
import pandas as pd
# Split, so that this code (which the frames hold) does not itself contain the marker.
marker = "${MARKER.slice(0, 8)}" + "${MARKER.slice(8)}"
found = []

def holds(value, depth=0):
    try:
        if isinstance(value, pd.DataFrame):
            return marker in value.to_string()
        if isinstance(value, (str, bytes)):
            return marker in (value if isinstance(value, str) else value.decode("utf-8", "replace"))
        if depth < 2 and isinstance(value, dict):
            return any(holds(k, depth + 1) or holds(v, depth + 1) for k, v in list(value.items()))
        if depth < 2 and isinstance(value, (list, tuple)):
            return any(holds(v, depth + 1) for v in value)
        if depth < 2 and hasattr(value, "__dict__") and not isinstance(value, type):
            return holds(vars(value), depth + 1)
    except Exception:
        return False
    return False

cache = getattr(sys.modules["__main__"], "_table_cache", {})
if len(cache) > 1 or any(holds(frame) for frame in cache.values()):
    found.append(f"_table_cache: {len(cache)} tables")
for module_name, module in list(sys.modules.items()):
    for key, value in list(getattr(module, "__dict__", {}).items()):
        if key != "marker" and holds(value):
            found.append(f"{module_name}.{key}")
frame = sys._getframe(1)
while frame is not None:
    for key, value in list(frame.f_locals.items()):
        if value is not globals() and holds(value):
            found.append(f"frame {frame.f_code.co_name}: {key}")
    frame = frame.f_back
print("clean" if not found else found[:10])
`;

/** The attack of the review, and its variants: find the hook, empty or replace its state. */
const DISARM_HOOK = `
import sys, types
attempts = []
allow_code = (lambda *args: None).__code__
def attempt(label, action):
    try:
        action()
        attempts.append(label + ": done")
    except PermissionError as exc:
        attempts.append(label + ": refused")
    except Exception as exc:
        attempts.append(f"{label}: {type(exc).__name__}")

# The sandbox's functions reachable from the frames of the stack (the hook was a local there).
def ours(value):
    return isinstance(value, types.FunctionType) and value.__module__ in ("hardening", "read_rules")
functions = []
frame = sys._getframe(0)
while frame is not None:
    functions += [v for v in frame.f_locals.values() if ours(v)]
    frame = frame.f_back
# And from the frames of a refusal's traceback: the hook's own frame is the last one.
try:
    open("/etc/hostname")
except PermissionError as exc:
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    hook_locals = tb.tb_frame.f_locals
    print("hook frame:", tb.tb_frame.f_code.co_name, len(hook_locals))
    for value in list(hook_locals.values()):
        if isinstance(value, (dict, set)):
            attempt("clear a container of the hook", value.clear)
        if ours(value):
            functions.append(value)
for function in functions:
    for cell in function.__closure__ or ():
        contents = cell.cell_contents
        if isinstance(contents, (dict, set)):
            attempt("clear a closure container", contents.clear)
        elif callable(contents) and not isinstance(contents, type):
            def allow(*args, **kwargs):
                return True
            attempt("replace a closure function", lambda: setattr(cell, "cell_contents", allow))
    if function.__defaults__:
        attempt("replace defaults", lambda: setattr(function, "__defaults__", (None,) * len(function.__defaults__)))
        attempt("replace code", lambda: setattr(function, "__code__", allow_code))
import hardening, posixpath, read_rules
for name in ("_REFUSED_EVENTS", "_WRITE_EVENTS", "_READ_EVENTS"):
    getattr(hardening, name, {}).clear()
read_rules.SYSTEM_DIRS = ("/",)
posixpath._joinrealpath = lambda *args: ("/usr/lib/allowed", True)
try:
    sys.settrace(lambda *args: None)
    attempts.append("settrace: done")
except PermissionError:
    attempts.append("settrace: refused")
print(len(functions), sorted(set(attempts)))
print(open("/etc/hostname").read())
`;

describe.runIf(process.platform === "linux")("isolation between requests of the local pool", () => {
  let python: string;
  let scratchRoot: string;
  let first: TableRef;
  let second: TableRef;

  beforeAll(async () => {
    useTempHome();
    python = (await findPython()).executable;
    scratchRoot = mkdtempSync(path.join(os.tmpdir(), "tableminds-isolation-"));
    first = await table(`account,secret\nalice,${MARKER}\n`, "first");
    second = await table("n\n1\n2\n", "second");
  });

  afterAll(() => {
    rmSync(scratchRoot, { recursive: true, force: true });
  });

  it("leaves nothing of an earlier request's table or output in reach of the next", async () => {
    // One interpreter, so that the second request runs in a child of the interpreter that loaded the first.
    const sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot });
    try {
      const a = await sandbox.execute({ code: "print(df.to_string())", tables: [first] });
      expect(a.stdout).toContain(MARKER);
      // Fork ahead (the default) and fork on demand: the second child is made both ways.
      for (const code of [LOOK_FOR_MARKER, `import matplotlib\n${LOOK_FOR_MARKER}`]) {
        const b = await sandbox.execute({ code, tables: [second] });
        expect(b.error).toBeNull();
        expect(b.stdout.trim()).toBe("clean");
      }
      // The request's own table is still there, and the next request with the first works.
      const own = await sandbox.execute({ code: "print(int(df['n'].sum()))", tables: [second] });
      expect(own.stdout).toBe("3\n");
      const again = await sandbox.execute({ code: "print(len(df))", tables: [first] });
      expect(again.stdout).toBe("1\n");
    } finally {
      await sandbox.close();
    }
  });

  it("drops every other request's DataFrame, as gc sees it, and keeps its own", async () => {
    const script = `
import gc, sys
sys.path.insert(0, sys.argv[1])
import pandas as pd
from interpreter_child import keep_own_tables
cache = {"mine": pd.DataFrame({"v": ["own-table"]}), "theirs": pd.DataFrame({"v": [sys.argv[2]]})}
own = keep_own_tables(cache, ["mine", "missing"])
del cache
leaks = [o for o in gc.get_objects() if isinstance(o, pd.DataFrame) and sys.argv[2] in o.to_string()]
print(len(leaks), sorted(own), own["mine"]["v"][0])
`;
    const { stdout } = await run(python, ["-c", script, SANDBOX_DIR, MARKER]);
    expect(stdout.trim()).toBe("0 ['mine'] own-table");
  });

  describe("without Landlock (the audit hook alone)", () => {
    const unconfined = useInterpreterWithoutLandlock(
      "isolation",
      () => python,
      () => scratchRoot,
    );
    const execute = unconfined.execute;

    it("really runs the children without Landlock", () => {
      expect(unconfined.interpreter().readiness.protections.landlock).toBe(false);
      expect(unconfined.interpreter().readiness.protections.auditHook).toBe(true);
      expect(unconfined.interpreter().readiness.protections.readConfinement).toBe(true);
    });

    it("cannot have its audit hook disarmed through frames, closures or module state", async () => {
      const result = await execute(DISARM_HOOK, [second]);
      expect(result.ok).toBe(false);
      expect(result.error?.type).toBe("PermissionError");
      expect(result.error?.message).toMatch(
        /reading outside the scratch directory and the run's tables is not allowed: \/etc\/hostname/,
      );
      expect(result.stdout).toContain("settrace: refused");
      expect(result.stdout).toContain("hook frame: hook");
      expect(result.stdout).toContain("replace defaults: refused");
      expect(result.stdout).not.toMatch(/replace (a closure function|defaults|code): done/);
      expect(result.stdout).not.toMatch(/clear a (closure )?container.*: done/);
    });

    it("leaves the hook in no frame the code can walk to (its defaults could be deleted unaudited in Python 3.11)", async () => {
      const result = await execute(`
import sys
frame = sys._getframe(0)
while frame is not None and "hook" not in frame.f_locals:
    frame = frame.f_back
if frame is None:
    print("no hook in any frame")
else:
    frame.f_locals["hook"].__defaults__ = None
print(open("/etc/hostname").read())
`);
      expect(result.ok).toBe(false);
      expect(result.stdout).toBe("no hook in any frame\n");
      expect(result.error?.message).toMatch(/reading outside the scratch directory/);
      expect(JSON.stringify(result)).not.toContain(readFileSync("/etc/hostname", "utf8").trim());
    });

    it("refuses paths that could answer the hook differently from the open", async () => {
      const result = await execute(`
class Shifty:
    calls = 0
    def __fspath__(self):
        Shifty.calls += 1
        return "/etc/hostname" if Shifty.calls == 1 else "scratch-file"
open(Shifty())
`);
      const listing = await execute(
        "import os\nclass P:\n    def __fspath__(self):\n        return '/etc'\nprint(os.listdir(P()))",
      );
      expect(listing.error?.type).toBe("PermissionError");
      expect(result.error?.type).toBe("PermissionError");
      // open() converts the path before the audit event; other calls pass the object on.
      expect(result.error?.message).toMatch(/\/etc\/hostname|only str, bytes and pathlib paths/);
    });

    it("keeps ordinary pandas and pathlib use working under the hook", async () => {
      const result = await execute(
        `
import pathlib, warnings
pathlib.Path("note.txt").write_text("hi")
print(pathlib.Path("note.txt").read_text(), int(df["n"].sum()), pd.read_csv("second.csv").shape)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    warnings.warn("w")
print(len(caught))
`,
        [second],
      );
      expect(result.error).toBeNull();
      expect(result.stdout).toBe("hi 3 (2, 1)\n1\n");
    });

    it("gives the child a copy of its tables, not a hard link into the store", async () => {
      const result = await execute(
        "import os\nst = os.stat('second.csv')\nprint(st.st_ino, oct(st.st_mode & 0o777))",
        [second],
      );
      expect(result.error).toBeNull();
      const [inode, mode] = result.stdout.trim().split(" ");
      expect(Number(inode)).not.toBe(statSync(second.uri).ino);
      expect(mode).toBe("0o400");
    });
  });

  it("hard-links tables only where Landlock keeps them read-only", async () => {
    const interpreter = await WarmInterpreter.start(python, { scratchRoot });
    try {
      const outcome = await interpreter.run(
        {
          id: "link",
          code: "import os\nprint(os.stat('second.csv').st_ino)",
          tables: [{ name: second.name, uri: second.uri, sha256: second.sha256 }],
          timeout_ms: 15_000,
          output_bytes: 65_536,
          memory_mb: 1024,
        },
        { loadMs: 60_000, runMs: 20_000 },
      );
      expect(outcome.kind).toBe("result");
      const inode = Number(outcome.kind === "result" ? outcome.result.stdout.trim() : Number.NaN);
      if (interpreter.readiness.protections.landlock) expect(inode).toBe(statSync(second.uri).ino);
      else expect(inode).not.toBe(statSync(second.uri).ino);
    } finally {
      await interpreter.stop();
    }
  });

  it("answers the first run of a large table before its pickle is written, and loads the pickle next", async () => {
    const rows = ["n,label"];
    for (let i = 0; i < 400_000; i++) rows.push(`${i},row-${i}`);
    const big = await tableRef("big", rows.join("\n"), [
      { name: "n", dtype: "int64" },
      { name: "label", dtype: "object" },
    ]);
    const { sha256, uri } = big;
    const pickles = () =>
      readdirSync(path.dirname(uri)).filter(
        (f) => f.startsWith(sha256) && f.endsWith(".signed.pkl"),
      );
    const sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot });
    try {
      const run = await sandbox.execute({ code: "print(int(df.n.sum()))", tables: [big] });
      expect(run.stdout).toBe(`${(399_999 * 400_000) / 2}\n`);
      // Written by a process of its own, meanwhile; it appears whole (renamed into place).
      const deadline = Date.now() + 20_000;
      while (pickles().length === 0 && Date.now() < deadline) await sleep(50);
      expect(pickles()).toHaveLength(1);
    } finally {
      await sandbox.close();
    }
    // A new interpreter loads it (and the run is the same).
    const next = await LocalSandbox.start({ interpreters: 1, scratchRoot });
    try {
      const run = await next.execute({ code: "print(len(df))", tables: [big] });
      expect(run.stdout).toBe("400000\n");
    } finally {
      await next.close();
    }
  });

  it("unpickles only pickles signed with the key kept outside the store", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-pickle-"));
    try {
      const store = path.join(home, "artifacts");
      const csv = path.join(store, `${"a".repeat(64)}.csv`);
      const rows = ["n,label"];
      for (let i = 0; i < 300_000; i++) rows.push(`${i},row-${i}`);
      await import("node:fs/promises").then((fs) => fs.mkdir(store, { recursive: true }));
      writeFileSync(csv, `${rows.join("\n")}\n`);
      const proof = path.join(home, "pickle-ran-code");
      const script = `
import glob, os, pickle, stat, sys
sys.path.insert(0, sys.argv[1])
import runner
csv, proof, step = sys.argv[2], sys.argv[3], sys.argv[4]
if step == "first":
    # Its pickle written aside (as the interpreter forks a process for it): not there until then.
    later = []
    frame = runner.load_table_cached(csv, aside=later.append)
    before = len(glob.glob(csv[:-4] + "*.signed.pkl"))
    later[0]()
    key = os.path.join(os.path.dirname(os.path.dirname(csv)), "keys", "pickle-hmac.key")
    print(len(frame), oct(stat.S_IMODE(os.stat(key).st_mode)), before, len(glob.glob(csv[:-4] + "*.signed.pkl")))
elif step == "unpicklable":
    # A frame that will not pickle: no pickle, no partial file, no error.
    import pandas as pd
    target = csv[:-4] + ".unpicklable.signed.pkl"
    runner.write_pickle(pd.DataFrame({"f": [lambda: 0]}), b"k" * 32, target)
    print(len(glob.glob(target + "*")))
elif step == "again":
    # Read from the signed pickle: the CSV beside it no longer holds the rows.
    original = open(csv).read()
    with open(csv, "w") as handle:
        handle.write("n,label\\n")
    frame = runner.load_table_cached(csv)
    with open(csv, "w") as handle:
        handle.write(original)
    print(len(frame), int(frame["n"].sum()))
else:
    class Evil:
        def __reduce__(self):
            return (open, (proof, "w"))
    cache = glob.glob(csv[:-4] + "*.signed.pkl")[0]
    with open(cache, "wb") as handle:
        handle.write(b"x" * 32 + pickle.dumps(Evil()))
    frame = runner.load_table_cached(csv)
    print(len(frame), os.path.exists(proof))
`;
      const first = await run(python, ["-c", script, SANDBOX_DIR, csv, proof, "first"]);
      expect(first.stdout.trim()).toBe("300000 0o600 0 1");
      const unpicklable = await run(python, ["-c", script, SANDBOX_DIR, csv, proof, "unpicklable"]);
      expect(unpicklable.stdout.trim()).toBe("0");
      const again = await run(python, ["-c", script, SANDBOX_DIR, csv, proof, "again"]);
      expect(again.stdout.trim()).toBe(`300000 ${(299_999 * 300_000) / 2}`);
      const forged = await run(python, ["-c", script, SANDBOX_DIR, csv, proof, "forged"]);
      expect(forged.stdout.trim()).toBe("300000 False");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
