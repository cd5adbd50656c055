import { describe, expect, it } from "vitest";
import {
  type DoctorFacts,
  doctorExitCode,
  environmentFacts,
  formatDoctorReport,
} from "../../cli/doctor.js";
import { DEGRADED_REFUSAL } from "../../sandbox/hardening.js";

const WORKING: DoctorFacts = {
  python: { ok: true, executable: "/usr/bin/python3", version: "3.11.2", pandas: "1.5.3" },
  sandbox: {
    ok: true,
    runtime: "Python 3.11.2, pandas 1.5.3, numpy 1.24.2 (/usr/bin/python3)",
    protections: { netns: true, rlimitNproc: false, auditHook: true, madeUp: true },
    details: { netns: "network namespace", uid: "0", interpreters: "1" },
    roundTripMs: 3.25,
  },
  endpoint: {
    baseUrl: "http://10.0.0.7:8000/v1",
    models: [{ model: "qwen2.5-coder", roles: ["planner", "coder", "answerer"] }],
    listed: ["qwen2.5-coder"],
    ok: true,
    completionMs: 412.4,
  },
  environment: { E2B_API_KEY: false, OPENAI_BASE_URL: true, OPENAI_API_KEY: true },
};

describe("the doctor report", () => {
  it("lists python, every protection with its state and meaning, and the settings", () => {
    const report = formatDoctorReport(WORKING);
    expect(report).toContain("Python:  /usr/bin/python3 (Python 3.11.2, pandas 1.5.3)");
    expect(report).toContain("1 interpreter; a test request took 3.3 ms");
    expect(report).toContain("Protections active on this machine: 3 of 4");
    expect(report).toMatch(
      /^ {2}\[x\] netns +no network: the interpreters live in an empty network/m,
    );
    expect(report).toMatch(/^ {2}\[ \] rlimitNproc +process-count limit/m);
    // An unknown protection is still listed, by its name.
    expect(report).toMatch(/^ {2}\[x\] madeUp +madeUp$/m);
    expect(report).toContain("(netns=network namespace, uid=0)");
    expect(report).toMatch(/^ {2}E2B_API_KEY +not set$/m);
    expect(report).toMatch(/^ {2}OPENAI_API_KEY +set$/m);
    expect(report).toContain("Model:   http://10.0.0.7:8000/v1, model qwen2.5-coder (every role)");
    expect(report).toContain("  works: lists 1 model(s); a test completion took 412 ms");
    expect(report.trimEnd().endsWith("OK: the local sandbox and the model endpoint work.")).toBe(
      true,
    );
    expect(doctorExitCode(WORKING)).toBe(0);
  });

  it("says what is wrong, and fails, when the sandbox does not work", () => {
    const broken: DoctorFacts = {
      ...WORKING,
      sandbox: { ok: false, problem: "the sandbox interpreter exited (code 1)" },
    };
    const report = formatDoctorReport(broken);
    expect(report).toContain(
      "Sandbox: local DOES NOT WORK - the sandbox interpreter exited (code 1)",
    );
    expect(report).not.toContain("Protections active");
    expect(report).toContain("PROBLEM:");
    expect(doctorExitCode(broken)).toBe(1);
  });

  it("lists read confinement, and says when it is degraded to the audit hook alone", () => {
    const withReads = (kernel: boolean): DoctorFacts => ({
      ...WORKING,
      sandbox: {
        ...(WORKING.sandbox as Extract<DoctorFacts["sandbox"], { ok: true }>),
        protections: { auditHook: true, readConfinement: true, kernelReadConfinement: kernel },
      },
    });
    const full = formatDoctorReport(withReads(true));
    expect(full).toMatch(/^ {2}\[x\] readConfinement +reads only of Python/m);
    expect(full).toContain("Read confinement: kernel-enforced (Landlock) and by the audit hook");
    const degraded = formatDoctorReport(withReads(false));
    expect(degraded).toMatch(/^ {2}\[ \] kernelReadConfinement /m);
    expect(degraded).toContain("Read confinement: DEGRADED to the audit hook alone");
    expect(formatDoctorReport(WORKING)).not.toContain("Read confinement:");
  });

  it("says whether the degraded-mode refusal is on, and fails when it refuses code here", () => {
    const sandbox = WORKING.sandbox as Extract<DoctorFacts["sandbox"], { ok: true }>;
    const confined = { landlock: true, kernelWriteConfinement: true, kernelReadConfinement: true };
    const degraded = { ...confined, landlock: false, kernelWriteConfinement: false };
    const facts = (
      protections: Record<string, boolean>,
      degradedAllowed: boolean,
      refusal?: string,
    ): DoctorFacts => ({
      ...WORKING,
      sandbox: { ...sandbox, protections, degradedAllowed, refusal },
    });

    const held = formatDoctorReport(facts(confined, false));
    expect(held).toMatch(
      /^ {2}Degraded-mode refusal: on \(TABLEMINDS_ALLOW_DEGRADED_SANDBOX not set\); Landlock holds here, so generated code runs$/m,
    );
    expect(doctorExitCode(facts(confined, false))).toBe(0);
    expect(formatDoctorReport(facts(confined, true))).toMatch(
      /^ {2}Degraded-mode refusal: off \(TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1\); Landlock holds here/m,
    );

    const refused = facts(degraded, false, DEGRADED_REFUSAL);
    const report = formatDoctorReport(refused);
    expect(report).toContain("Sandbox: local REFUSES generated code (Python 3.11.2");
    expect(report).not.toContain("a test request took");
    expect(report).toMatch(/NO Landlock here, so generated code is REFUSED$/m);
    expect(report).toContain(`PROBLEM: ${DEGRADED_REFUSAL}\n`);
    expect(report).not.toContain("OK:");
    expect(doctorExitCode(refused)).toBe(1);

    const accepted = facts(degraded, true);
    expect(formatDoctorReport(accepted)).toMatch(
      /^ {2}Degraded-mode refusal: off \(TABLEMINDS_ALLOW_DEGRADED_SANDBOX=1\); NO Landlock here: generated code runs DEGRADED/m,
    );
    expect(doctorExitCode(accepted)).toBe(0);
    // Facts without the setting (another backend's, an older report) print no such line.
    expect(formatDoctorReport(WORKING)).not.toContain("Degraded-mode refusal");
  });

  it("fails when no python with pandas is found", () => {
    const facts: DoctorFacts = {
      ...WORKING,
      python: { ok: false, problem: "No Python with pandas was found" },
      sandbox: { ok: false, problem: "no Python with pandas (see above)" },
    };
    expect(formatDoctorReport(facts)).toContain("Python:  NOT FOUND - No Python with pandas");
    expect(doctorExitCode(facts)).toBe(1);
  });

  it("shows the endpoint's base URL and models, and fails with its reason when it does not work", () => {
    const facts: DoctorFacts = {
      ...WORKING,
      endpoint: {
        baseUrl: "http://127.0.0.1:9/v1",
        models: [
          { model: "big", roles: ["planner", "answerer"] },
          { model: "coder-model", roles: ["coder"] },
        ],
        listProblem: "GET /models failed: fetch failed (ECONNREFUSED)",
        ok: false,
        problem: 'a test completion with model "big" failed: Connection error. (ECONNREFUSED)',
      },
    };
    const report = formatDoctorReport(facts);
    expect(report).toContain(
      "Model:   http://127.0.0.1:9/v1, model big (planner, answerer), coder-model (coder)",
    );
    expect(report).toContain(
      '  DOES NOT WORK - a test completion with model "big" failed: Connection error. (ECONNREFUSED)',
    );
    expect(report).toContain("  (GET /models failed: fetch failed (ECONNREFUSED))");
    expect(report.trimEnd().split("\n").at(-1)).toBe(
      'PROBLEM: the model endpoint does not work: a test completion with model "big" failed: Connection error. (ECONNREFUSED)',
    );
    expect(report).not.toContain("OK:");
    expect(doctorExitCode(facts)).toBe(1);
  });

  it("fails when no endpoint is configured", () => {
    const facts: DoctorFacts = {
      ...WORKING,
      endpoint: { models: [], ok: false, problem: "No model endpoint is configured" },
    };
    expect(formatDoctorReport(facts)).toContain(
      "Model:   NOT CONFIGURED - No model endpoint is configured",
    );
    expect(doctorExitCode(facts)).toBe(1);
  });

  it("tells whether variables are set without ever carrying their values", () => {
    const env = {
      OPENAI_API_KEY: "sk-very-secret",
      OPENAI_BASE_URL: "http://user:pw@127.0.0.1:8000/v1",
      E2B_API_KEY: "   ",
      UNRELATED: "x",
    };
    const facts = environmentFacts(env);
    expect(facts).toEqual({ E2B_API_KEY: false, OPENAI_BASE_URL: true, OPENAI_API_KEY: true });
    const report = formatDoctorReport({ ...WORKING, environment: facts });
    for (const value of ["sk-very-secret", "pw@", "127.0.0.1:8000"]) {
      expect(report).not.toContain(value);
    }
  });
});
