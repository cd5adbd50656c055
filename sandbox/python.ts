import { execFile } from "node:child_process";
import { z } from "zod";

/** A Python interpreter that can import pandas. */
export interface PythonInfo {
  /** Absolute path of the interpreter (`sys.executable`), not a shim. */
  executable: string;
  version: string;
  pandas: string;
}

export class PythonNotFoundError extends Error {
  override name = "PythonNotFoundError";
}

/** Tried in this order when TABLEMINDS_PYTHON is not set; the first with pandas wins. */
export const PYTHON_CANDIDATES = ["python3", "/usr/bin/python3", "python"] as const;

const PROBE_TIMEOUT_MS = 20_000;
// Finds pandas without importing it (a cold import is a third of a second, and the sandbox's
// interpreter imports it anyway); its version is in the name of its install record beside it.
const PROBE_SCRIPT = `
import glob, importlib.util, json, os, platform, sys
spec = importlib.util.find_spec("pandas")
if spec is None or not spec.origin:
    sys.exit("No module named 'pandas'")
records = glob.glob(os.path.join(os.path.dirname(os.path.dirname(spec.origin)), "pandas-*-info"))
version = os.path.basename(records[0]).split("-")[1].removesuffix(".dist").removesuffix(".egg") if records else "unknown"
print(json.dumps({"executable": sys.executable, "version": platform.python_version(), "pandas": version}))
`;

import { pythonOverride } from "../settings/operator.js";

const ProbeOutputSchema = z.object({
  executable: z.string().min(1),
  version: z.string(),
  pandas: z.string(),
});

type Probe = { ok: true; info: PythonInfo } | { ok: false; problem: string };

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1)?.trim() ?? "";
}

/** Runs `candidate` once to see whether it imports pandas; never throws. */
export function probePython(candidate: string): Promise<Probe> {
  return new Promise((resolve) => {
    execFile(
      candidate,
      ["-c", PROBE_SCRIPT],
      { timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL", windowsHide: true },
      (error, stdout, stderr) => {
        if (error) {
          const reason =
            (error as NodeJS.ErrnoException).code === "ENOENT"
              ? "not found"
              : error.killed
                ? `no answer within ${PROBE_TIMEOUT_MS} ms`
                : lastLine(String(stderr)) || error.message;
          resolve({ ok: false, problem: reason });
          return;
        }
        try {
          const info = ProbeOutputSchema.parse(JSON.parse(lastLine(String(stdout))));
          resolve({ ok: true, info });
        } catch {
          resolve({ ok: false, problem: `unexpected probe output: ${lastLine(String(stdout))}` });
        }
      },
    );
  });
}

async function locatePython(override: string | undefined): Promise<PythonInfo> {
  if (override) {
    const probe = await probePython(override);
    if (probe.ok) return probe.info;
    throw new PythonNotFoundError(
      `TABLEMINDS_PYTHON=${override} cannot import pandas (${probe.problem}). ` +
        `Install pandas for that interpreter (\`${override} -m pip install pandas\`), ` +
        "or unset TABLEMINDS_PYTHON and run `npm run setup`.",
    );
  }
  // All at once (a version manager's shim takes a quarter of a second to say no); the first
  // candidate in order that has pandas wins.
  const probes = PYTHON_CANDIDATES.map((candidate) => [candidate, probePython(candidate)] as const);
  const problems: string[] = [];
  for (const [candidate, pending] of probes) {
    const probe = await pending;
    if (probe.ok) return probe.info;
    problems.push(`${candidate}: ${probe.problem}`);
  }
  throw new PythonNotFoundError(
    `No Python with pandas was found (tried ${problems.join("; ")}). ` +
      "Run `npm run setup` (it installs Debian's python3-pandas), " +
      "or set TABLEMINDS_PYTHON to a python that has pandas.",
  );
}

let cached: { override: string | undefined; info: Promise<PythonInfo> } | undefined;

/**
 * The Python the local sandbox runs: TABLEMINDS_PYTHON when set, else the first of
 * PYTHON_CANDIDATES that imports pandas. Found once per process (per override value).
 */
export async function findPython(): Promise<PythonInfo> {
  const override = pythonOverride();
  if (cached?.override !== override || !cached) {
    const entry = { override, info: locatePython(override) };
    cached = entry;
    // A failure is not remembered: after `npm run setup` the next call looks again.
    entry.info.catch(() => {
      if (cached === entry) cached = undefined;
    });
  }
  return cached.info;
}
