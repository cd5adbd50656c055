/**
 * Ingest of a large CSV, side by side in one run: our load + profile of a 300,000 x 50 CSV
 * (a fresh process, a fresh store), pandas' read_csv of the same file, the same ingest again
 * in a new process (the stored artifact reused), and the sandbox interpreter's load of the stored
 * table the first time (read_csv, then pickled) and the next (the pickle). Peak RSS is each
 * process's own. Goal: a first ingest within 2x of pandas, a second well under a second.
 *
 *   npm run bench:ingest [rows=300000] [columns=50]
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { findPython } from "../sandbox/python.js";
import { writeWideCsv } from "./support/wide-table.js";

const run = promisify(execFile);
const HERE = import.meta.dirname;
const TSX = path.join(HERE, "../node_modules/.bin/tsx");

interface Measured {
  ms: number;
  rssMb: number;
  note?: string;
}

/** The child: loads and profiles `file` with the store at `home`, prints what it took. */
async function child(file: string): Promise<void> {
  const { loadTables } = await import("../tables/load.js");
  const { profileTable } = await import("../tables/profile.js");
  const started = performance.now();
  const [loaded] = await loadTables({ path: file });
  if (!loaded) throw new Error("no table");
  await profileTable(loaded.table);
  const ms = performance.now() - started;
  const note = `${loaded.table.rows} rows, ${loaded.table.columns.length} columns`;
  const rssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ ms, rssMb, note, uri: loaded.table.uri })}\n`);
}

async function ingest(file: string, home: string): Promise<Measured & { uri: string }> {
  const { stdout } = await run(TSX, [path.join(HERE, "ingest.ts"), "--child", file], {
    env: { ...process.env, TABLEMINDS_HOME: home },
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
}

async function python(python: string, code: string, ...args: string[]): Promise<Measured> {
  const { stdout } = await run(python, ["-c", code, ...args], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim());
}

const READ_CSV = `
import json, resource, sys, time
import pandas as pd
t = time.perf_counter()
frame = pd.read_csv(sys.argv[1])
ms = (time.perf_counter() - t) * 1000
print(json.dumps({"ms": ms, "rssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "note": f"{frame.shape[0]} rows, {frame.shape[1]} columns"}))
`;

const WORKER_LOAD = `
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
import runner
t = time.perf_counter()
frame = runner.load_table_cached(sys.argv[1])
ms = (time.perf_counter() - t) * 1000
print(json.dumps({"ms": ms, "rssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "note": f"{frame.shape[0]} rows, {frame.shape[1]} columns"}))
`;

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 300_000);
  const columns = Number(process.argv[3] ?? 50);
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-ingest-"));
  try {
    const file = path.join(dir, "big.csv");
    await writeWideCsv(file, rows, columns);
    const mb = statSync(file).size / 1024 / 1024;
    const py = (await findPython()).executable;
    const home = path.join(dir, "home");
    const first = await ingest(file, home);
    const pandas = await python(py, READ_CSV, file);
    const second = await ingest(file, home);
    const sandbox = path.join(HERE, "../sandbox");
    const interpreterFirst = await python(py, WORKER_LOAD, first.uri, sandbox);
    const interpreterNext = await python(py, WORKER_LOAD, first.uri, sandbox);
    const line = (label: string, m: Measured) =>
      `${label.padEnd(44)} ${(m.ms / 1000).toFixed(2).padStart(7)} s   peak RSS ${m.rssMb.toFixed(0).padStart(5)} MB   ${m.note ?? ""}`;
    console.log(`ingest of a ${rows} x ${columns} CSV (${mb.toFixed(1)} MB)`);
    console.log(line("tableminds ingest, first (load + profile)", first));
    console.log(line("pandas read_csv, same file", pandas));
    console.log(line("tableminds ingest, again in a new process", second));
    console.log(line("sandbox interpreter load, first (read_csv, pickle)", interpreterFirst));
    console.log(line("sandbox interpreter load, next (pickle)", interpreterNext));
    console.log(
      `first ingest / pandas read_csv: ${(first.ms / pandas.ms).toFixed(2)}x (goal <= 2x); ` +
        `second ingest: ${(second.ms / 1000).toFixed(2)} s`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") {
  await child(process.argv[3] ?? "");
} else {
  await main();
}
