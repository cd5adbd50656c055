import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { warningsLog } from "../../cli/warnings.js";
import { currentQuestion } from "../../evals/question-scope.js";
import { type EvalGraph, runEvaluation } from "../../evals/runner.js";
import type { EvalExample, Scorer } from "../../evals/types.js";

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), "tableminds-warnings-"));
const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);

describe("a run's warnings.log", () => {
  it("tags each line with its question and writes a line once, across resumed runs too", () => {
    const file = path.join(tempDir(), "warnings.log");
    writeFileSync(file, "2024-01-01T00:00:00.000Z tableminds: warning: from an older version\n");
    const log = warningsLog(file);
    expect(log("tableminds: warning: column 4 repeats the name", "q1")).toBe(true);
    expect(log("tableminds: warning: column 4 repeats the name", "q1")).toBe(false);
    expect(log("tableminds: warning: column 4 repeats the name", "q2")).toBe(true);
    expect(log("tableminds: warning: not of a question")).toBe(true);
    // A resumed run reads what is there: q1 ran again and warned again.
    const resumed = warningsLog(file);
    expect(resumed("tableminds: warning: column 4 repeats the name", "q1")).toBe(false);
    expect(resumed("tableminds: warning: from an older version")).toBe(false);
    expect(lines(file).map((l) => l.replace(/^\S+ /, ""))).toEqual([
      "tableminds: warning: from an older version",
      "[q1] tableminds: warning: column 4 repeats the name",
      "[q2] tableminds: warning: column 4 repeats the name",
      "tableminds: warning: not of a question",
    ]);
  });
});

describe("the question a warning is raised in", () => {
  const seen: [string, string | undefined][] = [];
  const listener = (warning: Error) => seen.push([warning.message, currentQuestion()]);
  afterEach(() => {
    process.removeListener("warning", listener);
  });

  it("is known to a warning listener while the runner runs it, concurrently", async () => {
    process.on("warning", listener);
    const examples: EvalExample[] = [0, 1, 2, 3].map((i) => ({
      id: `q${i}`,
      dataset: "fake",
      question: String(i),
      tables: [{ columns: ["n"], data: [[i]] }],
      gold: "",
    }));
    const graph: EvalGraph = {
      async invoke(input) {
        // Later questions warn first: the tag must follow the question, not the order.
        await new Promise((resolve) => setTimeout(resolve, 20 - 5 * Number(input.question)));
        process.emitWarning(`warning of ${String(input.question)}`, "TablemindsWarning");
        return { answer: { final: "x" } };
      },
    };
    const scorer: Scorer = {
      dataset: "fake",
      score: async (example) => ({
        id: example.id,
        prediction: "x",
        parsed: true,
        metrics: {},
        metric: "em",
        score: 0,
      }),
      summarize: () => {
        throw new Error("not used");
      },
    };
    await runEvaluation({
      examples,
      scorer,
      graph: "fake_graph",
      runnable: graph,
      outDir: tempDir(),
      concurrency: 4,
      timeoutMs: 5_000,
      retries: 0,
      context: {},
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.sort()).toEqual([
      ["warning of 0", "q0"],
      ["warning of 1", "q1"],
      ["warning of 2", "q2"],
      ["warning of 3", "q3"],
    ]);
    expect(currentQuestion()).toBeUndefined();
  });
});
