import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  loadResults,
  lockResults,
  type ResultRecord,
  ResultsWriter,
  writeResults,
} from "../../evals/results-file.js";

function record(id: string, score = 1): ResultRecord {
  return {
    id,
    prediction: "42",
    output: "Final Answer: 42",
    score: { id, prediction: "42", parsed: true, metrics: { em: score }, metric: "em", score },
    latencyMs: 10,
    tokens: { prompt: 5, completion: 2 },
    llmCalls: 3,
    attempts: 1,
    error: null,
    finishedAt: "2026-11-23T00:00:00.000Z",
  };
}

const tempFile = () =>
  path.join(mkdtempSync(path.join(os.tmpdir(), "tableminds-results-")), "results.jsonl");

describe("results.jsonl", () => {
  it("reads back what was appended, one whole line per record", () => {
    const file = tempFile();
    const writer = new ResultsWriter(file);
    writer.append(record("a"));
    writer.append(record("b", 0));
    writer.close();
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    const loaded = loadResults(file);
    expect(loaded.repaired).toBeNull();
    expect(loaded.records.map((r) => [r.id, r.score.score])).toEqual([
      ["a", 1],
      ["b", 0],
    ]);
  });

  it("refuses to append a record that is not one", () => {
    const file = tempFile();
    const writer = new ResultsWriter(file);
    expect(() => writer.append({ ...record("a"), latencyMs: -1 })).toThrow();
    writer.close();
    expect(readFileSync(file, "utf8")).toBe("");
  });

  it("moves a torn last line aside and rewrites the file without it", () => {
    const file = tempFile();
    const whole = `${JSON.stringify(record("a"))}\n`;
    const torn = JSON.stringify(record("b")).slice(0, 37);
    writeFileSync(file, whole + torn);
    const loaded = loadResults(file);
    expect(loaded.records.map((r) => r.id)).toEqual(["a"]);
    expect(loaded.repaired?.lines).toBe(1);
    expect(readFileSync(file, "utf8")).toBe(whole);
    const saved = loaded.repaired?.savedTo ?? "";
    expect(path.basename(saved)).toMatch(/^results\.jsonl\.corrupt-/);
    expect(readFileSync(saved, "utf8")).toBe(`${torn}\n`);
    // Appending after the repair gives whole lines again.
    appendFileSync(file, `${JSON.stringify(record("b"))}\n`);
    expect(loadResults(file).records.map((r) => r.id)).toEqual(["a", "b"]);
  });

  it("treats a last record without its newline as torn, and a line that is not a record as corrupt", () => {
    const file = tempFile();
    const bad = JSON.stringify({ id: "x", prediction: "1" });
    writeFileSync(
      file,
      `${JSON.stringify(record("a"))}\n${bad}\n${JSON.stringify(record("c"))}\n${JSON.stringify(record("d"))}`,
    );
    const loaded = loadResults(file);
    expect(loaded.records.map((r) => r.id)).toEqual(["a", "c"]);
    expect(loaded.repaired?.lines).toBe(2);
    expect(
      readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual(["a", "c"]);
  });

  it("leaves the file alone when asked not to repair it", () => {
    const file = tempFile();
    const text = `${JSON.stringify(record("a"))}\n{"id": "b", "pre`;
    writeFileSync(file, text);
    const loaded = loadResults(file, { repair: false });
    expect(loaded.records.map((r) => r.id)).toEqual(["a"]);
    expect(loaded.repaired).toBeNull();
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readdirSync(path.dirname(file))).toEqual(["results.jsonl"]);
  });

  it("counts a question once when its id repeats", () => {
    const file = tempFile();
    writeFileSync(
      file,
      `${JSON.stringify(record("a", 1))}\n${JSON.stringify(record("a", 0))}\n${JSON.stringify(record("b"))}\n`,
    );
    const loaded = loadResults(file);
    expect(loaded.records.map((r) => [r.id, r.score.score])).toEqual([
      ["a", 1],
      ["b", 1],
    ]);
  });

  it("replaces a file whole, and refuses a record that is not one", () => {
    const file = tempFile();
    writeFileSync(file, `${JSON.stringify(record("old"))}\n{"torn`);
    writeResults(file, [record("a"), record("b", 0)]);
    expect(loadResults(file, { repair: false }).records.map((r) => r.id)).toEqual(["a", "b"]);
    expect(readdirSync(path.dirname(file))).toEqual(["results.jsonl"]);
    expect(() => writeResults(file, [{ ...record("c"), latencyMs: -1 }])).toThrow();
    expect(loadResults(file).records.map((r) => r.id)).toEqual(["a", "b"]);
  });

  it("keeps the checker's verdict, and reads files of older versions without one", () => {
    const file = tempFile();
    const verdict = { pass: true, support: "derived", confidence: 0.75, sure: true };
    // A line as the first versions wrote it: no verdict, no cached calls, times or invocation.
    const old = `{"id":"old","prediction":"1","output":"Final Answer: 1","score":{"id":"old","prediction":"1","parsed":true,"metrics":{"em":1},"metric":"em","score":1},"latencyMs":5,"tokens":{"prompt":1,"completion":1},"llmCalls":1,"attempts":0,"error":null,"finishedAt":"2026-01-01T00:00:00.000Z"}`;
    // A newer version's verdict: another support kind and a field this one does not know.
    const newer = JSON.stringify({
      ...record("newer"),
      verdict: { pass: false, support: "estimated", confidence: 0.1, sure: false, by: "rules" },
    });
    writeFileSync(file, `${old}\n${newer}\n`);
    const writer = new ResultsWriter(file);
    writer.append({ ...record("new"), verdict });
    writer.close();
    const loaded = loadResults(file);
    expect(loaded.repaired).toBeNull();
    const [a, b, c] = loaded.records;
    expect(a?.id).toBe("old");
    expect(a).not.toHaveProperty("verdict");
    expect(b?.verdict).toEqual({ pass: false, support: "estimated", confidence: 0.1, sure: false });
    expect(c?.verdict).toEqual(verdict);
    expect(readFileSync(file, "utf8")).toContain(`"verdict":${JSON.stringify(verdict)}`);
  });

  it("refuses a verdict whose confidence is not a probability", () => {
    const writer = new ResultsWriter(tempFile());
    const verdict = { pass: true, support: "derived", confidence: 1.5, sure: true };
    expect(() => writer.append({ ...record("a"), verdict })).toThrow();
    writer.close();
  });

  it("reads an empty or missing file as no results", () => {
    const file = tempFile();
    expect(loadResults(file)).toEqual({ records: [], repaired: null });
    writeFileSync(file, "");
    expect(loadResults(file)).toEqual({ records: [], repaired: null });
  });
});

describe("the results lock", () => {
  it("is refused while another live process holds it, and released after", () => {
    const file = tempFile();
    // The test runner's parent process is alive and is not this process.
    writeFileSync(`${file}.lock`, String(process.ppid));
    expect(() => lockResults(file)).toThrow(`in use by process ${process.ppid}`);
    writeFileSync(`${file}.lock`, "");
    const release = lockResults(file);
    expect(readFileSync(`${file}.lock`, "utf8")).toBe(String(process.pid));
    release();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("is taken over from a process that no longer exists (kill -9)", () => {
    const file = tempFile();
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    expect(gone).toBeGreaterThan(0);
    writeFileSync(`${file}.lock`, String(gone));
    const release = lockResults(file);
    expect(readFileSync(`${file}.lock`, "utf8")).toBe(String(process.pid));
    release();
  });
});
