import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findPython } from "../../sandbox/python.js";
import { RunnerResultSchema } from "../../sandbox/results.js";

describe("runner.py as a one-shot command", () => {
  const RUNNER = fileURLToPath(new URL("../../sandbox/runner.py", import.meta.url));

  async function runOnce(request: object, dir: string): Promise<{ code: number; result: unknown }> {
    const requestPath = path.join(dir, "request.json");
    const resultPath = path.join(dir, "result.json");
    writeFileSync(requestPath, JSON.stringify(request));
    const python = (await findPython()).executable;
    const code = await new Promise<number>((resolve) => {
      execFile(python, [RUNNER, requestPath, resultPath], { timeout: 20_000 }, (error) =>
        resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
      );
    });
    const result = existsSync(resultPath) ? JSON.parse(await readFile(resultPath, "utf8")) : null;
    return { code, result };
  }

  it("runs a request file and writes the documented result file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-runner-"));
    try {
      const scratch = path.join(dir, "scratch");
      mkdirSync(scratch);
      writeFileSync(path.join(dir, "sales.csv"), "region,amount\nnorth,5\nsouth,7\nnorth,1\n");
      const { code, result } = await runOnce(
        {
          code: "total = int(df.amount.sum())\nprint(total)\nby_region = df.groupby('region').amount.sum()\nraise ValueError('late')",
          tables: [{ name: "sales", path: path.join(dir, "sales.csv") }],
          timeout_ms: 5_000,
          output_bytes: 1_000,
          scratch,
        },
        dir,
      );
      expect(code).toBe(0);
      expect(result).toEqual({
        ok: false,
        stdout: "13\n",
        stderr: "",
        error: { type: "ValueError", message: "late", line: 4 },
        spans: [{ line: 2, start: 0, end: 3 }],
        truncated: false,
        tables: [
          {
            variable: "by_region",
            line: 3,
            file: "_tableminds_table_0.csv",
            rows: 2,
            columns: [
              { name: "region", dtype: "object" },
              { name: "amount", dtype: "int64" },
            ],
            // Grouped: its rows are no source rows, its columns are.
            lineage: [{ table: "sales", rows: null, columns: ["region", "amount"] }],
          },
        ],
        // A failed run has no result.
        result: null,
      });
      // The one wire form of a result, as both backends read it.
      expect(RunnerResultSchema.parse(result)).toEqual(result);
      expect(await readFile(path.join(scratch, "_tableminds_table_0.csv"), "utf8")).toBe(
        "region,amount\nnorth,6\nsouth,7\n",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the code's result with its derivation and lineage", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-runner-"));
    try {
      const scratch = path.join(dir, "scratch");
      mkdirSync(scratch);
      writeFileSync(path.join(dir, "sales.csv"), "region,amount\nnorth,5\nsouth,7\nnorth,1\n");
      const request = {
        code: "north = df[df.region == 'north']\nresult = int(north.amount.sum())",
        tables: [{ name: "sales", path: path.join(dir, "sales.csv") }],
        timeout_ms: 5_000,
        output_bytes: 1_000,
        scratch,
      };
      const traced = await runOnce(request, dir);
      expect(traced.code).toBe(0);
      expect((traced.result as { result: unknown }).result).toEqual({
        from: "declared",
        kind: "scalar",
        values: [6],
        labels: [],
        text: "6",
        line: 2,
        derived: "yes",
        derivation: "changed when the tables' values were perturbed: computed from the table",
        lineage: [{ table: "sales", rows: [0, 2], columns: ["region", "amount"] }],
      });
      expect(RunnerResultSchema.parse(traced.result)).toEqual(traced.result);
      const untraced = await runOnce({ ...request, lineage: false }, dir);
      expect((untraced.result as { result: { derived: string } }).result.derived).toBe("unknown");
      const bad = await runOnce({ ...request, lineage: "yes" }, dir);
      expect(bad.code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits with 2 and writes nothing for a request it cannot read", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-runner-"));
    try {
      const { code, result } = await runOnce({ code: 42 }, dir);
      expect(code).toBe(2);
      expect(result).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
