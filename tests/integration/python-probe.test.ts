import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findPython, probePython } from "../../sandbox/python.js";

/* The probe finds pandas and its version without importing it (the worker imports it). */

const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-probe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("probePython", () => {
  it("reports the version pandas itself reports", async () => {
    const { executable } = await findPython();
    const probe = await probePython(executable);
    const imported = execFileSync(executable, ["-c", "import pandas; print(pandas.__version__)"]);
    expect(probe).toEqual({
      ok: true,
      info: expect.objectContaining({ executable, pandas: String(imported).trim() }),
    });
  });

  it("says pandas is missing from a python that cannot see it", async () => {
    const { executable } = await findPython();
    // -S leaves site-packages off the path: the same python, without pandas.
    const bare = path.join(dir, "bare-python");
    writeFileSync(bare, `#!/bin/sh\nexec ${executable} -S "$@"\n`);
    chmodSync(bare, 0o755);
    expect(await probePython(bare)).toEqual({ ok: false, problem: "No module named 'pandas'" });
  });
});
