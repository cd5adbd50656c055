import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { callModel } from "../../models/chat.js";
import type { ModelSettings } from "../../models/config.js";
import {
  closeReplayCaches,
  ReplayCache,
  ReplayCacheError,
  replayCacheStats,
} from "../../models/replay-cache.js";
import { useStubEndpoint } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-replay-"));
const system = { role: "system", content: "# tableminds planner\nPlan." };

/** Collects the process warnings raised while `run` is awaited. */
async function warningsDuring<T>(
  run: () => Promise<T>,
): Promise<{ result: T; warnings: string[] }> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on("warning", onWarning);
  try {
    const result = await run();
    // emitWarning delivers on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    return { result, warnings };
  } finally {
    process.off("warning", onWarning);
  }
}

describe("the replay cache in callModel, against the real ChatOpenAI", () => {
  let stub: StubServer;
  let replies = 0;
  let file = "";
  let n = 0;

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: () => `<plan>\n1. Reply ${++replies}.\n</plan>` });
    useStubEndpoint(stub.url);
  });
  afterEach(() => {
    closeReplayCaches();
    delete process.env.TABLEMINDS_REPLAY_CACHE;
  });
  afterAll(async () => {
    await stub?.close();
  });
  const freshFile = () => {
    file = path.join(dir, `replies-${++n}.sqlite`);
    return file;
  };

  /** `cache` null passes no file, leaving the choice to TABLEMINDS_REPLAY_CACHE. */
  const call = (
    settings: Partial<ModelSettings> = {},
    content = "How many?",
    cache: string | null = file,
  ) =>
    callModel(
      "planner",
      [system, { role: "user", content }],
      { temperature: 0, maxRetries: 0, ...settings },
      { replayCache: cache ?? undefined },
    );

  it("answers a repeated call from the file, with its token counts and no request", async () => {
    freshFile();
    const before = replayCacheStats();
    const first = await call();
    const requests = stub.requests.length;
    const second = await call();
    expect(stub.requests.length).toBe(requests);
    expect(first.cached).toBeUndefined();
    expect(first.promptTokens).toBeGreaterThan(0);
    expect(second).toMatchObject({
      text: first.text,
      promptTokens: first.promptTokens,
      completionTokens: first.completionTokens,
      cached: true,
      ms: 0,
    });
    const after = replayCacheStats();
    expect(after.hits - before.hits).toBe(1);
    expect(after.misses - before.misses).toBe(1);
    expect(after.recorded - before.recorded).toBe(1);
  });

  it("misses when the temperature, the model or a message differs", async () => {
    freshFile();
    const base = await call();
    const requests = stub.requests.length;
    const warmer = await call({ temperature: 0.7 });
    const otherModel = await call({ model: "stub-model-2" });
    const otherQuestion = await call({}, "How many exactly?");
    expect(stub.requests.length).toBe(requests + 3);
    expect(stub.requests.at(-2)?.model).toBe("stub-model-2");
    const texts = [base, warmer, otherModel, otherQuestion].map((r) => r.text);
    expect(new Set(texts).size).toBe(4);
    expect([warmer, otherModel, otherQuestion].every((r) => r.cached === undefined)).toBe(true);
  });

  it("replays a streamed call from a plain one: streaming does not change the reply", async () => {
    freshFile();
    const plain = await call();
    const requests = stub.requests.length;
    const streamed = await call({ streaming: true });
    expect(stub.requests.length).toBe(requests);
    expect(streamed).toMatchObject({ text: plain.text, cached: true });
  });

  it("survives closing and reopening the file", async () => {
    freshFile();
    const original = await call();
    closeReplayCaches();
    const requests = stub.requests.length;
    const replayed = await call();
    expect(stub.requests.length).toBe(requests);
    expect(replayed.text).toBe(original.text);
  });

  it("is turned on by TABLEMINDS_REPLAY_CACHE when no file is passed", async () => {
    process.env.TABLEMINDS_REPLAY_CACHE = freshFile();
    const first = await call({}, "How many?", null);
    const requests = stub.requests.length;
    const second = await call({}, "How many?", null);
    expect(stub.requests.length).toBe(requests);
    expect(second).toMatchObject({ text: first.text, cached: true });
    const db = new Database(file, { readonly: true });
    expect((db.prepare("SELECT count(*) AS n FROM replies").get() as { n: number }).n).toBe(1);
    db.close();
  });

  it("ignores a corrupt entry with a warning and asks the model", async () => {
    freshFile();
    await call();
    closeReplayCaches();
    const db = new Database(file);
    db.prepare("UPDATE replies SET text = '', prompt_tokens = -3").run();
    db.close();
    const requests = stub.requests.length;
    const { result, warnings } = await warningsDuring(() => call());
    expect(stub.requests.length).toBe(requests + 1);
    expect(result.cached).toBeUndefined();
    expect(warnings.some((w) => /unusable; calling the model/.test(w))).toBe(true);
    // The fresh reply replaced the damaged entry.
    const again = await call();
    expect(again).toMatchObject({ text: result.text, cached: true });
  });

  it("keeps answering, with warnings, when the file is damaged underneath it", async () => {
    freshFile();
    await call();
    const other = new Database(file);
    other.exec("DROP TABLE replies");
    other.close();
    const requests = stub.requests.length;
    const { result, warnings } = await warningsDuring(() => call({}, "Still there?"));
    expect(stub.requests.length).toBe(requests + 1);
    expect(result.text).toMatch(/Reply \d+/);
    expect(warnings.some((w) => /lookup failed/.test(w))).toBe(true);
    expect(warnings.some((w) => /could not record a reply/.test(w))).toBe(true);
  });

  it("refuses a file that is not a SQLite database, saying which", async () => {
    const bogus = path.join(dir, "not-a-database.sqlite");
    writeFileSync(bogus, "this is not SQLite, just text that is long enough to have a header\n");
    const error = await call({}, "How many?", bogus).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayCacheError);
    expect(String((error as Error).message)).toContain(bogus);
  });
});

/** Writes `count` entries under `prefix` from a separate Node process. */
function writerProcess(file: string, prefix: string, count: number): Promise<number | null> {
  const module = path.resolve(import.meta.dirname, "../../models/replay-cache.ts");
  const script = `
    import { ReplayCache } from ${JSON.stringify(module)};
    const cache = new ReplayCache(${JSON.stringify(file)});
    for (let i = 0; i < ${count}; i++) {
      cache.put(${JSON.stringify(prefix)} + i, "m", { text: ${JSON.stringify(prefix)} + " reply " + i, promptTokens: i, completionTokens: 1 });
    }
    cache.close();
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe("the replay cache file shared by processes", () => {
  it("keeps every entry when two processes write to it at the same time", async () => {
    const file = path.join(dir, "shared.sqlite");
    new ReplayCache(file).close();
    const codes = await Promise.all([writerProcess(file, "a", 300), writerProcess(file, "b", 300)]);
    expect(codes).toEqual([0, 0]);
    const cache = new ReplayCache(file);
    try {
      for (const prefix of ["a", "b"]) {
        for (const i of [0, 150, 299]) {
          expect(cache.get(`${prefix}${i}`)).toEqual({
            text: `${prefix} reply ${i}`,
            promptTokens: i,
            completionTokens: 1,
          });
        }
      }
      const db = new Database(file, { readonly: true });
      expect((db.prepare("SELECT count(*) AS n FROM replies").get() as { n: number }).n).toBe(600);
      db.close();
    } finally {
      cache.close();
    }
  });
});
