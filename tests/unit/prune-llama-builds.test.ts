import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script, without declarations
import { cpuBuild, pruneLlamaBuilds } from "../../scripts/prune-llama-builds.mjs";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function modules(names: string[]): string {
  dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-prune-"));
  for (const name of names) {
    mkdirSync(path.join(dir, "@node-llama-cpp", name, "bins"), { recursive: true });
    writeFileSync(path.join(dir, "@node-llama-cpp", name, "bins", "lib.so"), "x".repeat(1000));
  }
  return dir;
}

describe("pruning llama.cpp builds", () => {
  it("names the CPU package node-llama-cpp loads with gpu: false", () => {
    expect(cpuBuild("linux", "x64")).toBe("linux-x64");
    expect(cpuBuild("linux", "arm64")).toBe("linux-arm64");
    expect(cpuBuild("linux", "arm")).toBe("linux-armv7l");
    expect(cpuBuild("darwin", "arm64")).toBe("mac-arm64-metal");
    expect(cpuBuild("win32", "x64")).toBe("win-x64");
    expect(cpuBuild("aix", "ppc64")).toBeUndefined();
  });

  it("keeps only that one", () => {
    const root = modules(["linux-x64", "linux-x64-cuda", "linux-x64-cuda-ext", "linux-arm64"]);
    const result = pruneLlamaBuilds(root, "linux", "x64");
    expect(result.removed.sort()).toEqual(["linux-arm64", "linux-x64-cuda", "linux-x64-cuda-ext"]);
    expect(result.bytes).toBe(3000);
    expect(readdirSync(path.join(root, "@node-llama-cpp"))).toEqual(["linux-x64"]);
  });

  it("removes nothing when the CPU build is not there", () => {
    const root = modules(["linux-x64-cuda"]);
    expect(pruneLlamaBuilds(root, "linux", "x64").removed).toEqual([]);
    expect(readdirSync(path.join(root, "@node-llama-cpp"))).toEqual(["linux-x64-cuda"]);
  });
});
