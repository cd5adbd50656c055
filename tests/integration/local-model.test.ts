import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callModel, clearChatModelCache, ModelCallError } from "../../models/chat.js";
import { ChatLocalModel } from "../../models/local-chat.js";
import { installedDefaultModel, LocalEnvSchema } from "../../models/local-spec.js";

// Runs the real default model (SmolLM2-135M-Instruct): a few short generations on the CPU.
const model = installedDefaultModel(LocalEnvSchema.parse(process.env));
const dir = mkdtempSync(path.join(tmpdir(), "tableminds-local-"));
const QUESTION = [
  {
    role: "system",
    content: 'Answer the question about the table. End with one line: "Final Answer: <answer>".',
  },
  {
    role: "user",
    content: "Table:\nnation,gold\nUSA,39\nChina,38\n\nQuestion: Which nation won 39 gold medals?",
  },
];

beforeAll(() => {
  if (!model) {
    throw new Error(
      "The local model is not installed: run `bash scripts/setup-model.sh` (or `npm run setup`), then run the tests again.",
    );
  }
});

afterAll(() => {
  vi.unstubAllEnvs();
  clearChatModelCache();
  rmSync(dir, { recursive: true, force: true });
});

async function failureOf(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelCallError);
  return error as ModelCallError;
}

describe("the embedded local model", () => {
  it("loads and generates through callModel, reporting token usage", async () => {
    const reply = await callModel("answerer", QUESTION, { model: "local", maxTokens: 24 });
    expect(reply.model).toBe("local");
    expect(reply.text.trim()).not.toBe("");
    expect(reply.promptTokens).toBeGreaterThan(20);
    expect(reply.completionTokens).toBeGreaterThan(0);
    expect(reply.completionTokens).toBeLessThanOrEqual(24);
  });

  it("stops at a stop sequence and at max tokens", async () => {
    const chat = new ChatLocalModel({ modelPath: model as string, maxTokens: 8 });
    const counting = [{ role: "user", content: "Count from 1 to 50, separated by commas." }];
    const capped = await chat.invoke(counting);
    expect(capped.usage_metadata?.output_tokens).toBe(8);
    expect(capped.response_metadata.finish_reason).toBe("length");
    // Counting to 50 writes a 3 early, however the model lays it out ("1, 2, 3" or "1. 1\n2. 2\n3.").
    const stopped = await chat.invoke(counting, { stop: ["3"], maxTokens: 40 });
    expect(stopped.text).not.toContain("3");
    expect(stopped.usage_metadata?.output_tokens).toBeLessThan(40);
    expect(stopped.response_metadata.finish_reason).toBe("stop");
  });

  it("repeats a sampled reply with the same seed", async () => {
    const settings = { model: "local", temperature: 1, seed: 7, maxTokens: 12 };
    const a = await callModel("planner", QUESTION, settings);
    const b = await callModel("planner", QUESTION, settings);
    expect(b.text).toBe(a.text);
  });

  it("fits a prompt longer than the context", async () => {
    const chat = new ChatLocalModel({ modelPath: model as string, maxTokens: 8, contextSize: 512 });
    const rows = Array.from({ length: 600 }, (_, i) => `row${i},${i * 3}`).join("\n");
    const reply = await chat.invoke([
      { role: "user", content: `Table:\n${rows}\n\nHow many rows?` },
    ]);
    expect(reply.usage_metadata?.input_tokens).toBeLessThanOrEqual(512 - 8);
    expect(reply.response_metadata.prompt_chars_cut).toBeGreaterThan(0);
  });

  it("fails a call that outlasts its timeout", async () => {
    const error = await failureOf(callModel("coder", QUESTION, { model: "local", timeoutMs: 1 }));
    expect(error.message).toContain("timed out after 1 ms");
  });

  it("runs on the local model when no endpoint is configured", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    vi.stubEnv("OPENAI_BASE_URL", "");
    vi.stubEnv("TABLEMINDS_MODEL", "");
    vi.stubEnv("TABLEMINDS_ANSWERER_MODEL", "");
    try {
      const reply = await callModel("answerer", QUESTION, { maxTokens: 8 });
      expect(reply.model).toBe("local");
      expect(reply.completionTokens).toBeGreaterThan(0);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("a corrupt GGUF file", () => {
  it("that is not GGUF at all gets an error naming the file", async () => {
    const file = path.join(dir, "garbage.gguf");
    writeFileSync(file, "this is not a model\n".repeat(100));
    const error = await failureOf(callModel("coder", QUESTION, { model: `local:${file}` }));
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/not a GGUF model file/);
  });

  it("that is truncated gets an error naming the file", async () => {
    const file = path.join(dir, "truncated.gguf");
    const head = Buffer.alloc(20_000_000);
    const fd = openSync(model as string, "r");
    const read = readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    writeFileSync(file, head.subarray(0, read));
    const error = await failureOf(callModel("coder", QUESTION, { model: `local:${file}` }));
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/truncated or corrupt/);
    expect(error.message).toMatch(/setup-model\.sh/);
  });
});
