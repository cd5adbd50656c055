import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChatHistoryItem } from "node-llama-cpp";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ModelConfigError, resolveModel } from "../../models/config.js";
import { fitHistory } from "../../models/local-prompt.js";
import {
  DEFAULT_LOCAL_MAX_TOKENS,
  DEFAULT_LOCAL_MODEL,
  LocalModelSpecError,
  modelsDir,
  resolveLocalSpec,
} from "../../models/local-spec.js";

const root = mkdtempSync(path.join(tmpdir(), "tableminds-local-spec-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A models directory holding the given (fake) GGUF files. */
function dirWith(...files: string[]): string {
  const dir = mkdtempSync(path.join(root, "models-"));
  for (const file of files) writeFileSync(path.join(dir, file), "GGUF");
  return dir;
}

describe("local: model specs", () => {
  it("finds the models directory from TABLEMINDS_MODELS_DIR, XDG_CACHE_HOME, then HOME", () => {
    expect(modelsDir({ TABLEMINDS_MODELS_DIR: "/m", HOME: "/h" })).toBe("/m");
    expect(modelsDir({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/x/tableminds/models");
    expect(modelsDir({ HOME: "/h" })).toBe("/h/.cache/tableminds/models");
    expect(modelsDir({})).toBeUndefined();
  });

  it("`local` alone is the default model, by its catalog name", () => {
    const dir = dirWith(DEFAULT_LOCAL_MODEL.file);
    const ref = resolveLocalSpec("local", { TABLEMINDS_MODELS_DIR: dir });
    expect(ref.path).toBe(path.join(dir, DEFAULT_LOCAL_MODEL.file));
    expect(ref.maxTokens).toBe(DEFAULT_LOCAL_MAX_TOKENS);
    expect(
      resolveLocalSpec(`local:${DEFAULT_LOCAL_MODEL.name}`, { TABLEMINDS_MODELS_DIR: dir }).path,
    ).toBe(ref.path);
  });

  it("takes a name as a file of the models directory, with or without .gguf", () => {
    const dir = dirWith("tiny.gguf");
    const env = { TABLEMINDS_MODELS_DIR: dir, TABLEMINDS_LOCAL_MAX_TOKENS: "64" };
    const ref = resolveLocalSpec("local:tiny", env);
    expect(ref).toMatchObject({ path: path.join(dir, "tiny.gguf"), maxTokens: 64 });
    expect(resolveLocalSpec("local:tiny.gguf", env).path).toBe(ref.path);
  });

  it("takes a path as a file, relative to the working directory", () => {
    const dir = dirWith("other.gguf");
    const file = path.join(dir, "other.gguf");
    expect(resolveLocalSpec(`local:${file}`, {}).path).toBe(file);
    const relative = path.relative(process.cwd(), file);
    expect(resolveLocalSpec(`local:${relative}`, {}).path).toBe(file);
  });

  it("names the missing file or model, and what to do", () => {
    const dir = dirWith("present.gguf");
    expect(() => resolveLocalSpec("local:/no/such/model.gguf", {})).toThrow(
      /No GGUF model file at \/no\/such\/model\.gguf/,
    );
    const missing = (() => {
      try {
        resolveLocalSpec("local:absent", { TABLEMINDS_MODELS_DIR: dir });
      } catch (error) {
        return error;
      }
    })();
    expect(missing).toBeInstanceOf(LocalModelSpecError);
    expect((missing as Error).message).toContain(`No local model "absent" in ${dir}`);
    expect((missing as Error).message).toContain("installed: present.gguf");
    expect(() => resolveLocalSpec("local", { TABLEMINDS_MODELS_DIR: dirWith() })).toThrow(
      /setup-model\.sh/,
    );
  });
});

describe("resolveModel with local models", () => {
  const installed = () => ({ TABLEMINDS_MODELS_DIR: dirWith(DEFAULT_LOCAL_MODEL.file) });

  it("runs a `local:` model with no endpoint configured", () => {
    const env = installed();
    const resolved = resolveModel("coder", { model: "local" }, env);
    expect(resolved.model).toBe("local");
    expect(resolved.baseUrl).toBeUndefined();
    expect(resolved.local?.path).toBe(
      path.join(env.TABLEMINDS_MODELS_DIR, DEFAULT_LOCAL_MODEL.file),
    );
    // A role may be local while the others use the endpoint.
    const mixed = {
      ...env,
      OPENAI_BASE_URL: "http://127.0.0.1:8000/v1",
      TABLEMINDS_CODER_MODEL: "local",
    };
    expect(resolveModel("coder", {}, mixed).local).toBeDefined();
    expect(resolveModel("planner", {}, mixed).local).toBeUndefined();
  });

  it("turns a missing local model into a ModelConfigError", () => {
    expect(() =>
      resolveModel("planner", { model: "local:nope" }, { TABLEMINDS_MODELS_DIR: dirWith() }),
    ).toThrow(ModelConfigError);
  });

  it("falls back to the installed default model when no endpoint is configured, saying so once", () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const env = installed();
      const first = resolveModel("planner", {}, env);
      const second = resolveModel("coder", {}, env);
      expect(first.local?.path).toBe(
        path.join(env.TABLEMINDS_MODELS_DIR, DEFAULT_LOCAL_MODEL.file),
      );
      expect(second.local).toBeDefined();
      const notices = write.mock.calls
        .map(([text]) => String(text))
        .filter((t) => t.includes("no model endpoint"));
      // The first fallback of this process: one line, naming the model file.
      expect(notices).toHaveLength(1);
      expect(notices[0]).toContain(DEFAULT_LOCAL_MODEL.file);
    } finally {
      write.mockRestore();
    }
  });

  it("does not fall back when an endpoint or a model is configured, or nothing is installed", () => {
    const env = installed();
    expect(resolveModel("planner", {}, { ...env, OPENAI_API_KEY: "sk-x" }).local).toBeUndefined();
    expect(() => resolveModel("planner", { model: "qwen" }, env)).toThrow(/No model endpoint/);
    expect(() => resolveModel("planner", {}, { TABLEMINDS_MODELS_DIR: dirWith() })).toThrow(
      /No model endpoint/,
    );
  });
});

describe("fitHistory: prompts fit the context", () => {
  // Four characters a token, plus one per message, like a real tokenizer roughly.
  const count = (history: readonly ChatHistoryItem[]) =>
    history.reduce((n, item) => {
      const text = item.type === "model" ? item.response.join("") : String(item.text);
      return n + 1 + Math.ceil(text.length / 4);
    }, 0);

  it("leaves a prompt that fits alone", () => {
    const history: ChatHistoryItem[] = [
      { type: "system", text: "short" },
      { type: "user", text: "question?" },
    ];
    expect(fitHistory(history, count, 100)).toEqual({
      history,
      tokens: count(history),
      cutChars: 0,
    });
  });

  it("cuts the middle of the longest message, keeping its head and its end", () => {
    const table = `HEAD ${"x".repeat(8000)} QUESTION: how many?`;
    const history: ChatHistoryItem[] = [
      { type: "system", text: "You are the answerer." },
      { type: "user", text: table },
      { type: "model", response: [] },
    ];
    const fitted = fitHistory(history, count, 500);
    expect(fitted.tokens).toBeLessThanOrEqual(500);
    expect(fitted.cutChars).toBeGreaterThan(0);
    const user = fitted.history[1] as { text: string };
    expect(user.text.startsWith("HEAD ")).toBe(true);
    expect(user.text.endsWith("QUESTION: how many?")).toBe(true);
    expect(user.text).toMatch(/characters cut to fit the model's context/);
    expect(fitted.history[0]).toEqual(history[0]);
  });

  it("fails when nothing can make it fit", () => {
    const history: ChatHistoryItem[] = [{ type: "user", text: "q" }];
    expect(() => fitHistory(history, () => 1000, 10)).toThrow(/cannot be cut/);
  });
});
