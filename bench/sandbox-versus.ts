/**
 * This checkout's warm local sandbox against another checkout's, side by side in one run (not
 * a test): both pools start in this process, and their requests alternate, so both see the same
 * machine load. For "what did the protections cost": check out the earlier commit in a worktree
 * (`git worktree add /tmp/before <rev>`) and name it here.
 *
 *   npx tsx bench/sandbox-versus.ts <other checkout> [requests per side=300]
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { TableRef } from "../blackboard/schemas.js";
import { LocalSandbox } from "../sandbox/local.js";
import { putArtifact } from "../storage/artifacts.js";

const other = process.argv[2];
const REQUESTS = Number(process.argv[3] ?? 300);
const SNIPPET = "print(int(df['n'].sum()))";
/** A gap between requests, as there is between real ones. */
const SPACING_MS = 20;

if (!other) {
  process.stderr.write("usage: npx tsx bench/sandbox-versus.ts <other checkout> [requests]\n");
  process.exit(2);
}

interface Pool {
  execute(request: { code: string; tables: TableRef[]; lineage?: boolean }): Promise<{
    ok: boolean;
  }>;
  close(): Promise<void>;
}
// Checkouts before the rename call the pool's processes `workers`.
type PoolClass = { start(options: { interpreters: number; workers: number }): Promise<Pool> };

const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-versus-"));
process.env.TABLEMINDS_HOME = home;

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function table(): Promise<TableRef> {
  const lines = ["n,x"];
  for (let i = 0; i < 1000; i++) lines.push(`${i % 100},${i * 0.5}`);
  const { sha256, uri } = await putArtifact(`${lines.join("\n")}\n`, "csv");
  const columns = [
    { name: "n", dtype: "int64" },
    { name: "x", dtype: "float64" },
  ];
  return { id: "table:t", name: "t", uri, sha256, rows: 1000, columns };
}

async function timed(pool: Pool, t: TableRef): Promise<number> {
  const started = performance.now();
  const result = await pool.execute({ code: SNIPPET, tables: [t], lineage: false });
  if (!result.ok) throw new Error(`a request failed: ${JSON.stringify(result)}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const module = (await import(
    pathToFileURL(path.resolve(other as string, "sandbox/local.ts")).href
  )) as { LocalSandbox: PoolClass };
  const t = await table();
  const here = (await LocalSandbox.start({ interpreters: 1 })) as unknown as Pool;
  const there = await module.LocalSandbox.start({ interpreters: 1, workers: 1 });
  try {
    for (let i = 0; i < 20; i++) {
      await timed(here, t);
      await timed(there, t);
    }
    const times = { here: [] as number[], there: [] as number[] };
    for (let i = 0; i < REQUESTS; i++) {
      // Alternate which goes first, so neither always follows the other.
      const order = i % 2 === 0 ? (["here", "there"] as const) : (["there", "here"] as const);
      for (const side of order) {
        times[side].push(await timed(side === "here" ? here : there, t));
        await new Promise((r) => setTimeout(r, SPACING_MS));
      }
    }
    const row = (name: string, values: number[]) =>
      `${name.padEnd(26)} p50 ${quantile(values, 0.5).toFixed(2)} ms  p90 ${quantile(values, 0.9).toFixed(2)} ms  p99 ${quantile(values, 0.99).toFixed(2)} ms`;
    console.log(`warm round trip, ${REQUESTS} requests each, alternating, one interpreter each`);
    console.log(row("this checkout", times.here));
    console.log(row(path.basename(path.resolve(other as string)), times.there));
    const added = quantile(times.here, 0.5) - quantile(times.there, 0.5);
    console.log(
      `p50 difference: ${added >= 0 ? "+" : ""}${added.toFixed(2)} ms a request (ratio ${(quantile(times.here, 0.5) / quantile(times.there, 0.5)).toFixed(3)})`,
    );
  } finally {
    await here.close();
    await there.close();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
