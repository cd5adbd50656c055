import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callModel } from "../../tools/models/chat.js";
import { closeReplayCaches } from "../../tools/models/replay-cache.js";
import { useStubEndpoint } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const file = path.join(mkdtempSync(path.join(os.tmpdir(), "tableminds-replay-")), "replies.sqlite");
const system = { role: "system", content: "# tableminds planner\nPlan." };

describe("the replay cache", () => {
  let stub: StubServer;
  let replies = 0;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: () => `<plan>\n1. Reply ${++replies}.\n</plan>` });
    useStubEndpoint(stub.url);
  });
  afterAll(async () => {
    closeReplayCaches();
    await stub?.close();
  });

  const call = (temperature = 0, content = "How many?") =>
    callModel(
      "planner",
      [system, { role: "user", content }],
      { temperature, maxRetries: 0 },
      { replayCache: file },
    );

  it("answers a repeated call from the file without a request", async () => {
    const first = await call();
    const before = stub.requests.length;
    const second = await call();
    expect(stub.requests.length).toBe(before);
    expect(second).toMatchObject({ text: first.text, cached: true, ms: 0 });
    expect(first.cached).toBeUndefined();
  });

  it("misses when the temperature or a message differs", async () => {
    const base = await call();
    const before = stub.requests.length;
    const warmer = await call(0.7);
    const other = await call(0, "How many exactly?");
    expect(stub.requests.length).toBe(before + 2);
    expect(new Set([base.text, warmer.text, other.text]).size).toBe(3);
  });

  it("survives closing and reopening the file", async () => {
    const original = await call();
    closeReplayCaches();
    const before = stub.requests.length;
    const replayed = await call();
    expect(stub.requests.length).toBe(before);
    expect(replayed.text).toBe(original.text);
  });

  it("ignores a corrupt entry with a warning and asks the model", async () => {
    closeReplayCaches();
    const db = new Database(file);
    db.prepare("UPDATE replies SET text = ''").run();
    db.close();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    const before = stub.requests.length;
    const fresh = await call();
    await new Promise((resolve) => setImmediate(resolve));
    process.off("warning", onWarning);
    expect(stub.requests.length).toBe(before + 1);
    expect(fresh.cached).toBeUndefined();
    expect(warnings.some((w) => /unusable/.test(w))).toBe(true);
  });
});
