import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

// Spawns the real command (a Python worker included): a few seconds, not a pure unit.
describe("tableminds doctor", () => {
  it("prints the report, hides secret values and exits 0 when the local sandbox works", async () => {
    const secret = "sk-doctor-secret-value";
    const result = await runCli(["doctor"], {
      OPENAI_API_KEY: secret,
      E2B_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Python: {2}\S+python\S* \(Python 3\.\d+\.\d+, pandas \d/m);
    expect(result.stdout).toMatch(/^Sandbox: local works/m);
    expect(result.stdout).toMatch(/^ {2}\[x\] auditHook /m);
    expect(result.stdout).toMatch(/^ {2}\[[x ]\] netns /m);
    expect(result.stdout).toMatch(/^ {2}OPENAI_API_KEY +set$/m);
    expect(result.stdout).toMatch(/^ {2}E2B_API_KEY +not set$/m);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("exits 1 when the sandbox python cannot import pandas", async () => {
    const result = await runCli(["doctor"], { TABLEMINDS_PYTHON: "/bin/false" });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Python: {2}NOT FOUND - TABLEMINDS_PYTHON=\/bin\/false/m);
    expect(result.stdout).toContain("PROBLEM:");
  });
});
