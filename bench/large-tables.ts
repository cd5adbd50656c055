/**
 * Large tables through the whole `ask` command, side by side in one run (not a test), with a
 * zero-latency stub model in this process:
 *
 * - a 1,000,000 x 50 table vs a 1,000 x 50 one: time from the command's start to its first model
 *   call (ingest, profiling and indexing), and the bytes its checkpoints hold (goal: at most
 *   1.1x: nothing in the state grows with the table);
 * - a 300,000 x 50 CSV: `ask`'s wall time vs pandas' read_csv of the same file (goal: at most
 *   2x), and each one's peak memory.
 *
 *   npm run bench:large-tables [bigRows=1000000] [askRows=300000]
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { answerFromOutput } from "../tests/support/scripts.js";
import { type StubReply, type StubRequest, startStubOpenAI } from "../tests/support/stub-openai.js";
import { findPython } from "../tools/sandbox/python.js";
import { writeWideCsv } from "./support/wide-table.js";

const run = promisify(execFile);
const BIG_ROWS = Number(process.argv[2] ?? 1_000_000);
const ASK_ROWS = Number(process.argv[3] ?? 300_000);
const BIN = path.resolve(import.meta.dirname, "../cli/bin.js");
const QUESTION = "How many rows does the table have?";

/** Runs a command under Python, which reports its wall time and its children's peak RSS. */
const MEASURED = `
import json, resource, subprocess, sys, time
t = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
ms = (time.perf_counter() - t) * 1000
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"ms": ms, "rssMb": rss, "code": done.returncode, "stderr": done.stderr[-2000:]}))
`;

const READ_CSV = `
import json, resource, sys, time
import pandas as pd
t = time.perf_counter()
frame = pd.read_csv(sys.argv[1])
ms = (time.perf_counter() - t) * 1000
print(json.dumps({"ms": ms, "rssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "code": 0, "stderr": ""}))
`;

interface Measured {
  ms: number;
  rssMb: number;
  code: number;
  stderr: string;
}

async function python(python: string, code: string, args: string[], env: NodeJS.ProcessEnv) {
  const { stdout } = await run(python, ["-c", code, ...args], { env, maxBuffer: 1 << 24 });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Measured;
}

/** Checkpoint bytes a thread left: every checkpoint, its metadata and its pending writes. */
function checkpointBytes(home: string): number {
  const db = new Database(path.join(home, "checkpoints.sqlite"), { readonly: true });
  try {
    const one = (sql: string) => Number((db.prepare(sql).get() as { n: number | null }).n ?? 0);
    return (
      one("SELECT sum(length(checkpoint) + length(metadata)) AS n FROM checkpoints") +
      one("SELECT sum(length(value)) AS n FROM writes")
    );
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-large-"));
  const py = (await findPython()).executable;
  let firstCall: number | null = null;
  const respond = (req: StubRequest): StubReply => {
    firstCall ??= performance.now();
    if (req.role === "planner") return "<plan>\n1. Count the rows and print the count.\n</plan>";
    if (req.role === "coder") return "```python\nprint(len(df))\n```";
    return answerFromOutput(req);
  };
  const stub = await startStubOpenAI({ respond, idleTimeoutMs: 3_600_000 });
  try {
    const ask = async (file: string, name: string, again?: string) => {
      const home = again ?? mkdtempSync(path.join(dir, `home-${name}-`));
      const env = {
        ...process.env,
        OPENAI_BASE_URL: stub.url,
        OPENAI_API_KEY: "bench",
        TABLEMINDS_MODEL: "stub-model",
        TABLEMINDS_HOME: home,
      };
      firstCall = null;
      const started = performance.now();
      const args = [
        process.execPath,
        BIN,
        "ask",
        file,
        QUESTION,
        "--json",
        "--quiet",
        "--thread",
        again ? "t2" : "t1",
      ];
      const measured = await python(py, MEASURED, args, env);
      if (measured.code !== 0) throw new Error(`ask over ${name} failed: ${measured.stderr}`);
      const toFirstCall = (firstCall ?? Number.NaN) - started;
      return { ...measured, toFirstCall, checkpoint: checkpointBytes(home), home };
    };

    const write = async (name: string, rows: number) => {
      const file = path.join(dir, `${name}.csv`);
      const started = performance.now();
      await writeWideCsv(file, rows, 50);
      const mb = statSync(file).size / 1024 / 1024;
      console.log(
        `wrote ${name}.csv: ${rows} x 50, ${mb.toFixed(0)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      return file;
    };
    const small = await write("small", 1_000);
    const big = await write("big", BIG_ROWS);
    const mid = await write("mid", ASK_ROWS);

    const smallRun = await ask(small, "small");
    const bigRun = await ask(big, "big");
    // The same table again, in a new process: the artifact, its cell index and the sandbox's
    // copy are reused by hash.
    const bigAgain = await ask(big, "big", bigRun.home);
    const pandas = await python(py, READ_CSV, [mid], process.env);
    const midRun = await ask(mid, "mid");

    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    console.log(
      `\n                        ${"1000 x 50".padStart(12)} ${`${BIG_ROWS} x 50`.padStart(14)}  ratio`,
    );
    console.log(
      `to first model call     ${s(smallRun.toFirstCall).padStart(12)} ${s(bigRun.toFirstCall).padStart(14)}  ${(bigRun.toFirstCall / smallRun.toFirstCall).toFixed(1)}x`,
    );
    console.log(
      `checkpoint bytes        ${kb(smallRun.checkpoint).padStart(12)} ${kb(bigRun.checkpoint).padStart(14)}  ${(bigRun.checkpoint / smallRun.checkpoint).toFixed(2)}x (goal <= 1.1x)`,
    );
    console.log(
      `ask wall time           ${s(smallRun.ms).padStart(12)} ${s(bigRun.ms).padStart(14)}  ${(bigRun.ms / smallRun.ms).toFixed(1)}x`,
    );
    console.log(
      `ask again, same table   ${"".padStart(12)} ${s(bigAgain.ms).padStart(14)}  (first model call after ${s(bigAgain.toFirstCall)})`,
    );
    console.log(
      `ask peak RSS            ${`${smallRun.rssMb.toFixed(0)} MB`.padStart(12)} ${`${bigRun.rssMb.toFixed(0)} MB`.padStart(14)}`,
    );
    console.log(`\n${ASK_ROWS} x 50 CSV     ask (stub, 0 ms)   pandas read_csv   ratio`);
    console.log(
      `wall time            ${s(midRun.ms).padStart(14)}   ${s(pandas.ms).padStart(15)}   ${(midRun.ms / pandas.ms).toFixed(1)}x (goal <= 2x)`,
    );
    console.log(
      `peak RSS             ${`${midRun.rssMb.toFixed(0)} MB`.padStart(14)}   ${`${pandas.rssMb.toFixed(0)} MB`.padStart(15)}`,
    );
    console.log(`(ask's first model call came ${s(midRun.toFirstCall)} after its start)`);
  } finally {
    await stub.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
