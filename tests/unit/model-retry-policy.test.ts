import { describe, expect, it, vi } from "vitest";
import { ModelCallError, NotChatCompletionError } from "../../models/errors.js";
import { modelRetryPolicy } from "../../nodes/policies.js";

const failure = (extra: { status?: number; cause?: unknown }) =>
  new ModelCallError({
    role: "planner",
    model: "m",
    baseUrl: "http://127.0.0.1:9/v1",
    attempts: 1,
    reason: "it failed",
    ...extra,
  });

const refused = Object.assign(new Error("Connection error."), {
  cause: Object.assign(new TypeError("fetch failed"), {
    cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }),
  }),
});

describe("the node's retry policy", () => {
  const retryOn = modelRetryPolicy.retryOn as (error: unknown) => boolean;

  const endpointFailures: [string, ModelCallError][] = [
    ["a refused connection", failure({ cause: refused })],
    ...[400, 401, 403, 404, 501].map((status): [string, ModelCallError] => [
      `a ${status}`,
      failure({ status }),
    ]),
    [
      "a reply that is not a chat completion",
      failure({ cause: new NotChatCompletionError("<html>") }),
    ],
  ];

  it.each(endpointFailures)("does not run the node again after %s", (_, error) => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      expect(retryOn(error)).toBe(false);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it.each([
    ["a 503", failure({ status: 503 })],
    ["a 429", failure({ status: 429 })],
    [
      "a timeout",
      failure({ cause: Object.assign(new Error("timed out"), { name: "TimeoutError" }) }),
    ],
  ])("runs the node once more after %s, with a warning", (_, error) => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      expect(retryOn(error)).toBe(true);
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/running the node again$/),
        "TablemindsWarning",
      );
    } finally {
      warn.mockRestore();
    }
  });

  it("never retries what is not a failed model call", () => {
    expect(retryOn(new Error("the planner reply has no plan"))).toBe(false);
  });
});
