import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelCallsInFlight, reportSlowModelCalls } from "../../models/activity.js";
import { callModel, isEndpointFailure, ModelCallError } from "../../models/chat.js";
import type { ModelSettings, Role } from "../../models/config.js";
import { type StubOptions, type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const open: StubServer[] = [];

async function stubWith(opts: StubOptions): Promise<StubServer> {
  const stub = await startStubOpenAI(opts);
  open.push(stub);
  return stub;
}

function settingsFor(stub: StubServer, extra: Partial<ModelSettings> = {}): Partial<ModelSettings> {
  return { baseUrl: stub.url, apiKey: "test-key", model: "stub-model", maxRetries: 0, ...extra };
}

function messages(role: Role, question = "How many rows?") {
  return [
    { role: "system", content: `# tableminds ${role}\nYou are the ${role}.` },
    { role: "user", content: question },
  ];
}

/** A base URL where nothing listens: a port bound, read and closed again. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

/** The rejection of `promise`, which must reject. */
async function failureOf(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelCallError);
  return error as ModelCallError;
}

afterAll(async () => {
  await Promise.all(open.map((stub) => stub.close()));
});

describe("callModel through the real ChatOpenAI against the stub", () => {
  let stub: StubServer;

  beforeAll(async () => {
    stub = await stubWith({
      script: {
        planner: ["<plan>\n1. Count the rows.\n</plan>"],
        coder: ["```python\nprint(len(df))\n```", "```python\nprint(df.shape[0])\n```"],
      },
    });
  });

  it("returns the scripted text with token counts without streaming", async () => {
    const reply = await callModel("planner", messages("planner"), settingsFor(stub));
    expect(reply.text).toBe("<plan>\n1. Count the rows.\n</plan>");
    expect(reply.promptTokens).toBeGreaterThan(0);
    expect(reply.completionTokens).toBe(Math.ceil(reply.text.length / 4));
    expect(reply.model).toBe("stub-model");
    expect(reply.ms).toBeGreaterThanOrEqual(0);
    expect(stub.requests.at(-1)?.stream).toBe(false);
  });

  it("returns the same text with token counts when streaming", async () => {
    const reply = await callModel(
      "planner",
      messages("planner"),
      settingsFor(stub, { streaming: true }),
    );
    expect(reply.text).toBe("<plan>\n1. Count the rows.\n</plan>");
    expect(reply.promptTokens).toBeGreaterThan(0);
    expect(reply.completionTokens).toBe(Math.ceil(reply.text.length / 4));
    const sent = stub.requests.at(-1);
    expect(sent?.stream).toBe(true);
    expect(sent?.body.stream_options).toEqual({ include_usage: true });
  });

  it("routes each role to its own script, consumed in order, the last reply repeating", async () => {
    const settings = settingsFor(stub);
    const first = await callModel("coder", messages("coder"), settings);
    const second = await callModel("coder", messages("coder"), settings);
    const third = await callModel("coder", messages("coder"), settings);
    const plan = await callModel("planner", messages("planner"), settings);
    expect(first.text).toContain("len(df)");
    expect(second.text).toContain("df.shape[0]");
    expect(third.text).toBe(second.text);
    expect(plan.text).toContain("<plan>");
    expect(stub.requests.slice(-4).map((r) => r.role)).toEqual([
      "coder",
      "coder",
      "coder",
      "planner",
    ]);
  });

  it("records the model name, messages and temperature it was sent", async () => {
    await callModel(
      "coder",
      messages("coder", "Sum the gold column."),
      settingsFor(stub, { model: "qwen2.5-coder", temperature: 0.7 }),
    );
    const sent = stub.requests.at(-1);
    expect(sent?.model).toBe("qwen2.5-coder");
    expect(sent?.body.temperature).toBe(0.7);
    expect(sent?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(sent?.messages[1]?.content).toBe("Sum the gold column.");
  });

  it("uses the role's own model over the shared one", async () => {
    await callModel(
      "answerer",
      messages("coder"),
      settingsFor(stub, { model: "shared", roleModels: { answerer: "answer-model" } }),
    );
    expect(stub.requests.at(-1)?.model).toBe("answer-model");
  });

  it("fails clearly when the stub has no script for the role", async () => {
    const error = await failureOf(callModel("answerer", messages("answerer"), settingsFor(stub)));
    expect(error.status).toBe(500);
    expect(error.message).toContain('no script for role "answerer"');
  });
});

describe("retries and failures", () => {
  it("retries a 500 and then succeeds", async () => {
    const stub = await stubWith({ script: { default: [{ status: 500 }, "recovered"] } });
    const reply = await callModel("coder", messages("coder"), settingsFor(stub, { maxRetries: 2 }));
    expect(reply.text).toBe("recovered");
    expect(stub.requests).toHaveLength(2);
  });

  it.each([
    ["with", 0],
    ["without", null],
  ] as const)("retries a 429 %s Retry-After and then succeeds", async (_, retryAfterSeconds) => {
    const stub = await stubWith({
      script: { default: [{ status: 429, retryAfterSeconds }, "after the limit"] },
    });
    const reply = await callModel("coder", messages("coder"), settingsFor(stub, { maxRetries: 2 }));
    expect(reply.text).toBe("after the limit");
    expect(stub.requests).toHaveLength(2);
  });

  it("does not retry a 429 that says the quota is exhausted", async () => {
    const quota = "You exceeded your current quota, please check your plan and billing details.";
    const stub = await stubWith({
      script: { default: [{ status: 429, content: quota, retryAfterSeconds: null }, "never"] },
    });
    const error = await failureOf(
      callModel("coder", messages("coder"), settingsFor(stub, { maxRetries: 2 })),
    );
    expect(error.status).toBe(429);
    expect(error.message).toContain("exceeded your current quota");
    expect(stub.requests).toHaveLength(1);
  });

  it("with maxRetries 0 a 500 is a ModelCallError naming role, model, URL and status", async () => {
    const stub = await stubWith({ script: { default: [{ status: 500 }, "never reached"] } });
    const error = await failureOf(
      callModel("coder", messages("coder"), settingsFor(stub, { model: "qwen" })),
    );
    expect(error.status).toBe(500);
    expect(error.attempts).toBe(1);
    expect(error.message).toBe(
      `coder model "qwen" at ${stub.url} failed: 500 Internal Server Error (scripted by the stub)`,
    );
    expect(stub.requests).toHaveLength(1);
  });

  it("says how many attempts were made when retries are exhausted", async () => {
    const stub = await stubWith({ script: { default: [{ status: 503 }] } });
    const error = await failureOf(
      callModel("planner", messages("planner"), settingsFor(stub, { maxRetries: 1 })),
    );
    expect(error.attempts).toBe(2);
    expect(error.message).toContain("failed after 2 attempts: 503");
    expect(stub.requests).toHaveLength(2);
  });

  it("does not retry a 400", async () => {
    const stub = await stubWith({ script: { default: [{ status: 400, content: "bad model" }] } });
    const error = await failureOf(
      callModel("planner", messages("planner"), settingsFor(stub, { maxRetries: 3 })),
    );
    expect(error.status).toBe(400);
    expect(stub.requests).toHaveLength(1);
  });

  it("turns a malformed body into a ModelCallError without hanging", async () => {
    const stub = await stubWith({ script: { default: [{ malformed: true }] } });
    const started = Date.now();
    const error = await failureOf(callModel("coder", messages("coder"), settingsFor(stub)));
    expect(error.message).toContain(
      `failed: the server's reply is not an OpenAI chat completion; it begins: ${JSON.stringify('{"id": "chatcmpl-stub", "choices": [{"message": ')}`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  describe.each([false, true])(
    "a 200 that is not a chat completion (streaming: %s)",
    (streaming) => {
      it.each([
        ["an HTML page", "text/html", "<!doctype html><html><body>Welcome to nginx!</body></html>"],
        ["other JSON", "application/json", '{"foo":"bar"}'],
      ])("names %s and quotes its first bytes, without retrying", async (_, contentType, body) => {
        const stub = await stubWith({ script: { default: [{ raw: { body, contentType } }] } });
        const error = await failureOf(
          callModel("coder", messages("coder"), settingsFor(stub, { maxRetries: 2, streaming })),
        );
        expect(error.message).toContain(
          `coder model "stub-model" at ${stub.url} failed: the server's reply is not an OpenAI chat completion; it begins: ${JSON.stringify(body)}`,
        );
        expect(error.message).not.toContain("Cannot read properties");
        expect(error.message).not.toContain("\n");
        expect(isEndpointFailure(error)).toBe(true);
        expect(stub.requests).toHaveLength(1);
      });
    },
  );

  it("turns a malformed stream into a ModelCallError", async () => {
    const stub = await stubWith({ script: { default: [{ malformed: true }] } });
    const error = await failureOf(
      callModel("coder", messages("coder"), settingsFor(stub, { streaming: true })),
    );
    expect(error.message).toMatch(/coder model "stub-model"/);
  });

  it("treats an empty reply as a ModelCallError", async () => {
    const stub = await stubWith({ script: { default: [""] } });
    const error = await failureOf(callModel("answerer", messages("answerer"), settingsFor(stub)));
    expect(error.message).toContain("the reply has no text");
  });

  it("gives up on a server that never answers after timeoutMs", async () => {
    const stub = await stubWith({ script: { default: [{ hang: true }] } });
    const started = Date.now();
    const error = await failureOf(
      callModel("planner", messages("planner"), settingsFor(stub, { timeoutMs: 500 })),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toContain("timed out after 500 ms");
  });

  it("gives up on a body that stalls after the headers", async () => {
    const stub = await stubWith({ script: { default: [{ stall: true }] } });
    const started = Date.now();
    const error = await failureOf(
      callModel("coder", messages("coder"), settingsFor(stub, { timeoutMs: 500 })),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toMatch(/timed out after 500 ms|stalled/);
  });

  // The OpenAI client's timeout ends when a stream starts; the guarded fetch covers the rest.
  it("gives up on a stream that stalls after its first chunk", async () => {
    const stub = await stubWith({ script: { default: [{ stall: true }] } });
    const started = Date.now();
    const error = await failureOf(
      callModel("coder", messages("coder"), settingsFor(stub, { timeoutMs: 500, streaming: true })),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toContain("the response body stalled: no data for 500 ms");
  });

  it("names the refused connection when nothing listens at the base URL, and does not retry it", async () => {
    const url = await refusingUrl();
    const error = await failureOf(
      callModel("coder", messages("coder"), { baseUrl: url, model: "m", maxRetries: 3 }),
    );
    expect(error.message).toContain(`at ${url} failed: `);
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.attempts).toBe(1);
    expect(isEndpointFailure(error)).toBe(true);
  });

  it.each([400, 401, 403, 404, 501])(
    "does not retry a %i, and says so in one line",
    async (status) => {
      const stub = await stubWith({ script: { default: [{ status }, "never"] } });
      const error = await failureOf(
        callModel("planner", messages("planner"), settingsFor(stub, { maxRetries: 3 })),
      );
      expect(error.status).toBe(status);
      expect(error.attempts).toBe(1);
      expect(error.message).not.toContain("\n");
      expect(error.message).not.toContain("Troubleshooting URL");
      expect(isEndpointFailure(error)).toBe(true);
      expect(stub.requests).toHaveLength(1);
    },
  );

  it("tells, while a call waits, which role waits for which host and how long", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stub = await stubWith({ script: { default: [{ content: "at last", until: held }] } });
    const lines: string[] = [];
    let seen = () => {};
    const told = new Promise<void>((resolve) => {
      seen = resolve;
    });
    const stop = reportSlowModelCalls({
      afterMs: 100,
      everyMs: 100,
      labelWidth: 9,
      write: (line) => {
        lines.push(line);
        seen();
      },
    });
    try {
      const call = callModel("answerer", messages("answerer"), settingsFor(stub)).catch(
        (error: unknown) => error,
      );
      await told;
      expect(modelCallsInFlight().map((c) => c.role)).toEqual(["answerer"]);
      release();
      expect(await call).toMatchObject({ text: "at last" });
    } finally {
      stop();
    }
    const host = new URL(stub.url).host;
    expect(lines[0]).toMatch(
      new RegExp(
        `^answerer  waiting \\d+ s for ${host.replaceAll(".", "\\.")} \\(model stub-model\\)$`,
      ),
    );
    expect(modelCallsInFlight()).toEqual([]);
  });

  it("rethrows a caller's abort unchanged instead of wrapping it", async () => {
    const stub = await stubWith({ script: { default: [{ hang: true }] } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100).unref();
    const error = await callModel("coder", messages("coder"), settingsFor(stub), {
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ModelCallError);
  });
});

describe("the stub server itself", () => {
  const chat = (stub: StubServer, body: unknown, path = "/chat/completions") =>
    fetch(stub.url.replace(/\/v1$/, "") + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const request = (content: string, extra: Record<string, unknown> = {}) => ({
    model: "m",
    messages: [
      { role: "system", content: "# tableminds answerer\nAnswer." },
      { role: "user", content },
    ],
    ...extra,
  });

  it("rejects a body that is not a chat request with a 400", async () => {
    const stub = await stubWith({ script: { default: ["x"] } });
    const notJson = await chat(stub, "{", "/v1/chat/completions");
    const noMessages = await chat(stub, { model: "m", messages: [] }, "/v1/chat/completions");
    expect(notJson.status).toBe(400);
    expect(noMessages.status).toBe(400);
    expect(((await noMessages.json()) as { error: { message: string } }).error.message).toMatch(
      /messages/,
    );
    expect(stub.requests).toHaveLength(0);
  });

  it("answers without the /v1 prefix and lists its models", async () => {
    const stub = await stubWith({ script: { answerer: ["42"] }, models: ["a", "b"] });
    const res = await chat(stub, request("q"));
    const body = (await res.json()) as {
      choices: { message: { content: string } }[];
      usage: { completion_tokens: number };
    };
    expect(body.choices[0]?.message.content).toBe("42");
    expect(body.usage.completion_tokens).toBe(1);
    const models = (await (await fetch(`${stub.url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["a", "b"]);
  });

  it("streams SSE chunks and adds a usage chunk only when asked", async () => {
    const stub = await stubWith({ script: { answerer: ["a reply long enough to be split"] } });
    const events = async (extra: Record<string, unknown>) => {
      const text = await (await chat(stub, request("q", { stream: true, ...extra }))).text();
      return text.split("\n\n").filter((e) => e.startsWith("data: "));
    };
    const plain = await events({});
    const withUsage = await events({ stream_options: { include_usage: true } });
    expect(plain.at(-1)).toBe("data: [DONE]");
    expect(plain.some((e) => e.includes('"prompt_tokens"'))).toBe(false);
    const usage = JSON.parse(withUsage.at(-2)?.slice(6) ?? "{}") as {
      choices: unknown[];
      usage: { total_tokens: number };
    };
    expect(usage.choices).toEqual([]);
    expect(usage.usage.total_tokens).toBeGreaterThan(0);
    const text = plain
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] })
      .map((c) => c.choices[0]?.delta.content ?? "")
      .join("");
    expect(text).toBe("a reply long enough to be split");
  });

  it("passes every request and its index to respond()", async () => {
    const stub = await stubWith({ respond: (req, index) => `${req.role} #${index}` });
    await chat(stub, request("q"));
    const second = (await (await chat(stub, request("q"))).json()) as {
      choices: { message: { content: string } }[];
    };
    expect(second.choices[0]?.message.content).toBe("answerer #1");
  });

  it("adds latencyMs to every reply", async () => {
    const stub = await stubWith({ script: { default: ["x"] }, latencyMs: 200 });
    const started = Date.now();
    await chat(stub, request("q"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("close() ends hanging requests", async () => {
    const stub = await startStubOpenAI({ script: { default: [{ hang: true }] } });
    const pending = chat(stub, request("q")).then(
      () => "answered",
      () => "dropped",
    );
    while (stub.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    await stub.close();
    expect(await pending).toBe("dropped");
  });

  it("closes itself after the idle timeout", async () => {
    const stub = await startStubOpenAI({ script: { default: ["x"] }, idleTimeoutMs: 100 });
    expect((await chat(stub, request("q"))).status).toBe(200);
    await stub.closed;
    await expect(chat(stub, request("q"))).rejects.toThrow();
  });
});
