/**
 * The local sandbox, measured side by side in one run (not a test):
 *   1. a warm round trip of a trivial pandas snippet through LocalSandbox.execute
 *      against a cold `python3 -c "import pandas"` spawn (goal: >= 100x faster);
 *   2. the same round trip on a 1,000,000-row table against a 1,000-row one, both
 *      loaded before timing (goal: <= 2x);
 *   3. throughput with one interpreter per core against a single interpreter;
 *   4. what forking ahead saves, and what an empty network namespace would cost per
 *      request instead of once per interpreter;
 *   5. what tracing the result's derivation and lineage (re-runs on perturbed copies of
 *      the table, ExecRequest.lineage, on by default) adds to the warm round trip: for code
 *      not run before, and for code run before on the same table (its trace is reused).
 * Sections 1-4 measure the pool itself, with lineage off.
 *
 *   npx tsx bench/sandbox.ts [warm requests=300]
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TableRef } from "../blackboard/schemas.js";
import { defaultInterpreterCount, LocalSandbox } from "../sandbox/local.js";
import { findPython } from "../sandbox/python.js";
import { putArtifact } from "../storage/artifacts.js";

const WARM = Number(process.argv[2] ?? 300);
const COLD = 15;
const THROUGHPUT_REQUESTS = 400;
const SNIPPET = "print(int(df['n'].sum()))";
/** A gap between requests, as there is between real ones (a model call is seconds). */
const SPACING_MS = 20;

const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-sandbox-"));
process.env.TABLEMINDS_HOME = home;

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function summary(values: number[]): string {
  return `p50 ${quantile(values, 0.5).toFixed(2)} ms, p99 ${quantile(values, 0.99).toFixed(2)} ms`;
}

async function tableOf(rows: number, name: string): Promise<TableRef> {
  const lines = ["n,x,label"];
  for (let i = 0; i < rows; i++) lines.push(`${i % 100},${(i * 0.5).toFixed(1)},row${i % 1000}`);
  const { sha256, uri } = await putArtifact(`${lines.join("\n")}\n`, "csv");
  return {
    id: `table:${name}`,
    name,
    uri,
    sha256,
    rows,
    columns: [
      { name: "n", dtype: "int64" },
      { name: "x", dtype: "float64" },
      { name: "label", dtype: "object" },
    ],
  };
}

async function roundTrip(
  sandbox: LocalSandbox,
  table: TableRef,
  lineage = false,
  code = SNIPPET,
): Promise<number> {
  const started = performance.now();
  const result = await sandbox.execute({ code, tables: [table], lineage });
  const ms = performance.now() - started;
  if (!result.ok) throw new Error(`benchmark request failed: ${JSON.stringify(result.error)}`);
  return ms;
}

function coldSpawn(python: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(python, ["-c", "import pandas"], (error) =>
      error ? reject(error) : resolve(performance.now() - started),
    );
  });
}

/** Loads `tables` into every interpreter of the pool (requests go where their tables are). */
async function warmUp(
  sandbox: LocalSandbox,
  tables: TableRef[],
  interpreters: number,
): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await Promise.all(
      Array.from({ length: interpreters }, () =>
        sandbox.execute({ code: "pass", tables, timeoutMs: 120_000 }),
      ),
    );
  }
}

async function throughput(sandbox: LocalSandbox, table: TableRef, inFlight: number) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < THROUGHPUT_REQUESTS) {
        next += 1;
        await roundTrip(sandbox, table);
      }
    }),
  );
  return THROUGHPUT_REQUESTS / ((performance.now() - started) / 1000);
}

/** A forked child of a pandas process, with and without entering a new network namespace. */
const NETNS_PROBE = `
import ctypes, os, time, pandas
libc = ctypes.CDLL(None, use_errno=True)
def cycle(unshare):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        if unshare and libc.unshare(0x40000000) != 0:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise SystemExit("unshare(CLONE_NEWNET) is not allowed here")
    return (time.perf_counter() - start) * 1000
for unshare in (False, True):
    runs = sorted(cycle(unshare) for _ in range(30))
    print(runs[15])
`;

function netnsCost(python: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(python, ["-c", NETNS_PROBE], (error, stdout) => {
      if (error) return resolve(`not measurable here (${String(error.message).split("\n")[0]})`);
      const [plain, unshared] = stdout.trim().split("\n").map(Number);
      resolve(
        `fork+exit ${plain?.toFixed(2)} ms, with unshare(CLONE_NEWNET) ${unshared?.toFixed(2)} ms: ` +
          `+${((unshared ?? 0) - (plain ?? 0)).toFixed(2)} ms a request if done per child; ` +
          "done once per interpreter at start instead",
      );
    });
  });
}

