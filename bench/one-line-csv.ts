/**
 * One-line CSVs (issue 23, item 6): a 26 MB file that is one line took 2.1 GB when asked about.
 * Each file is loaded and then put in a prompt's table context (what `ask` does before the first
 * model call) in a fresh process, and its peak RSS is set against the file's size: "above start"
 * subtracts the RSS before loading, "ratio" divides that by the file's size. With the line
 * limit (the default, 8 MB) the one-line files are refused; `--raised` also runs each with the
 * limit at 64 MB (its most), about the reading as it was. A clean CSV of the same size is the yardstick. The
 * files are written into a temporary directory, removed at the end.
 *
 *   npx tsx bench/one-line-csv.ts [sizeMb=26] [--raised] [timeLimitSeconds=180]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const HERE = import.meta.filename;
const MiB = 1024 * 1024;

// --- the files ------------------------------------------------------------------------------

function names(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const name = `c${i}`;
    parts.push(name);
    n += name.length + 1;
  }
  return parts.join(",");
}

function cleanRows(bytes: number): string {
  const lines = ["id,name,score"];
  for (let i = 0, n = 0; n < bytes; i++) {
    const line = `${i},name ${i % 977},${(i * 0.37).toFixed(2)}`;
    lines.push(line);
    n += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

const CASES: [label: string, file: string, make: (bytes: number) => string][] = [
  ["header only, no line break", "header-only.csv", names],
  ["no line break at all", "no-break.csv", (bytes) => "y".repeat(bytes)],
  ["header, then one huge line", "huge-row.csv", (bytes) => `a,b,c\n${names(bytes)}\n`],
  [
    "clean rows, huge last line",
    "late-line.csv",
    (bytes) => `${cleanRows(64 * 1024)}1,${"z".repeat(bytes)},2\n`,
  ],
  ["clean CSV (yardstick)", "clean.csv", cleanRows],
];

// --- one file, in a child process -------------------------------------------------------------

interface Reading {
  ms: number;
  startMb: number;
  peakMb: number;
  outcome: string;
}

async function child(file: string): Promise<void> {
  const { loadTables } = await import("../tables/load.js");
  const { tableContexts } = await import("../tables/context.js");
  const startMb = process.memoryUsage().rss / MiB;
  const started = performance.now();
  let outcome: string;
  try {
    const tables = (await loadTables({ path: file })).map((t) => t.table);
    await tableContexts(tables, "How many rows?", { budgetTokens: 4000, sampleRows: 5 });
    outcome = `loaded: ${tables.map((t) => `${t.rows} rows x ${t.columns.length} columns`).join(", ")}`;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const lines = message.split("\n").length;
    outcome = `${lines > 1 ? `[${lines} lines] ` : ""}${message.split("\n")[0]?.replace(`cannot load table ${file}: `, "")}`;
  }
  const ms = performance.now() - started;
  const peakMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ ms, startMb, peakMb, outcome })}\n`);
}

function run(file: string, env: NodeJS.ProcessEnv, limitMs: number): Promise<Reading> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const proc = spawn(process.execPath, ["--import", "tsx", HERE, "--child", file], {
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    let stdout = "";
    proc.stdout.on("data", (d) => {
      stdout += d;
    });
    proc.stderr.resume();
    const timer = setTimeout(() => proc.kill("SIGKILL"), limitMs);
    proc.on("error", reject);
    proc.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split("\n").at(-1) ?? "";
      if (last.startsWith("{")) resolve(JSON.parse(last) as Reading);
      else {
        const ms = performance.now() - started;
        resolve({ ms, startMb: 0, peakMb: 0, outcome: `died (${signal ?? `exit ${code}`})` });
      }
    });
  });
}

// --- the table ----------------------------------------------------------------------------------

function row(label: string, size: number, r: Reading): string {
  const above = r.peakMb - r.startMb;
  const ratio = r.startMb > 0 ? (above / (size / MiB)).toFixed(2) : "-";
  const cells = [
    label.padEnd(28),
    `${(size / MiB).toFixed(1)} MB`.padStart(9),
    `${(r.ms / 1000).toFixed(2)} s`.padStart(9),
    `${r.peakMb.toFixed(0)} MB`.padStart(8),
    `${above.toFixed(0)} MB`.padStart(8),
    ratio.padStart(6),
  ];
  return `${cells.join(" ")}  ${r.outcome.slice(0, 110)}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const raised = args.includes("--raised");
  const [sizeMb = 26, limitSeconds = 180] = args.filter((a) => !a.startsWith("--")).map(Number);
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-bench-one-line-"));
  try {
    console.log(
      `${"file".padEnd(28)} ${"size".padStart(9)} ${"time".padStart(9)} ${"peak".padStart(8)} ${"above".padStart(8)} ${"ratio".padStart(6)}  outcome`,
    );
    for (const [label, name, make] of CASES) {
      const file = path.join(dir, name);
      writeFileSync(file, make(sizeMb * MiB));
      const size = statSync(file).size;
      const settings = raised
        ? [
            ["limit 8 MB", ""],
            ["limit 64 MB", String(64 * MiB)],
          ]
        : [["", ""]];
      for (const [what, limit] of settings) {
        const home = mkdtempSync(path.join(dir, "home-"));
        const env = { ...process.env, TABLEMINDS_HOME: home, TABLEMINDS_MAX_LINE_BYTES: limit };
        const reading = await run(file, env, (limitSeconds ?? 180) * 1000);
        console.log(row(what ? `${label}, ${what}` : label, size, reading));
        rmSync(home, { recursive: true, force: true });
      }
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3] ?? "");
else await main();
