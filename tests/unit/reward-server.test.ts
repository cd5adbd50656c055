import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { registerServeRewardCommand } from "../../cli/serve-reward.js";
import {
  bearerOf,
  csvOfRecords,
  Limiter,
  parseLabel,
  RewardRequestSchema,
  readTokenFile,
  refusalOf,
  responseOf,
  tokenMatches,
} from "../../training/server/index.js";

const dir = mkdtempSync(path.join(tmpdir(), "reward-server-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the response of a query", () => {
  it("is the query after its prompt, or the whole query without prompts", () => {
    expect(responseOf("<u>hi<a>Final Answer: 1", "<u>hi<a>", 0, "reject")).toBe("Final Answer: 1");
    expect(responseOf("Final Answer: 1", undefined, 0, "reject")).toBe("Final Answer: 1");
  });

  it("rejects a query not starting with its prompt, or takes it whole when told", () => {
    expect(() => responseOf("abc", "x", 3, "reject")).toThrow(
      "query[3] does not start with prompts[3]",
    );
    expect(responseOf("abc", "x", 3, "whole")).toBe("abc");
  });
});

describe("labels and requests", () => {
  it("reads a JSON string label or an object, defaulting tables", () => {
    expect(parseLabel('{"role":"plan","reference":"r","split":"train"}', 0)).toEqual({
      role: "plan",
      reference: "r",
      tables: [],
    });
    expect(parseLabel({ reference: "r", qsubtype: "Counting" }, 0)).toMatchObject({
      qsubtype: "Counting",
    });
  });

  it("says which label and field is wrong", () => {
    expect(() => parseLabel("{", 2)).toThrow("labels[2] is not a JSON object string");
    expect(() => parseLabel('{"role":"plan"}', 1)).toThrow(/^labels\[1\]\.reference: /);
    expect(() => parseLabel('{"reference":"r","tables":[{"id":1}]}', 0)).toThrow(
      /^labels\[0\]\.tables\.0\./,
    );
  });

  it("reads a table as stored (by sha256) or inline (csv or records)", () => {
    const sha256 = "b".repeat(64);
    const label = parseLabel(
      {
        reference: "r",
        tables: [
          { name: "a", sha256 },
          { name: "b", csv: "x\n1\n" },
          { name: "c", records: [{ x: 1, y: null }] },
        ],
      },
      0,
    );
    expect(label.tables.map((t) => t.kind)).toEqual(["stored", "csv", "records"]);
  });

  it("refuses a table without a sha256 or data, inline data with a uri, nested records", () => {
    expect(() => parseLabel({ reference: "r", tables: [{ name: "a", uri: "/x.csv" }] }, 0)).toThrow(
      /^labels\[0\]\.tables\.0\.sha256: /,
    );
    expect(() =>
      parseLabel({ reference: "r", tables: [{ name: "a", csv: "x", uri: "/x.csv" }] }, 0),
    ).toThrow("labels[0].tables.0.uri: an inline table takes no uri");
    expect(() =>
      parseLabel({ reference: "r", tables: [{ name: "a", records: [{ x: { y: 1 } }] }] }, 0),
    ).toThrow(/^labels\[0\]\.tables\.0\.records\.0\.x: /);
    expect(() => parseLabel({ reference: "r", tables: [{ name: "a", records: [] }] }, 0)).toThrow(
      "labels[0].tables.0.records: is empty",
    );
  });

  it("takes single values as lists of one", () => {
    const parsed = RewardRequestSchema.parse({ query: "q", prompts: "p", labels: "{}" });
    expect(parsed).toEqual({ query: ["q"], prompts: ["p"], labels: ["{}"] });
  });
});

describe("tokens", () => {
  it("match exactly, whatever the lengths", () => {
    expect(tokenMatches("abc", "abc")).toBe(true);
    expect(tokenMatches("abd", "abc")).toBe(false);
    expect(tokenMatches("abcd", "abc")).toBe(false);
    expect(tokenMatches(undefined, "abc")).toBe(false);
  });

  it("are read from a Bearer header", () => {
    expect(bearerOf("Bearer xyz")).toBe("xyz");
    expect(bearerOf("bearer xyz ")).toBe("xyz");
    expect(bearerOf("Basic xyz")).toBeUndefined();
    expect(bearerOf(undefined)).toBeUndefined();
  });

  it("come from a file that exists and is not empty", async () => {
    const good = path.join(dir, "token");
    writeFileSync(good, "s3cret\n");
    expect(await readTokenFile(good)).toBe("s3cret");
    const empty = path.join(dir, "empty");
    writeFileSync(empty, " \n");
    await expect(readTokenFile(empty)).rejects.toThrow(`token file ${empty} is empty`);
    await expect(readTokenFile(path.join(dir, "none"))).rejects.toThrow(
      /cannot be read \(ENOENT\)/,
    );
  });
});

describe("inline records", () => {
  it("are written as CSV: every column in first-seen order, quoted where needed", () => {
    const csv = csvOfRecords([
      { a: 1, b: "x,y" },
      { b: 'say "hi"', c: true },
      { a: null, c: " padded" },
    ]);
    expect(csv).toBe('a,b,c\n1,"x,y",\n,"say ""hi""",true\n,," padded"\n');
  });
});

describe("the gate", () => {
  const request = (url: string, headers: Record<string, string> = {}, method = "POST") =>
    ({ url, method, headers }) as unknown as IncomingMessage;
  const options = { token: "s3cret", bodyLimitBytes: 1000 };

  it("refuses from the head alone: no token, a wrong one, a declared body over the limit", () => {
    expect(refusalOf(request("/reward"), options)).toEqual({
      status: 401,
      error: "missing bearer token",
    });
    expect(refusalOf(request("/reward?token=nope"), options)?.error).toBe("wrong bearer token");
    expect(refusalOf(request("/anything", { authorization: "Bearer x" }), options)?.status).toBe(
      401,
    );
    const big = { authorization: "Bearer s3cret", "content-length": "1001" };
    expect(refusalOf(request("/reward/code", big), options)).toEqual({
      status: 413,
      error: "body larger than 1000 bytes",
    });
  });

  it("lets through the token, in the header or the query, and GET /health without one", () => {
    const head = { authorization: "Bearer s3cret", "content-length": "1000" };
    expect(refusalOf(request("/reward", head), options)).toBeNull();
    expect(refusalOf(request("/reward/plan?token=s3cret"), options)).toBeNull();
    expect(refusalOf(request("/health", {}, "GET"), options)).toBeNull();
    expect(refusalOf(request("/health", {}, "POST"), options)?.status).toBe(401);
  });
});

describe("the limiter", () => {
  it("runs at most its size at once, in order", async () => {
    const limiter = new Limiter(3);
    const order: number[] = [];
    const tick = () => new Promise((resolve) => setTimeout(resolve, 2));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        limiter.run(async () => {
          expect(limiter.active).toBeLessThanOrEqual(3);
          await tick();
          order.push(i);
        }),
      ),
    );
    expect(limiter.peak).toBe(3);
    expect(limiter.active).toBe(0);
    expect(order).toHaveLength(20);
    expect(() => new Limiter(0)).toThrow("concurrency must be >= 1: 0");
  });

  it("frees the slot when a task throws", async () => {
    const limiter = new Limiter(1);
    await expect(limiter.run(() => Promise.reject(new Error("x")))).rejects.toThrow("x");
    expect(await limiter.run(async () => 5)).toBe(5);
  });
});

