import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TableRef } from "../blackboard/schemas.js";
import type { Role } from "../models/config.js";
import {
  type EndpointProbe,
  type LocalModelProbe,
  PROBE_TIMEOUT_MS,
  probeEndpoint,
} from "../models/probe.js";
import { type E2BSetupFacts, e2bDoctorLines, e2bSetupFacts } from "../sandbox/e2b-template.js";
import {
  degradedModeSummary,
  degradedSandboxAllowed,
  describeProtection,
  readConfinementSummary,
} from "../sandbox/hardening.js";
import { LocalSandbox } from "../sandbox/local.js";
import { findPython } from "../sandbox/python.js";
import { type ServerFacts, serverDoctorLines, serverFacts } from "../server/posture.js";
import { putArtifact } from "../storage/artifacts.js";
import {
  type DeploymentFacts,
  deploymentBroken,
  deploymentDoctorLines,
  deploymentFacts,
} from "./deployment-probe.js";

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
    /** How long the test request took; absent when generated code is refused here. */
    roundTripMs?: number;
    /** The operator's opt-in to run code without Landlock (TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1). */
    degradedAllowed?: boolean;
    /** Why the pool refuses generated code here (no Landlock, no opt-in). */
    refusal?: string;
  }>;
  /**
   * The models the roles use: the endpoint's base URL and models (not secrets) and whether it
   * answers; the embedded models' files and whether they load.
   */
  endpoint: EndpointProbe;
  /** For each reported variable: whether it is set (never its value). */
  environment: Record<string, boolean>;
  /** The E2B backend's setup, read from the environment (E2B itself is not called). */
  e2b?: E2BSetupFacts;
  /** The API server's guards, read from langgraph.json and the environment. */
  server?: ServerFacts;
  /** Where checkpoints, memory, tables and queued questions go (docs/deploy.md). */
  deployment?: DeploymentFacts;
}

function problemOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function environmentFacts(env: NodeJS.ProcessEnv): Record<string, boolean> {
  return Object.fromEntries(REPORTED_VARIABLES.map((name) => [name, Boolean(env[name]?.trim())]));
}

/** Starts a one-interpreter local sandbox, runs a tiny request through it and closes it. */
async function probeSandbox(): Promise<DoctorFacts["sandbox"]> {
  let sandbox: LocalSandbox | undefined;
  // The test table lives in a temporary artifact store (the sandbox takes no other), not in
  // the user's.
  const dir = await mkdtemp(path.join(os.tmpdir(), "tableminds-doctor-"));
  const home = process.env.TABLEMINDS_HOME;
  process.env.TABLEMINDS_HOME = dir;
  try {
    const { uri, sha256 } = await putArtifact(PROBE_CSV, "csv");
    const table: TableRef = {
      id: "table:probe",
      name: "probe",
      uri,
      sha256,
      rows: 2,
      columns: [{ name: "x", dtype: "int64" }],
    };
    sandbox = await LocalSandbox.start({ interpreters: 1, scratchRoot: dir });
    const { info, details } = await sandbox.describe();
    const facts = {
      ok: true as const,
      runtime: info.runtime,
      protections: info.protections,
      details,
      degradedAllowed: degradedSandboxAllowed(),
    };
    // No Landlock and no opt-in: the pool refuses code, the test request included.
    if (sandbox.refusal) return { ...facts, refusal: sandbox.refusal };
    const started = performance.now();
    const result = await sandbox.execute({ code: PROBE_CODE, tables: [table], timeoutMs: 10_000 });
    const roundTripMs = performance.now() - started;
    if (!result.ok || result.stdout !== "3\n") {
      const why = result.error ? `${result.error.type}: ${result.error.message}` : result.stdout;
      return { ok: false, problem: `a test request failed (${why})` };
    }
    return { ...facts, roundTripMs };
  } catch (error) {
    return { ok: false, problem: problemOf(error) };
  } finally {
    await sandbox?.close();
    if (home === undefined) delete process.env.TABLEMINDS_HOME;
    else process.env.TABLEMINDS_HOME = home;
    await rm(dir, { recursive: true, force: true });
  }
}

