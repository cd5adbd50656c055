import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

// Spawns the real command (a Python worker included): a few seconds, not a pure unit.
describe("tableminds doctor", () => {
  let stub: StubServer;

  beforeAll(async () => {
    stub = await startStubOpenAI({ script: { default: ["OK"] }, models: ["stub-model"] });
  });

  afterAll(async () => {
    await stub?.close();
  });

  it("prints the report, probes the endpoint, hides secrets and exits 0 when all works", async () => {
    const secret = "sk-doctor-secret-value";
    const result = await runCli(["doctor"], {
      OPENAI_API_KEY: secret,
      E2B_API_KEY: undefined,
      OPENAI_BASE_URL: stub.url,
      TABLEMINDS_MODEL: "stub-model",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Python: {2}\S+python\S* \(Python 3\.\d+\.\d+, pandas \d/m);
    expect(result.stdout).toMatch(/^Sandbox: local works/m);
    expect(result.stdout).toContain(`Model:   ${stub.url}, model stub-model (every role)`);
    expect(result.stdout).toMatch(
      /^ {2}works: lists 1 model\(s\); a test completion took \d+ ms$/m,
    );
    expect(result.stdout).toMatch(/^ {2}\[x\] auditHook /m);
    expect(result.stdout).toMatch(/^ {2}\[[x ]\] netns /m);
    expect(result.stdout).toMatch(/^ {2}\[x\] hookResolvesDescriptors /m);
    expect(result.stdout).toMatch(/^ {2}\[[x ]\] kernelMetadataConfinement /m);
    expect(result.stdout).toMatch(/^ {2}Degraded-mode refusal: (on|off) /m);
    expect(result.stdout).toMatch(/^ {2}OPENAI_API_KEY +set$/m);
    expect(result.stdout).toMatch(/^ {2}E2B_API_KEY +not set$/m);
    expect(result.stdout + result.stderr).not.toContain(secret);
    expect(stub.requests.some((r) => r.model === "stub-model")).toBe(true);
  });

  it("exits 1 with a one-line reason when nothing listens at the endpoint", async () => {
    const gone = await startStubOpenAI({});
    await gone.close();
    const result = await runCli(["doctor"], {
      OPENAI_API_KEY: "none",
      OPENAI_BASE_URL: gone.url,
      TABLEMINDS_MODEL: "stub-model",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`Model:   ${gone.url}, model stub-model (every role)`);
    expect(result.stdout).toMatch(
      /^PROBLEM: the model endpoint does not work: a test completion with model "stub-model" failed: .*ECONNREFUSED.*$/m,
    );
  });

  it("exits 1 when the sandbox python cannot import pandas", async () => {
    const result = await runCli(["doctor"], {
      TABLEMINDS_PYTHON: "/bin/false",
      OPENAI_BASE_URL: stub.url,
      OPENAI_API_KEY: "none",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Python: {2}NOT FOUND - TABLEMINDS_PYTHON=\/bin\/false/m);
    expect(result.stdout).toContain("PROBLEM: the local sandbox does not work");
  });
});
