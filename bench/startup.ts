/**
 * Start-up of the command as the npm package runs it (compiled dist/, no TypeScript loader),
 * side by side in one run:
 *
 * 1. `tableminds --help` wall time against `node -e 0` (goal: at most 3x), for the package's
 *    bin and the checkout's (which runs the checkout build of `npm run setup`, rebuilt here).
 * 2. A quick answer: `tableminds ask` on the medals example against a zero-latency stub model
 *    in its own process, its whole wall time against its floor, a node start (`node -e 0`) plus
 *    a cold `import pandas` by the sandbox's Python, each timed on its own (goal: at most 3x);
 *    the same from the checkout (the README's command), on its build and on its sources (tsx).
 * 3. The same command's wall time minus the time its model calls took, against a plain
 *    Node script that imports the same graph, invokes it once and exits (goal: at most 1.5x).
 *    Both are whole processes, so both pay Node's start, the module loading and the sandbox's
 *    start; what the command adds is its own layer (flags, streaming, rendering).
 *
 *   npm run bench:startup -- [runs=9] [--no-build] [--dist <dir>]
 *
 * dist/ is rebuilt first (scripts/build.mjs) unless --no-build; --dist measures another
 * compiled tree (e.g. a copy with a change backed out).
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { findPython } from "../sandbox/python.js";
import { MEDALS_QUESTION } from "../tests/support/scripts.js";
import { spawnStub } from "./spawn-stub.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 9);
const DIST = path.resolve(option("--dist") ?? path.join(ROOT, "dist"));
const TABLE = path.join(ROOT, "examples/olympics_2020_medals.csv");

interface Timed {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process to its end; its wall time from spawn to exit. */
function timed(command: string, argv: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<Timed>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ ms: performance.now() - started, code, stdout, stderr }));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Runs each case once per round, in turn, so drift on a shared machine hits all alike. */
async function alternate<K extends string>(
  cases: Record<K, () => Promise<number>>,
  runs: number,
): Promise<Record<K, number>> {
  const names = Object.keys(cases) as K[];
  for (const name of names) await cases[name](); // warm the file cache
  const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < runs; i += 1) {
    for (const name of names) samples[name].push(await cases[name]());
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n])])) as Record<K, number>;
}

/** The package's layout: cli/bin.js with dist/ beside it and no cli/main.ts. */
function packageLayout(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-startup-"));
  mkdirSync(path.join(dir, "cli"));
  copyFileSync(path.join(ROOT, "cli/bin.js"), path.join(dir, "cli/bin.js"));
  symlinkSync(DIST, path.join(dir, "dist"), "dir");
  return dir;
}