describe("the server code", () => {
  it("never runs sample code itself: no child_process, vm, eval or Function", () => {
    const root = path.join(import.meta.dirname, "../../training/server");
    const sources = [
      ...readdirSync(root).filter((f) => f.endsWith(".ts")),
      "../../cli/serve-reward.ts",
    ];
    for (const file of sources) {
      const text = readFileSync(path.join(root, file), "utf8");
      expect(text, file).not.toMatch(/child_process|node:vm|\beval\(|new Function\(/);
    }
  });
});

describe("serve-reward", () => {
  const run = (...args: string[]) => {
    const program = new Command().exitOverride();
    registerServeRewardCommand(program);
    return program.parseAsync(["node", "tableminds", "serve-reward", ...args]);
  };

  it("refuses to start without a token file, or with an empty one", async () => {
    const empty = path.join(dir, "empty2");
    writeFileSync(empty, "");
    await expect(run("--port", "0", "--token-file", empty)).rejects.toThrow(/is empty/);
    await expect(run("--port", "0", "--token-file", path.join(dir, "no"))).rejects.toThrow(
      /cannot be read/,
    );
    await expect(run("--port", "0")).rejects.toThrow("--token-file is required");
  });

  it("refuses a concurrency below 1 for any role", async () => {
    await expect(run("--port", "0", "--code-concurrency", "0")).rejects.toThrow(
      "--code-concurrency must be >= 1",
    );
    await expect(run("--port", "0", "--answer-concurrency", "-2")).rejects.toThrow(
      "--answer-concurrency must be >= 1",
    );
  });

  it("refuses an unknown preset", async () => {
    await expect(run("--port", "0", "--preset", "best")).rejects.toThrow(
      "--preset must be one of: paper, release",
    );
  });
});

describe("the exports and the server agree", () => {
  it("reads a verl row's ground truth and extra_info as a label, tables and role included", () => {
    const table = {
      id: "table:t",
      name: "t",
      uri: "/artifacts/t.csv",
      sha256: "a".repeat(64),
      rows: 1,
      columns: [{ name: "x", dtype: "int64" }],
    };
    const extra = {
      role: "code",
      qtype: "NumericalReasoning",
      qsubtype: "Aggregation",
      tables: JSON.stringify([table]),
    };
    // As the generated verl module builds it: the plain ground truth, then extra_info's keys.
    const label = parseLabel(JSON.stringify({ reference: "print(1)", ...extra }), 0);
    expect(label).toMatchObject({ role: "code", reference: "print(1)", tables: [table] });
  });
});
