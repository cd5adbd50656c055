import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { REFERENCE_VENV } from "./reference-python.js";

const SCRIPT = path.join(import.meta.dirname, "verl_reference.py");
/** The verl release scripts/setup-tests.sh pins (REFERENCE_VERL there). */
export const VERL_VERSION = "0.9.1";

/** What verl_reference.py reads from verl's source. */
const VerlFactsSchema = z.object({
  version: z.string(),
  call: z.object({
    calls: z.number().int(),
    keywords: z.array(z.string()),
    spread: z.array(z.string()),
    extraKeywords: z.array(z.string()),
    extraInfoKeys: z.array(z.string()),
  }),
  registered: z.record(z.string(), z.string()),
  reads: z.array(z.string()),
  config: z.record(z.string(), z.string()),
});
export type VerlFacts = z.infer<typeof VerlFactsSchema>;

/** The reference venv's python with verl installed; throws, saying how to get it, when missing. */
export function verlReferencePython(): string {
  const python = path.join(REFERENCE_VENV, "bin/python");
  const probe = existsSync(python)
    ? spawnSync(python, ["-c", "import importlib.metadata as m; print(m.version('verl'))"], {
        encoding: "utf8",
      })
    : null;
  if (probe?.status !== 0) {
    throw new Error(
      `verl is not installed in ${REFERENCE_VENV}` +
        `${probe ? ` (${probe.stderr.trim().split("\n").at(-1)})` : ""}. ` +
        "`npm test` (scripts/setup-tests.sh) installs it from PyPI; run it, and see its warning " +
        "if PyPI could not be reached.",
    );
  }
  return python;
}

/** Reads verl's reward manager call, registry, reward setup and config from its source. */
export function verlFacts(python: string): VerlFacts {
  const run = spawnSync(python, [SCRIPT], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" },
  });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${python} ${SCRIPT} failed: ${run.stderr.trim()}`);
  return VerlFactsSchema.parse(JSON.parse(run.stdout));
}
