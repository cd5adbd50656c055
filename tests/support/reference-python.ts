import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCRIPT = path.join(import.meta.dirname, "python_reference.py");
/** Where scripts/setup-tests.sh installs rouge-score (REFERENCE_VENV there). */
export const REFERENCE_VENV = path.join(ROOT, "node_modules/.cache/tableminds/reference-venv");

/** The virtualenv's python that has rouge-score; throws, saying how to get it, when missing. */
export function rougeReferencePython(): string {
  const python = path.join(REFERENCE_VENV, "bin/python");
  const probe = existsSync(python)
    ? spawnSync(python, ["-c", "import rouge_score.rouge_scorer"], { encoding: "utf8" })
    : null;
  if (probe?.status !== 0) {
    throw new Error(
      `the reference package rouge-score is not installed in ${REFERENCE_VENV}` +
        `${probe ? ` (${probe.stderr.trim().split("\n").at(-1)})` : ""}. ` +
        "`npm test` (scripts/setup-tests.sh) installs it from PyPI; run it, and see its warning " +
        "if PyPI could not be reached.",
    );
  }
  return python;
}

/** What CPython or rouge-score answer for each case (see python_reference.py). */
export function askReference<T>(python: string, task: string, cases: unknown[]): T[] {
  const run = spawnSync(python, [SCRIPT], {
    input: JSON.stringify({ task, cases }),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" },
  });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${python} ${SCRIPT} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as T[];
}
