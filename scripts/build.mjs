#!/usr/bin/env node
/**
 * Compiles the runtime folders into dist/ for the npm package (`npm run build`, and `prepack`
 * before `npm pack` / `npm publish`): JavaScript and declarations from tsconfig.build.json,
 * plus the files the code reads beside itself at run time (the sandbox's Python, the chart
 * parser, the reward templates), langgraph.json, which graphs/registry.ts reads from the
 * folder above graphs/, and the page of `tableminds ui` (scripts/bundle-ui.mjs). Plain JavaScript, so it needs nothing but TypeScript to run.
 *
 * With --checkout it builds for a checkout instead (`npm run setup` does): JavaScript only,
 * transpiled file by file by esbuild into .build/ in a second or two, with the stamp of the
 * sources it was built from (scripts/source-stamp.mjs); cli/bin.js runs it while it matches.
 *
 *   node scripts/build.mjs [--checkout]
 */
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundlePage } from "./bundle-ui.mjs";
import {
  CHECKOUT_BUILD,
  runtimeFolders as checkoutFolders,
  files,
  sourceStamp,
  stampFile,
} from "./source-stamp.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CHECKOUT = process.argv.includes("--checkout");
const DIST = path.join(ROOT, CHECKOUT ? CHECKOUT_BUILD : "dist");
const CONFIG = path.join(ROOT, "tsconfig.build.json");

/** Files that stay where they are: the TypeScript tsc compiles, and the bin, which is not in dist. */
const SKIP_FILE = /\.(ts|tsx|css|tsbuildinfo)$|^\.|\.pyc$|^README\.md$|^tsconfig\.json$/;
const SKIP_DIR = new Set(["__pycache__", "node_modules"]);
const KEEP_IN_PLACE = new Set(["cli/bin.js"]);

function runtimeFolders() {
  if (CHECKOUT) return checkoutFolders(ROOT);
  const config = JSON.parse(readFileSync(CONFIG, "utf8"));
  return config.include;
}

function compile() {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  // Everything goes to stderr: `npm pack --json` prints its report on stdout after prepack.
  const run = spawnSync(process.execPath, [tsc, "-p", CONFIG], {
    cwd: ROOT,
    stdio: ["ignore", process.stderr, process.stderr],
  });
  if (run.status !== 0) {
    throw new Error(`tsc -p tsconfig.build.json failed (exit ${run.status}); dist/ is incomplete`);
  }
}

/** Every file under `folder` (relative to the root) that the compiler does not emit. */
function* assets(folder) {
  for (const entry of readdirSync(path.join(ROOT, folder), { withFileTypes: true })) {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIR.has(entry.name)) yield* assets(relative);
    } else if (entry.isFile() && !SKIP_FILE.test(entry.name) && !KEEP_IN_PLACE.has(relative)) {
      yield relative;
    }
  }
}

function copy(relative) {
  const target = path.join(DIST, relative);
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(path.join(ROOT, relative), target);
}

/** Each graph of langgraph.json must have its compiled module, or the CLI cannot load it. */
function checkGraphs() {
  const { graphs } = JSON.parse(readFileSync(path.join(ROOT, "langgraph.json"), "utf8"));
  for (const [name, spec] of Object.entries(graphs)) {
    const file = String(spec).split(":")[0] ?? "";
    const compiled = path.join(DIST, file.replace(/\.([cm]?)ts$/, ".$1js"));
    if (!existsSync(compiled)) {
      throw new Error(`graph ${name}: ${path.relative(ROOT, compiled)} was not built`);
    }
  }
}

/** The checkout build: each runtime .ts file as JavaScript beside the others, no declarations. */
async function transpile() {
  const { build } = await import("esbuild");
  const entryPoints = runtimeFolders().flatMap((folder) => [...sources(folder)]);
  await build({
    entryPoints,
    outdir: DIST,
    outbase: ROOT,
    absWorkingDir: ROOT,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
  });
}

function* sources(folder) {
  for (const file of files(ROOT, folder)) {
    if (/\.ts$/.test(file) && !/\.(test|d)\.ts$/.test(file)) yield file;
  }
}

const started = Date.now();
// Stamped before the build reads the sources: an edit made meanwhile leaves the build stale.
const stamp = CHECKOUT ? sourceStamp(ROOT) : undefined;
rmSync(DIST, { recursive: true, force: true });
if (CHECKOUT) await transpile();
else compile();
let copied = 0;
for (const folder of runtimeFolders()) {
  for (const file of assets(folder)) {
    copy(file);
    copied += 1;
  }
}
copy("langgraph.json");
checkGraphs();
// The page of `tableminds ui`, bundled for the browser (server/page.ts serves it from here).
await bundlePage(path.join(DIST, "ui"));
if (stamp) writeFileSync(stampFile(ROOT), `${stamp}\n`);
console.error(
  `built ${path.relative(ROOT, DIST)}/ in ${((Date.now() - started) / 1000).toFixed(1)} s (${copied} files copied beside the JavaScript)`,
);
