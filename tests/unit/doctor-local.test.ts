import { describe, expect, it } from "vitest";
import { type DoctorFacts, doctorExitCode, formatDoctorReport } from "../../cli/doctor.js";

const BASE: Omit<DoctorFacts, "endpoint"> = {
  python: { ok: true, executable: "/usr/bin/python3", version: "3.11.2", pandas: "1.5.3" },
  sandbox: { ok: true, runtime: "Python 3.11.2", protections: {}, details: {}, roundTripMs: 3 },
  environment: { OPENAI_BASE_URL: false, OPENAI_API_KEY: false },
};
const FILE = "/home/u/.cache/tableminds/models/model.gguf";
const EVERY = ["planner", "coder", "answerer", "checker", "reflector", "archiver"] as const;

describe("the doctor report on embedded models", () => {
  it("shows the local model every role runs, and that it loads", () => {
    const facts: DoctorFacts = {
      ...BASE,
      endpoint: {
        models: [],
        local: [{ name: "qwen", file: FILE, roles: [...EVERY], ok: true, loadMs: 1630 }],
        ok: true,
      },
    };
    const report = formatDoctorReport(facts);
    expect(report).toContain(
      `Model:   local model qwen, ${FILE} (every role; embedded, no endpoint)\n  works: llama.cpp loaded it in 1630 ms\n`,
    );
    expect(report).not.toContain("api.openai.com");
    expect(report).toContain("OK: the local sandbox and the local model work.");
    expect(doctorExitCode(facts)).toBe(0);
  });

  it("shows the endpoint's roles and the embedded coder apart, and fails on either", () => {
    const facts: DoctorFacts = {
      ...BASE,
      endpoint: {
        baseUrl: "http://127.0.0.1:8000/v1",
        models: [
          { model: "qwen", roles: ["planner", "answerer", "checker", "reflector", "archiver"] },
        ],
        local: [
          { name: "coder.gguf", file: FILE, roles: ["coder"], ok: false, problem: "no such file" },
        ],
        ok: true,
        completionMs: 40,
      },
    };
    const report = formatDoctorReport(facts);
    expect(report).toContain(
      "Model:   http://127.0.0.1:8000/v1, model qwen (planner, answerer, checker, reflector, archiver)\n  works:",
    );
    expect(report).toContain(
      `Model:   local model coder.gguf, ${FILE} (coder; embedded, no endpoint)\n  DOES NOT WORK - no such file\n`,
    );
    expect(report).toContain("PROBLEM: the local model does not work: no such file");
    expect(doctorExitCode(facts)).toBe(1);
  });
});
