import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { displayUrl, probeEndpoint } from "../../models/probe.js";
import { type StubOptions, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const open: StubServer[] = [];

async function stubWith(opts: StubOptions): Promise<StubServer> {
  const stub = await startStubOpenAI(opts);
  open.push(stub);
  return stub;
}

afterAll(async () => {
  await Promise.all(open.map((stub) => stub.close()));
});

const envFor = (url: string, extra: Record<string, string> = {}) => ({
  OPENAI_BASE_URL: url,
  OPENAI_API_KEY: "test-key",
  TABLEMINDS_MODEL: "stub-model",
  ...extra,
});

describe("probing the model endpoint", () => {
  it("lists the models and asks each model the roles use for a tiny completion", async () => {
    const stub = await stubWith({ script: { default: ["OK"] }, models: ["stub-model", "coder-x"] });
    const probe = await probeEndpoint(envFor(stub.url, { TABLEMINDS_CODER_MODEL: "coder-x" }));
    expect(probe).toMatchObject({
      ok: true,
      baseUrl: stub.url,
      listed: ["stub-model", "coder-x"],
      models: [
        { model: "stub-model", roles: ["planner", "answerer", "checker", "reflector", "archiver"] },
        { model: "coder-x", roles: ["coder"] },
      ],
    });
    expect(stub.requests.map((r) => r.model).sort()).toEqual(["coder-x", "stub-model"]);
    expect(
      stub.requests.every((r) => r.body.max_tokens === 16 || r.body.max_completion_tokens === 16),
    ).toBe(true);
  });

  it("counts an empty reply as an answer", async () => {
    const stub = await stubWith({ script: { default: [""] } });
    expect((await probeEndpoint(envFor(stub.url))).ok).toBe(true);
  });

  it("says, in one line, that nothing listens at the base URL", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const probe = await probeEndpoint(envFor(url));
    expect(probe.ok).toBe(false);
    if (probe.ok) return;
    expect(probe.problem).toBe(
      'a test completion with model "stub-model" failed: Connection error. (ECONNREFUSED)',
    );
    expect(probe.listProblem).toMatch(/^GET \/models failed: .*ECONNREFUSED/);
  });

  it("names a model the server does not know, with the ones it lists", async () => {
    const stub = await stubWith({
      script: { default: [{ status: 404, content: "The model `nope` does not exist." }] },
      models: ["a", "b"],
    });
    const probe = await probeEndpoint(envFor(stub.url, { TABLEMINDS_MODEL: "nope" }));
    expect(probe.ok).toBe(false);
    if (probe.ok) return;
    expect(probe.problem).toBe(
      'a test completion with model "nope" failed: 404 The model `nope` does not exist.; the server lists a, b',
    );
    expect(stub.requests).toHaveLength(1);
  });

  it("says when the server is not an OpenAI chat API", async () => {
    const stub = await stubWith({
      script: { default: [{ raw: { body: "<html>hello</html>", contentType: "text/html" } }] },
    });
    const probe = await probeEndpoint(envFor(stub.url));
    expect(probe.ok).toBe(false);
    if (probe.ok) return;
    expect(probe.problem).toContain("the server's reply is not an OpenAI chat completion");
  });

  it("gives up on a server that never answers within its time bound", async () => {
    const stub = await stubWith({ script: { default: [{ hang: true }] } });
    const started = Date.now();
    const probe = await probeEndpoint(envFor(stub.url), 500);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(probe.ok).toBe(false);
    if (probe.ok) return;
    expect(probe.problem).toContain("timed out after 500 ms");
  });

  it("says what to set when no endpoint is configured", async () => {
    const probe = await probeEndpoint({});
    expect(probe.ok).toBe(false);
    if (probe.ok) return;
    expect(probe.baseUrl).toBeUndefined();
    expect(probe.problem).toMatch(/^No model endpoint is configured .*OPENAI_BASE_URL/);
  });

  it("shows a base URL without credentials or query", () => {
    expect(displayUrl("http://user:pw@127.0.0.1:8000/v1?key=s#x")).toBe("http://127.0.0.1:8000/v1");
  });
});
