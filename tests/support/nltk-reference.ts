import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { REFERENCE_VENV } from "./reference-python.js";

const SCRIPT = path.join(import.meta.dirname, "bleu_reference.py");
/** The NLTK release scripts/setup-tests.sh pins, whose BLEU training/rewards/bleu.ts follows. */
export const NLTK_VERSION = "3.9.1";

/** The reference venv's python with NLTK; throws, saying how to get it, when missing. */
export function nltkReferencePython(): string {
  const python = path.join(REFERENCE_VENV, "bin/python");
  const probe = existsSync(python)
    ? spawnSync(python, ["-c", "import nltk.translate.bleu_score"], { encoding: "utf8" })
    : null;
  if (probe?.status !== 0) {
    throw new Error(
      `NLTK is not installed in ${REFERENCE_VENV}` +
        `${probe ? ` (${probe.stderr.trim().split("\n").at(-1)})` : ""}. ` +
        "`npm test` (scripts/setup-tests.sh) installs it from PyPI; run it, and see its warning " +
        "if PyPI could not be reached.",
    );
  }
  return python;
}

/** NLTK's sentence_bleu (method4, whitespace tokens) of each [reference, hypothesis]. */
export function nltkBleu(
  python: string,
  cases: [string, string][],
): { version: string; scores: number[] } {
  const run = spawnSync(python, [SCRIPT], {
    input: JSON.stringify({ cases }),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" },
  });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${python} ${SCRIPT} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { version: string; scores: number[] };
}
