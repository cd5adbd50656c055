import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readVerlParquet } from "../../training/exports/parquet.js";
import { EXPORT_FILES } from "../../training/exports/write.js";
import { ROOT } from "../support/cli.js";
import { stubEnv } from "../support/env.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";
import { tablebenchTeam } from "../support/tablebench-team.js";

const SAMPLE = path.resolve(
  import.meta.dirname,
  "../fixtures/datasets/tablebench/tablebench_sample40.jsonl",
);
const BIN = path.join(ROOT, "cli/bin.js");

function ids(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { id?: string; questionId?: string }).id ?? "");
}

/** Runs `mine` in a child process; with `killAfter`, kill -9 once that many questions finished. */
function runMine(args: string[], env: Record<string, string | undefined>, killAfter?: number) {
  const child = spawn(process.execPath, [BIN, "mine", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  let seen = 0;
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
    seen += (String(d).match(/^\[\d+\/\d+\]/gm) ?? []).length;
    if (killAfter !== undefined && seen >= killAfter) child.kill("SIGKILL");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  return new Promise<{
    code: number | null;
    signal: string | null;
    stderr: string;
    stdout: string;
  }>((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr, stdout });
    }),
  );
}

describe("mine on TableBench questions with the stub model", () => {
  let stub: StubServer;
  let env: Record<string, string | undefined>;
  const out = mkdtempSync(path.join(os.tmpdir(), "tableminds-mine-"));
  const args = [
    "--dataset",
    "tablebench",
    "--data",
    SAMPLE,
    "--stage",
    "coder",
    "--out",
    out,
    "--limit",
    "3",
    "--concurrency",
    "1",
    "--held-out",
    "1",
    "--search-budget",
    "9",
    "--max-code-attempts",
    "1",
  ];

  beforeAll(async () => {
    stub = await startStubOpenAI({ respond: tablebenchTeam });
    env = stubEnv(stub.url);
  });
  afterAll(async () => {
    await stub?.close();
  });

  it("is killed after a question, resumes, and loses or repeats nothing", async () => {
    const killed = await runMine(args, env, 1);
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    const before = ids(path.join(out, "results.jsonl"));
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.length).toBeLessThan(3);

    const resumed = await runMine(args, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`${3 - before.length} to run, ${before.length} already done`);
    const results = ids(path.join(out, "results.jsonl"));
    expect(results).toHaveLength(3);
    expect(new Set(results).size).toBe(3);
    const mined = ids(path.join(out, "mined.jsonl"));
    expect([...mined].sort()).toEqual([...results].sort());

    // Every trajectory: one plan, four codes (the budget), an answer each; turns 0..2.
    const turns = readFileSync(path.join(out, EXPORT_FILES.trajectories), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { questionId: string; trajectory: string; turn: number });
    expect(new Set(turns.map((t) => t.questionId))).toEqual(new Set(results));
    const keys = turns.map((t) => `${t.questionId} ${t.trajectory} ${t.turn}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(turns).toHaveLength(3 * 4 * 3);

    // The split covers every question once; verl rows read back.
    const gold = readFileSync(path.join(out, EXPORT_FILES.pseudoGold), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { questionId: string; split: string });
    expect(gold.filter((g) => g.split === "test")).toHaveLength(1);
    const rows = [
      ...(await readVerlParquet(path.join(out, EXPORT_FILES.verl("planner", "train")))),
      ...(await readVerlParquet(path.join(out, EXPORT_FILES.verl("planner", "test")))),
    ];
    for (const row of rows) expect(row.ability).toBe("planning");

    // A third run finds everything done and rewrites the same exports.
    const again = await runMine(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(ids(path.join(out, "mined.jsonl"))).toEqual(mined);
  }, 600_000);
});