export async function gatherDoctorFacts(
  env: NodeJS.ProcessEnv = process.env,
  probeTimeoutMs: number = PROBE_TIMEOUT_MS,
): Promise<DoctorFacts> {
  // The endpoint is probed while the sandbox starts; each probe request is bounded in time.
  const endpoint = probeEndpoint(env, probeTimeoutMs);
  const deployment = deploymentFacts(env);
  let python: DoctorFacts["python"];
  try {
    python = { ok: true, ...(await findPython()) };
  } catch (error) {
    python = { ok: false, problem: problemOf(error) };
  }
  const sandbox: DoctorFacts["sandbox"] = python.ok
    ? await probeSandbox()
    : { ok: false, problem: "no Python with pandas (see above)" };
  return {
    python,
    sandbox,
    endpoint: await endpoint,
    environment: environmentFacts(env),
    e2b: e2bSetupFacts(env),
    server: serverFacts(env),
    deployment: await deployment,
  };
}

/** The endpoint answers (if any role asks it) and every embedded model loads. */
function modelsWork(endpoint: EndpointProbe): boolean {
  return endpoint.ok && (endpoint.local ?? []).every((local) => local.ok);
}

export function doctorExitCode(facts: DoctorFacts): 0 | 1 {
  const sandboxRuns = facts.sandbox.ok && !facts.sandbox.refusal;
  const deploymentWorks = !facts.deployment || !deploymentBroken(facts.deployment);
  return facts.python.ok && sandboxRuns && modelsWork(facts.endpoint) && deploymentWorks ? 0 : 1;
}

/** The roles a model serves: "every role" when it is the only model. */
const rolesText = (roles: readonly Role[], only: boolean) =>
  only ? "every role" : roles.join(", ");

/** An embedded model: which file, for which roles, and whether llama.cpp loads it. */
function localLines(local: LocalModelProbe, only: boolean): string[] {
  const head = `Model:   local model ${local.name}, ${local.file} (${rolesText(local.roles, only)}; embedded, no endpoint)`;
  return local.ok
    ? [head, `  works: llama.cpp loaded it in ${local.loadMs} ms`]
    : [head, `  DOES NOT WORK - ${local.problem}`];
}

function endpointLines(endpoint: EndpointProbe): string[] {
  const only = endpoint.models.length + (endpoint.local?.length ?? 0) === 1;
  const local = (endpoint.local ?? []).flatMap((l) => localLines(l, only));
  if (endpoint.models.length === 0 && local.length > 0) return local;
  if (!endpoint.ok && endpoint.baseUrl === undefined) {
    return [`Model:   NOT CONFIGURED - ${endpoint.problem}`];
  }
  const models = endpoint.models.map((m) => `${m.model} (${rolesText(m.roles, only)})`).join(", ");
  const lines = [`Model:   ${endpoint.baseUrl ?? "(unknown)"}, model ${models}`];
  if (endpoint.ok) {
    const listed = endpoint.listed ? `lists ${endpoint.listed.length} model(s); ` : "";
    lines.push(
      `  works: ${listed}a test completion took ${Math.round(endpoint.completionMs ?? 0)} ms`,
    );
  } else {
    lines.push(`  DOES NOT WORK - ${endpoint.problem}`);
  }
  if (endpoint.listProblem) lines.push(`  (${endpoint.listProblem})`);
  const missing = endpoint.listed
    ? endpoint.models.filter((m) => !endpoint.listed?.includes(m.model)).map((m) => m.model)
    : [];
  if (endpoint.ok && missing.length > 0) {
    lines.push(`  (not among the models it lists, yet it answers: ${missing.join(", ")})`);
  }
  return [...lines, ...local];
}

