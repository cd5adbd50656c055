import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findPython } from "../../sandbox/python.js";

const SANDBOX_DIR = fileURLToPath(new URL("../../sandbox/", import.meta.url));

/**
 * Feeds sandbox/pressure.py a fake PSI file and clock: each step sets the file's
 * `some total` (microseconds stalled) and the time, then asks whether the CPUs are busy.
 */
async function decisions(
  steps: [seconds: number, stalledUs: number | null][],
  load = 0,
): Promise<unknown> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-psi-"));
  const psi = path.join(dir, "cpu");
  const script = `
import json, os, sys
sys.path.insert(0, ${JSON.stringify(SANDBOX_DIR)})
from pressure import CpuPressure
now = [0.0]
gauge = CpuPressure(max_stall=0.35, path=${JSON.stringify(psi)}, clock=lambda: now[0], loadavg=lambda: (${load}, 0.0, 0.0))
out = []
for seconds, stalled in json.loads(sys.argv[1]):
    now[0] = seconds
    if stalled is None:
        if os.path.exists(${JSON.stringify(psi)}):
            os.unlink(${JSON.stringify(psi)})
    else:
        with open(${JSON.stringify(psi)}, "w") as f:
            f.write(f"some avg10=0.00 avg60=0.00 avg300=0.00 total={stalled}\\nfull avg10=0.00 total=0\\n")
    out.append(gauge.busy())
print(json.dumps(out))
`;
  const { executable } = await findPython();
  writeFileSync(path.join(dir, "probe.py"), script);
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(executable, [path.join(dir, "probe.py"), JSON.stringify(steps)], (error, out) =>
      error ? reject(error) : resolve(out),
    ),
  );
  return JSON.parse(stdout);
}

describe("the CPU pressure gauge that decides whether a parked child warms up", () => {
  it("is busy when tasks waited for a CPU more than 35% of the time since the last look", async () => {
    expect(
      await decisions([
        [0, 0], // the first look only starts a window
        [0.1, 50_000], // 50 ms stalled in 100 ms
        [0.2, 60_000], // 10 ms in 100 ms
        [0.3, 96_000], // 36 ms in 100 ms
        [0.302, 100_000], // a 2 ms window is too short to judge: the last answer stands
        [0.4, 120_000], // 24 ms over the 100 ms since the last judged look
      ]),
    ).toEqual([false, true, false, true, true, false]);
  });

  it("falls back to the load average where the kernel has no PSI", async () => {
    // Above and below any machine's number of CPUs.
    expect(await decisions([[0, null]], 100_000)).toEqual([true]);
    expect(await decisions([[0, null]], 0)).toEqual([false]);
  });
});
