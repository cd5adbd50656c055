#!/usr/bin/env node
/**
 * npm installs every prebuilt llama.cpp package node-llama-cpp lists whose os and cpu fields
 * match, and its CUDA, Vulkan and ARM cross builds all claim linux-x64 (about 640 MB here). The
 * embedded model runs on the CPU build only (models/local-runtime.ts: `gpu: false`,
 * `build: "never"`), so the install removes the others (package.json's `postinstall`, in a
 * checkout only: the package has no scripts/), and so does setup.
 *
 *   node scripts/prune-llama-builds.mjs [node_modules]
 */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The one package node-llama-cpp loads for `gpu: false` on a platform, as it names them. */
export function cpuBuild(platform, arch) {
  const os = { linux: "linux", darwin: "mac", win32: "win" }[platform];
  if (!os) return undefined;
  // Apple silicon has no build without Metal; it is the one there is.
  if (os === "mac" && arch === "arm64") return "mac-arm64-metal";
  const cpu = { x64: "x64", arm64: "arm64", arm: "armv7l", riscv64: "riscv64" }[arch];
  return cpu ? `${os}-${cpu}` : undefined;
}

function sizeOf(dir) {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

/** Removes every build but the CPU one; returns what went and the bytes freed. */
export function pruneLlamaBuilds(nodeModules, platform = process.platform, arch = process.arch) {
  const scope = path.join(nodeModules, "@node-llama-cpp");
  const keep = cpuBuild(platform, arch);
  // On a platform without a known CPU build, leave everything: node-llama-cpp will say why.
  if (!keep || !existsSync(path.join(scope, keep))) return { removed: [], bytes: 0, keep };
  const removed = readdirSync(scope).filter((name) => name !== keep);
  let bytes = 0;
  for (const name of removed) {
    const dir = path.join(scope, name);
    bytes += sizeOf(dir);
    rmSync(dir, { recursive: true, force: true });
  }
  return { removed, bytes, keep };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const { removed, bytes, keep } = pruneLlamaBuilds(
    process.argv[2] ?? path.join(root, "node_modules"),
  );
  if (removed.length > 0) {
    const mb = Math.round(bytes / 2 ** 20);
    console.log(
      `tableminds: removed ${removed.length} llama.cpp builds the CPU runtime never loads (${mb} MB), kept @node-llama-cpp/${keep}`,
    );
  }
}