/** The report, as text; uses nothing but `facts`. */
export function formatDoctorReport(facts: DoctorFacts): string {
  const lines: string[] = ["tableminds doctor", ""];
  const { python, sandbox, endpoint } = facts;
  lines.push(
    python.ok
      ? `Python:  ${python.executable} (Python ${python.version}, pandas ${python.pandas})`
      : `Python:  NOT FOUND - ${python.problem}`,
  );
  if (sandbox.ok) {
    const count = sandbox.details.interpreters;
    const pool = count ? `, ${count} interpreter${count === "1" ? "" : "s"}` : "";
    lines.push(
      sandbox.refusal
        ? `Sandbox: local REFUSES generated code (${sandbox.runtime}${pool})`
        : `Sandbox: local works (${sandbox.runtime}${pool}; a test request took ${(sandbox.roundTripMs ?? 0).toFixed(1)} ms)`,
    );
  } else {
    lines.push(`Sandbox: local DOES NOT WORK - ${sandbox.problem}`);
  }
  lines.push(...endpointLines(endpoint));
  if (facts.e2b) lines.push(...e2bDoctorLines(facts.e2b));
  if (facts.server) lines.push(...serverDoctorLines(facts.server));
  if (facts.deployment) lines.push(...deploymentDoctorLines(facts.deployment));
  if (sandbox.ok) {
    const names = Object.keys(sandbox.protections).sort();
    const width = Math.max(...names.map((name) => name.length));
    const active = names.filter((name) => sandbox.protections[name]);
    lines.push("", `Protections active on this machine: ${active.length} of ${names.length}`);
    for (const name of names) {
      const mark = sandbox.protections[name] ? "[x]" : "[ ]";
      lines.push(`  ${mark} ${name.padEnd(width)}  ${describeProtection(name)}`);
    }
    const details = Object.entries(sandbox.details)
      .filter(([name]) => name !== "interpreters")
      .map(([name, value]) => `${name}=${value}`);
    if (details.length > 0) lines.push(`  (${details.join(", ")})`);
    const reads = readConfinementSummary(sandbox.protections);
    if (reads) lines.push(`  ${reads}`);
    if (sandbox.degradedAllowed !== undefined) {
      lines.push(`  ${degradedModeSummary(sandbox.protections, sandbox.degradedAllowed)}`);
    }
  }
  lines.push("", "Environment (secret values are never shown):");
  const width = Math.max(...Object.keys(facts.environment).map((name) => name.length));
  for (const [name, set] of Object.entries(facts.environment)) {
    lines.push(`  ${name.padEnd(width)}  ${set ? "set" : "not set"}`);
  }
  lines.push("");
  const embedded = endpoint.models.length === 0 && (endpoint.local?.length ?? 0) > 0;
  const model = embedded ? "the local model" : "the model endpoint";
  if (doctorExitCode(facts) === 0) lines.push(`OK: the local sandbox and ${model} work.`);
  if (!python.ok || !sandbox.ok) {
    lines.push(
      "PROBLEM: the local sandbox does not work; run `npm run setup` or set TABLEMINDS_PYTHON.",
    );
  }
  if (sandbox.ok && sandbox.refusal) lines.push(`PROBLEM: ${sandbox.refusal}`);
  if (!endpoint.ok) {
    lines.push(`PROBLEM: ${model} does not work: ${endpoint.problem}`);
  }
  for (const local of embedded ? [] : (endpoint.local ?? [])) {
    if (!local.ok) lines.push(`PROBLEM: the local model does not work: ${local.problem}`);
  }
  if (facts.deployment && deploymentBroken(facts.deployment)) {
    lines.push(
      `PROBLEM: ${facts.deployment.problem ?? `PostgreSQL does not answer: ${facts.deployment.database?.problem}`}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** `tableminds doctor`: prints the report; returns the exit code. */
export async function doctor(): Promise<number> {
  const facts = await gatherDoctorFacts();
  process.stdout.write(formatDoctorReport(facts));
  return doctorExitCode(facts);
}
