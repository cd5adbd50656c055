import { describe, expect, it } from "vitest";
import { type DoctorFacts, formatDoctorReport } from "../../cli/doctor.js";
import { e2bSetupFacts } from "../../sandbox/e2b-template.js";

const BASE: DoctorFacts = {
  python: { ok: true, executable: "/usr/bin/python3", version: "3.11.2", pandas: "1.5.3" },
  sandbox: { ok: false, problem: "not probed here" },
  endpoint: { ok: false, problem: "not configured", baseUrl: undefined, models: [] },
  environment: { E2B_API_KEY: false, OPENAI_BASE_URL: false, OPENAI_API_KEY: false },
} as DoctorFacts;

describe("the doctor's E2B section", () => {
  it("names the default template and what it has, without a key", () => {
    const report = formatDoctorReport({ ...BASE, e2b: e2bSetupFacts({}) });
    expect(report).toMatch(/^E2B: +not configured \(E2B_API_KEY not set\); domain e2b\.app/m);
    expect(report).toMatch(
      /^ {2}template code-interpreter-v1 \(the default: Python 3 with pandas .*E2B_TEMPLATE overrides it\)$/m,
    );
    expect(report).toMatch(/pooled sandboxes: requests share a VM/);
  });

  it("shows E2B_TEMPLATE as the override, and one sandbox per request when set", () => {
    const facts = e2bSetupFacts({
      E2B_API_KEY: "e2b_secret_value",
      E2B_TEMPLATE: "tables-py",
      E2B_DOMAIN: "e2b.internal.example",
      E2B_SANDBOX_PER_REQUEST: "1",
    });
    const report = formatDoctorReport({ ...BASE, e2b: facts });
    expect(report).toMatch(/^E2B: +configured; domain e2b\.internal\.example$/m);
    expect(report).toMatch(
      /template tables-py \(from E2B_TEMPLATE; it must have python3 and pandas/,
    );
    expect(report).toMatch(/one sandbox per request/);
    expect(report).not.toContain("e2b_secret_value");
  });
});