async function main(): Promise<void> {
  const python = (await findPython()).executable;
  const cores = defaultInterpreterCount();
  console.log(`local sandbox benchmark: ${python}, ${cores} core(s), ${os.cpus()[0]?.model ?? ""}`);

  const small = await tableOf(1_000, "small");
  const tiny = await tableOf(20, "tiny");
  const large = await tableOf(1_000_000, "large");

  const pool = await LocalSandbox.start({ interpreters: cores });
  const single = await LocalSandbox.start({ interpreters: 1 });
  const noForkAhead = await LocalSandbox.start({ interpreters: cores, forkAhead: false });
  try {
    console.log("loading tables into every interpreter ...");
    await warmUp(pool, [small], cores);
    await warmUp(pool, [large], cores);
    await warmUp(single, [small], 1);
    await warmUp(noForkAhead, [small], cores);

    // 1. warm round trips (back to back, and spaced as real requests are) against
    // cold spawns, interleaved.
    const backToBack: number[] = [];
    const spaced: number[] = [];
    const cold: number[] = [];
    const perCold = Math.ceil(WARM / COLD);
    for (let i = 0; i < COLD; i++) {
      cold.push(await coldSpawn(python));
      for (let j = 0; j < perCold; j++) backToBack.push(await roundTrip(pool, small));
      for (let j = 0; j < perCold / 3; j++) {
        await pause(SPACING_MS);
        spaced.push(await roundTrip(pool, small));
      }
    }
    const ratio = (q: number, warm: number[]) => (quantile(cold, q) / quantile(warm, q)).toFixed(0);
    console.log("\n1. warm round trip vs cold spawn (goal >= 100x)");
    console.log(`   cold python -c "import pandas" (${cold.length}): ${summary(cold)}`);
    console.log(`   warm, back to back (${backToBack.length}): ${summary(backToBack)}`);
    console.log(`   warm, ${SPACING_MS} ms apart (${spaced.length}): ${summary(spaced)}`);
    console.log(
      `   ratio back to back: p50 ${ratio(0.5, backToBack)}x, p99 ${ratio(0.99, backToBack)}x; ` +
        `${SPACING_MS} ms apart: p50 ${ratio(0.5, spaced)}x, p99 ${ratio(0.99, spaced)}x`,
    );
    console.log(
      `   warm p50 ${quantile(backToBack, 0.5).toFixed(2)} ms vs cold spawn p50 ` +
        `${quantile(cold, 0.5).toFixed(2)} ms: ${ratio(0.5, backToBack)}x (goal >= 100x)`,
    );

    // 2. a large table against a small one, alternating.
    const withSmall: number[] = [];
    const withLarge: number[] = [];
    for (let i = 0; i < WARM / 2; i++) {
      withSmall.push(await roundTrip(pool, small));
      withLarge.push(await roundTrip(pool, large));
    }
    console.log("\n2. per-request cost, 1,000,000 rows vs 1,000 rows (goal <= 2x)");
    console.log(`   1,000 rows:     ${summary(withSmall)}`);
    console.log(`   1,000,000 rows: ${summary(withLarge)}`);
    console.log(
      `   ratio: p50 ${(quantile(withLarge, 0.5) / quantile(withSmall, 0.5)).toFixed(2)}x`,
    );

    // 3. throughput, each pool kept busy; measured twice, alternately.
    const rates = { pool: [] as number[], single: [] as number[] };
    for (let round = 0; round < 2; round++) {
      rates.single.push(await throughput(single, small, 2));
      rates.pool.push(await throughput(pool, small, 2 * cores));
    }
    const best = (values: number[]) => Math.max(...values);
    console.log(`\n3. throughput (${THROUGHPUT_REQUESTS} trivial requests, best of 2)`);
    console.log(`   1 interpreter:          ${best(rates.single).toFixed(0)} requests/s`);
    console.log(`   ${cores} interpreter(s):       ${best(rates.pool).toFixed(0)} requests/s`);
    console.log(`   ratio: ${(best(rates.pool) / best(rates.single)).toFixed(2)}x`);

    // 4. what the design choices are worth.
    const ahead: number[] = [];
    const notAhead: number[] = [];
    for (let i = 0; i < WARM / 3; i++) {
      await pause(SPACING_MS);
      ahead.push(await roundTrip(pool, small));
      await pause(SPACING_MS);
      notAhead.push(await roundTrip(noForkAhead, small));
    }
    console.log("\n4. design choices");
    console.log(`   ${SPACING_MS} ms apart, fork ahead:     ${summary(ahead)}`);
    console.log(`   ${SPACING_MS} ms apart, fork on demand: ${summary(notAhead)}`);
    console.log(`   network namespace: ${await netnsCost(python)}`);
    const { info } = await pool.describe();
    const active = Object.entries(info.protections).filter(([, on]) => on);
    console.log(`   protections active: ${active.map(([name]) => name).join(", ")}`);

    // 5. lineage on against off, interleaved, spaced as real requests are: on the
    // 1,000-row table (derivation and columns traced) and on a 20-row one (rows too).
    await warmUp(pool, [tiny], cores);
    console.log("\n5. the result's lineage traced (the default) vs lineage: false");
    for (const [label, table] of [
      ["1,000 rows", small],
      ["20 rows   ", tiny],
    ] as const) {
      const on: number[] = [];
      const off: number[] = [];
      const seen: number[] = [];
      for (let i = 0; i < WARM / 3; i++) {
        await pause(SPACING_MS);
        off.push(await roundTrip(pool, table, false));
        // A code not run before (a comment of its own), so no trace of it is known.
        await pause(SPACING_MS);
        on.push(await roundTrip(pool, table, true, `${SNIPPET}  # ${label.trim()} ${i}`));
        // The same code each time, as rollouts and plans that reach one code run it.
        await pause(SPACING_MS);
        seen.push(await roundTrip(pool, table, true));
      }
      console.log(`   ${label}, lineage off: ${summary(off)}`);
      console.log(`   ${label}, lineage on:  ${summary(on)}`);
      console.log(`   ${label}, lineage on, seen before: ${summary(seen)}`);
      console.log(
        `   ${label}, ratio on/off: p50 ${(quantile(on, 0.5) / quantile(off, 0.5)).toFixed(2)}x, ` +
          `p99 ${(quantile(on, 0.99) / quantile(off, 0.99)).toFixed(2)}x`,
      );
    }
  } finally {
    await Promise.all([pool.close(), single.close(), noForkAhead.close()]);
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
