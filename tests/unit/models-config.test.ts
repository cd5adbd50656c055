import { describe, expect, it } from "vitest";
import { createChatModel } from "../../models/chat.js";
import {
  ModelConfigError,
  ModelSettingsSchema,
  parseModelSettings,
  ROLES,
  resolveModel,
} from "../../models/config.js";
import { ConfigurationSchema } from "../../settings/configuration.js";

const KEY = { OPENAI_API_KEY: "sk-test" };

function configErrorOf(fn: () => unknown): ModelConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelConfigError);
    return error as ModelConfigError;
  }
  throw new Error("expected a ModelConfigError");
}

describe("resolveModel: which model a role uses", () => {
  const env = {
    ...KEY,
    TABLEMINDS_MODEL: "shared-env",
    TABLEMINDS_CODER_MODEL: "coder-env",
  };

  it("defaults to gpt-4o-mini", () => {
    expect(resolveModel("planner", {}, KEY).model).toBe("gpt-4o-mini");
  });

  it("prefers TABLEMINDS_MODEL over the default, the role's variable over both", () => {
    expect(resolveModel("planner", {}, env).model).toBe("shared-env");
    expect(resolveModel("coder", {}, env).model).toBe("coder-env");
  });

  it("reads each role's own variable", () => {
    const perRole = {
      ...KEY,
      TABLEMINDS_PLANNER_MODEL: "p",
      TABLEMINDS_CODER_MODEL: "c",
      TABLEMINDS_ANSWERER_MODEL: "a",
      TABLEMINDS_CHECKER_MODEL: "ch",
      TABLEMINDS_REFLECTOR_MODEL: "r",
      TABLEMINDS_ARCHIVER_MODEL: "ar",
    };
    expect(ROLES.map((role) => resolveModel(role, {}, perRole).model)).toEqual([
      "p",
      "c",
      "a",
      "ch",
      "r",
      "ar",
    ]);
  });

  it("puts explicit settings above every variable, the role's own model first", () => {
    expect(resolveModel("coder", { model: "explicit" }, env).model).toBe("explicit");
    const settings = { model: "explicit", roleModels: { coder: "explicit-coder" } };
    expect(resolveModel("coder", settings, env).model).toBe("explicit-coder");
    expect(resolveModel("planner", settings, env).model).toBe("explicit");
  });

  it("treats blank or undefined values as unset", () => {
    const blank = { ...KEY, TABLEMINDS_MODEL: "  ", TABLEMINDS_CODER_MODEL: "" };
    expect(
      resolveModel("coder", { model: "", roleModels: { coder: undefined } }, blank).model,
    ).toBe("gpt-4o-mini");
  });
});

describe("resolveModel: endpoint and key", () => {
  it("uses OpenAI itself when only a key is set", () => {
    expect(resolveModel("planner", {}, KEY)).toEqual({ model: "gpt-4o-mini", apiKey: "sk-test" });
  });

  it('uses the key "none" when only a base URL is set', () => {
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:8000/v1" };
    expect(resolveModel("coder", {}, env)).toEqual({
      model: "gpt-4o-mini",
      baseUrl: "http://127.0.0.1:8000/v1",
      apiKey: "none",
    });
  });

  it("lets settings override the environment's endpoint and key", () => {
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:8000/v1", OPENAI_API_KEY: "env-key" };
    const settings = { baseUrl: "http://127.0.0.1:9000/v1", apiKey: "settings-key" };
    expect(resolveModel("answerer", settings, env)).toMatchObject(settings);
  });

  it("needs no environment when settings name an endpoint", () => {
    expect(resolveModel("planner", { baseUrl: "http://127.0.0.1:1234/v1" }, {}).apiKey).toBe(
      "none",
    );
  });

  it("explains what to set when no endpoint is configured", () => {
    const error = configErrorOf(() => resolveModel("planner", {}, {}));
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(error.message).toContain("OPENAI_BASE_URL");
    expect(error.message).toContain("OPENAI_API_KEY=sk-");
    expect(error.message).toContain("OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=none");
    expect(error.message).toContain("planner");
  });

  it("rejects a base URL without http(s)", () => {
    const error = configErrorOf(() =>
      resolveModel("coder", {}, { OPENAI_BASE_URL: "localhost:8000/v1" }),
    );
    expect(error.message).toContain("OPENAI_BASE_URL");
  });
});

describe("model settings", () => {
  it("fills in the defaults", () => {
    expect(ModelSettingsSchema.parse({})).toEqual({
      temperature: 0,
      timeoutMs: 60_000,
      maxRetries: 2,
    });
    // The same defaults as a graph run's, from one declaration.
    const run = ConfigurationSchema.parse({});
    expect([run.llmTimeoutMs, run.llmMaxRetries, run.runTimeoutMs]).toEqual([60_000, 2, 600_000]);
    expect(parseModelSettings({ maxRetries: 0 }).maxRetries).toBe(0);
  });

  it("rejects out-of-range values with a ModelConfigError naming the field", () => {
    const error = configErrorOf(() => parseModelSettings({ temperature: 5 }));
    expect(error.message).toContain("temperature");
    expect(configErrorOf(() => parseModelSettings({ timeoutMs: -1 })).message).toContain(
      "timeoutMs",
    );
  });
});

describe("createChatModel", () => {
  const env = { OPENAI_BASE_URL: "http://127.0.0.1:8000/v1" };

  it("builds ChatOpenAI with the resolved model, timeout and retries", () => {
    const chat = createChatModel(
      "coder",
      { model: "qwen", temperature: 0.2, timeoutMs: 5_000, maxRetries: 1 },
      env,
    );
    expect(chat.model).toBe("qwen");
    expect(chat.temperature).toBe(0.2);
    expect(chat.timeout).toBe(5_000);
    expect(chat.streamUsage).toBe(true);
  });

  it("reuses one client per role and settings", () => {
    const a = createChatModel("coder", { model: "qwen" }, env);
    expect(createChatModel("coder", { model: "qwen" }, env)).toBe(a);
    expect(createChatModel("planner", { model: "qwen" }, env)).not.toBe(a);
    expect(createChatModel("coder", { model: "qwen", temperature: 1 }, env)).not.toBe(a);
    expect(
      createChatModel("coder", { model: "qwen" }, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
    ).not.toBe(a);
  });
});
