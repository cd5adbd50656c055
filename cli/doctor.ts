import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TableRef } from "../blackboard/schemas.js";
import { sha256 } from "../tools/artifacts.js";
import { describeProtection } from "../tools/sandbox/hardening.js";
import { LocalSandbox } from "../tools/sandbox/local.js";
import { findPython } from "../tools/sandbox/python.js";

/** Variables the doctor reports as set or not; their values are never printed. */
export const REPORTED_VARIABLES = ["E2B_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"] as const;

const PROBE_CODE = "print(int(df['x'].sum()))";
const PROBE_CSV = "x\n1\n2\n";

export type Check<T> = ({ ok: true } & T) | { ok: false; problem: string };

export interface DoctorFacts {
  python: Check<{ executable: string; version: string; pandas: string }>;
  sandbox: Check<{
    runtime: string;
    protections: Record<string, boolean>;
    details: Record<string, string>;
    roundTripMs: number;
  }>;
  /** For each reported variable: whether it is set (never its value). */
  environment: Record<string, boolean>;
}

function problemOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function environmentFacts(env: NodeJS.ProcessEnv): Record<string, boolean> {
  return Object.fromEntries(REPORTED_VARIABLES.map((name) => [name, Boolean(env[name]?.trim())]));
}

/** Starts a one-worker local sandbox, runs a tiny request through it and closes it. */
async function probeSandbox(): Promise<DoctorFacts["sandbox"]> {
  let sandbox: LocalSandbox | undefined;
  // The test table lives in a temporary directory, not in the artifact store.
  const dir = await mkdtemp(path.join(os.tmpdir(), "tableminds-doctor-"));
  try {
    const uri = path.join(dir, "probe.csv");
    await writeFile(uri, PROBE_CSV);
    const table: TableRef = {
      id: "table:probe",
      name: "probe",
      uri,
      sha256: sha256(PROBE_CSV),
      rows: 2,
      columns: [{ name: "x", dtype: "int64" }],
    };
    sandbox = await LocalSandbox.start({ workers: 1, scratchRoot: dir });
    const { info, details } = await sandbox.describe();
    const started = performance.now();
    const result = await sandbox.execute({ code: PROBE_CODE, tables: [table], timeoutMs: 10_000 });
    const roundTripMs = performance.now() - started;
    if (!result.ok || result.stdout !== "3\n") {
      const why = result.error ? `${result.error.type}: ${result.error.message}` : result.stdout;
      return { ok: false, problem: `a test request failed (${why})` };
    }
    return { ok: true, runtime: info.runtime, protections: info.protections, details, roundTripMs };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  } finally {
    await sandbox?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function gatherDoctorFacts(
  env: NodeJS.ProcessEnv = process.env,
): Promise<DoctorFacts> {
  let python: DoctorFacts["python"];
  try {
    python = { ok: true, ...(await findPython()) };
  } catch (error) {
    python = { ok: false, problem: problemOf(error) };
  }
  const sandbox: DoctorFacts["sandbox"] = python.ok
    ? await probeSandbox()
    : { ok: false, problem: "no Python with pandas (see above)" };
  return { python, sandbox, environment: environmentFacts(env) };
}

export function doctorExitCode(facts: DoctorFacts): 0 | 1 {
  return facts.python.ok && facts.sandbox.ok ? 0 : 1;
}

/** The report, as text; uses nothing but `facts`. */
export function formatDoctorReport(facts: DoctorFacts): string {
  const lines: string[] = ["tableminds doctor", ""];
  const { python, sandbox } = facts;
  lines.push(
    python.ok
      ? `Python:  ${python.executable} (Python ${python.version}, pandas ${python.pandas})`
      : `Python:  NOT FOUND - ${python.problem}`,
  );
  if (sandbox.ok) {
    const workers = sandbox.details.workers ? `, ${sandbox.details.workers} worker(s)` : "";
    lines.push(
      `Sandbox: local works (${sandbox.runtime}${workers}; a test request took ${sandbox.roundTripMs.toFixed(1)} ms)`,
    );
    const names = Object.keys(sandbox.protections).sort();
    const width = Math.max(...names.map((name) => name.length));
    const active = names.filter((name) => sandbox.protections[name]);
    lines.push("", `Protections active on this machine: ${active.length} of ${names.length}`);
    for (const name of names) {
      const mark = sandbox.protections[name] ? "[x]" : "[ ]";
      lines.push(`  ${mark} ${name.padEnd(width)}  ${describeProtection(name)}`);
    }
    const details = Object.entries(sandbox.details)
      .filter(([name]) => name !== "workers")
      .map(([name, value]) => `${name}=${value}`);
    if (details.length > 0) lines.push(`  (${details.join(", ")})`);
  } else {
    lines.push(`Sandbox: local DOES NOT WORK - ${sandbox.problem}`);
  }
  lines.push("", "Environment (values are never shown):");
  const width = Math.max(...Object.keys(facts.environment).map((name) => name.length));
  for (const [name, set] of Object.entries(facts.environment)) {
    lines.push(`  ${name.padEnd(width)}  ${set ? "set" : "not set"}`);
  }
  lines.push(
    "",
    doctorExitCode(facts) === 0
      ? "OK: the local sandbox works."
      : "PROBLEM: the local sandbox does not work; run `npm run setup` or set TABLEMINDS_PYTHON.",
  );
  return `${lines.join("\n")}\n`;
}

/** `tableminds doctor`: prints the report; returns the exit code. */
export async function doctor(): Promise<number> {
  const facts = await gatherDoctorFacts();
  process.stdout.write(formatDoctorReport(facts));
  return doctorExitCode(facts);
}
