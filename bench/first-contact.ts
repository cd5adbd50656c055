/**
 * A new user's first contact, measured on a fresh clone (not a test): the README's two setup
 * steps and its first question, with no model endpoint configured (the embedded model
 * answers), each timed as a whole process, and what they leave on disk. The figures the
 * README gives for first contact come from here.
 *
 *   npm run bench:first-contact [-- --keep]
 *
 * The clone is of this checkout's HEAD. The embedded model is cached across clones
 * (~/.cache/tableminds/models): when it is there already, setup does not download it, and the
 * report says so. --keep leaves the clone behind.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const KEEP = process.argv.includes("--keep");
/** The README's first question may take minutes on the small fallback model. */
const ASK_TIMEOUT_MS = 15 * 60_000;

interface Step {
  name: string;
  ms: number;
  code: number | null;
  out: string;
}

function run(
  name: string,
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
) {
  return new Promise<Step>((resolve) => {
    const started = performance.now();
    const child = spawn("bash", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ name, ms: performance.now() - started, code, out });
    });
  });
}

/** Bytes under `dir` (du, apparent sizes), or 0 when it is missing. */
async function bytesOf(dir: string): Promise<number> {
  if (!existsSync(dir)) return 0;
  const step = await run("du", `du -sb ${JSON.stringify(dir)}`, ROOT, process.env, 120_000);
  return Number(step.out.split(/\s/)[0] ?? 0);
}

/** The README's first command, as it stands: `npm install && npm run setup && <ask>`. */
function readmeAsk(): string {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const line = readme.split("\n").find((l) => l.startsWith("npm install && npm run setup && "));
  if (!line) throw new Error("README.md: no line `npm install && npm run setup && ...`");
  return line.slice("npm install && npm run setup && ".length);
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-first-contact-"));
const clone = path.join(dir, "tableminds");
const home = path.join(dir, "home");
// No endpoint: the embedded model answers, as for a user who has none.
const env: NodeJS.ProcessEnv = { ...process.env, TABLEMINDS_HOME: home };
for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "TABLEMINDS_MODEL"]) delete env[key];

try {
  const models = path.join(os.homedir(), ".cache", "tableminds", "models");
  const modelCached = existsSync(models) && (await bytesOf(models)) > 0;
  console.log(
    `first contact on a fresh clone of ${ROOT} (HEAD), ${os.availableParallelism()} cores`,
  );
  const steps: Step[] = [];
  const clonePath = JSON.stringify(clone);
  steps.push(
    await run(
      "git clone",
      `git clone --quiet ${JSON.stringify(ROOT)} ${clonePath}`,
      dir,
      env,
      300_000,
    ),
  );
  steps.push(await run("npm install", "npm install --no-audit --no-fund", clone, env, 900_000));
  steps.push(await run("npm run setup", "npm run setup", clone, env, 900_000));
  const ask = await run("the README's question", readmeAsk(), clone, env, ASK_TIMEOUT_MS);
  steps.push(ask);
  for (const step of steps) {
    console.log(`  ${step.name.padEnd(24)} ${seconds(step.ms).padStart(9)}   exit ${step.code}`);
  }
  const failed = steps.find((step) => step.code !== 0 && step !== ask);
  if (failed) throw new Error(`${failed.name} failed:\n${failed.out.slice(-2000)}`);
  const model = ask.out.match(/local model: (\S+\.gguf)/)?.[1];
  console.log(`  node_modules              ${mb(await bytesOf(path.join(clone, "node_modules")))}`);
  if (model && existsSync(model))
    console.log(`  the embedded model        ${mb(statSync(model).size)}`);
  console.log(
    `  the model was ${modelCached ? "cached already (setup did not download it)" : "downloaded by setup"}`,
  );
  const first = steps[1]?.ms ?? 0;
  const answered = (steps[2]?.ms ?? 0) + ask.ms;
  console.log(`  install to first answer   ${seconds(first + answered)}`);
  console.log(`  the answer (exit ${ask.code}):`);
  for (const line of ask.out.trim().split("\n").slice(-6)) console.log(`    ${line}`);
} finally {
  if (KEEP) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