const must = (run: Timed, what: string) => {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}: ${run.stderr.slice(-2000)}`);
  return run;
};

if (!args.includes("--no-build") && !option("--dist")) {
  const build = spawnSync(process.execPath, [path.join(ROOT, "scripts/build.mjs")], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (build.status !== 0) throw new Error("the build failed");
}

const layout = packageLayout();
const repoBin = path.join(ROOT, "cli/bin.js");
// The checkout's own build, as `npm run setup` makes it: the README's command runs that.
const checkoutBuild = spawnSync(
  process.execPath,
  [path.join(ROOT, "scripts/build.mjs"), "--checkout"],
  {
    stdio: ["ignore", "inherit", "inherit"],
  },
);
if (checkoutBuild.status !== 0) throw new Error("the checkout build failed");
const packagedBin = path.join(layout, "cli/bin.js");
const node = process.execPath;

// 1. --help
const help = await alternate(
  {
    node: async () => must(await timed(node, ["-e", "0"]), "node -e 0").ms,
    packaged: async () => must(await timed(node, [packagedBin, "--help"]), "packaged --help").ms,
    repo: async () =>
      must(await timed(node, [path.join(ROOT, "cli/bin.js"), "--help"]), "repo --help").ms,
  },
  RUNS,
);

// 2. ask
const stub = await spawnStub(0);
const home = mkdtempSync(path.join(os.tmpdir(), "tableminds-startup-home-"));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  OPENAI_BASE_URL: stub.url,
  OPENAI_API_KEY: "bench",
  TABLEMINDS_MODEL: "stub-model",
  TABLEMINDS_HOME: home,
  LANGSMITH_TRACING: "false",
};
delete env.NODE_OPTIONS;

const IN_PROCESS = `
const { graph } = await import(${JSON.stringify(path.join(DIST, "graphs/table_qa/graph.js"))});
const { closeSandboxes } = await import(${JSON.stringify(path.join(DIST, "sandbox/index.js"))});
const state = await graph.invoke({ question: process.argv[1], sources: [{ path: process.argv[2] }] });
await closeSandboxes();
process.stdout.write(JSON.stringify({ answer: state.answer?.final, llmMs: state.budget.llmMs }));
`;

/** Wall time minus model time of one run; the answer must be 203. */
function netOf(run: Timed, what: string): number {
  must(run, what);
  const out = JSON.parse(run.stdout) as {
    answer?: unknown;
    llmMs?: number;
    budget?: { llmMs: number };
  };
  const answer = typeof out.answer === "object" ? JSON.stringify(out.answer) : String(out.answer);
  if (!answer.includes("203")) throw new Error(`${what}: unexpected answer ${answer}`);
  return run.ms - (out.budget?.llmMs ?? out.llmMs ?? 0);
}

const ASK = ["ask", TABLE, MEDALS_QUESTION, "--json", "--quiet"];
const askRuns = Math.max(3, Math.ceil(RUNS / 2));
const python = (await findPython()).executable;
const quick = await alternate(
  {
    node: async () => must(await timed(node, ["-e", "0"]), "node -e 0").ms,
    pandas: async () =>
      must(await timed(python, ["-c", "import pandas"]), "python -c 'import pandas'").ms,
    ask: async () => {
      const run = must(await timed(node, [packagedBin, ...ASK], env), "ask");
      netOf(run, "ask");
      return run.ms;
    },
    checkout: async () => {
      const run = must(await timed(node, [repoBin, ...ASK], env), "checkout ask");
      netOf(run, "checkout ask");
      return run.ms;
    },
    sources: async () => {
      const fromSources = { ...env, TABLEMINDS_FROM_SOURCES: "1" };
      const run = must(await timed(node, [repoBin, ...ASK], fromSources), "sources ask");
      netOf(run, "sources ask");
      return run.ms;
    },
  },
  askRuns,
);
const ask = await alternate(
  {
    inProcess: async () =>
      netOf(
        await timed(node, ["--input-type=module", "-e", IN_PROCESS, MEDALS_QUESTION, TABLE], env),
        "in-process invoke",
      ),
    cli: async () =>
      netOf(await timed(node, [packagedBin, ...ASK, "--no-memory"], env), "ask --no-memory"),
    cliMemory: async () => netOf(await timed(node, [packagedBin, ...ASK], env), "ask"),
  },
  askRuns,
);
await stub.stop();
rmSync(layout, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });

const ms = (v: number) => `${v.toFixed(0).padStart(6)} ms`;
const ratio = (v: number, base: number) => `${(v / base).toFixed(2)}x`;
console.log(
  `start-up, medians (${RUNS} runs of --help, ${askRuns} of ask; ${os.cpus().length} cores)`,
);
console.log(`  node -e 0                                  ${ms(help.node)}`);
console.log(
  `  tableminds --help (package: dist, no tsx)  ${ms(help.packaged)}  ${ratio(help.packaged, help.node)}   (goal <= 3x)`,
);
console.log(
  `  tableminds --help (checkout: its build)    ${ms(help.repo)}  ${ratio(help.repo, help.node)}`,
);
const floor = quick.node + quick.pandas;
console.log("a quick answer: ask on the medals table, zero-latency stub, whole wall time");
console.log(`  floor: node -e 0 + python -c 'import pandas'  ${ms(floor)}`);
console.log(
  `  tableminds ask (package)                   ${ms(quick.ask)}  ${ratio(quick.ask, floor)}   (goal <= 3x)`,
);
console.log(
  `  tableminds ask (checkout: its build)       ${ms(quick.checkout)}  ${ratio(quick.checkout, floor)}   (goal <= 3x)`,
);
console.log(
  `  tableminds ask (checkout: sources, tsx)    ${ms(quick.sources)}  ${ratio(quick.sources, floor)}`,
);
console.log("ask, zero-latency stub, wall minus model time");
console.log(`  graph.invoke in a plain script             ${ms(ask.inProcess)}`);
console.log(
  `  tableminds ask --no-memory                 ${ms(ask.cli)}  ${ratio(ask.cli, ask.inProcess)}   (goal <= 1.5x)`,
);
console.log(
  `  tableminds ask (memory on, the default)    ${ms(ask.cliMemory)}  ${ratio(ask.cliMemory, ask.inProcess)}`,
);
