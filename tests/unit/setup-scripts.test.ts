import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script, without declarations
import { cpuBuild } from "../../scripts/prune-llama-builds.mjs";

/*
 * `npm run setup` installs what answering needs, and `npm test` adds what only the tests need:
 * the scripts each command runs, read as the shell would run them.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const script = (name: string) => readFileSync(path.join(ROOT, "scripts", name), "utf8");
/** The lines a script runs, without its comments. */
const commands = (text: string) =>
  text
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter(Boolean)
    .join("\n");
const packageScripts = (
  JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;

describe("the setup scripts", () => {
  it("npm run setup installs the sandbox's Python and the model, and nothing only tests need", () => {
    expect(packageScripts.setup).toBe("bash scripts/setup.sh");
    const setup = commands(script("setup.sh"));
    expect(setup).toContain("setup-model.sh");
    expect(setup).toContain("python3-pandas");
    expect(setup).toContain('build.mjs" --checkout');
    for (const testsOnly of ["setup-services.sh", "rouge-score", "nltk", "verl", "venv"]) {
      expect([testsOnly, setup.includes(testsOnly)]).toEqual([testsOnly, false]);
    }
  });

  it("npm test runs setup, then installs the reference scorers and the services", () => {
    expect(packageScripts.test?.startsWith("bash scripts/setup-tests.sh && ")).toBe(true);
    const tests = commands(script("setup-tests.sh"));
    expect(tests).toContain("bash scripts/setup.sh");
    expect(tests).toContain("setup-services.sh");
    expect(tests).toMatch(/rouge-score==[\d.]+/);
    expect(tests).toMatch(/nltk==[\d.]+/);
    expect(tests).toMatch(/verl==[\d.]+/);
  });
});

describe("npm install's postinstall", () => {
  const postinstall = packageScripts.postinstall ?? "";
  const run = (cwd: string) =>
    spawnSync("bash", ["-c", postinstall], { cwd, encoding: "utf8", timeout: 30_000 });

  it("keeps only the CPU build of llama.cpp in a checkout", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-postinstall-"));
    try {
      mkdirSync(path.join(dir, "scripts"));
      copyFileSync(
        path.join(ROOT, "scripts/prune-llama-builds.mjs"),
        path.join(dir, "scripts/prune-llama-builds.mjs"),
      );
      const scope = path.join(dir, "node_modules/@node-llama-cpp");
      const keep = cpuBuild(process.platform, process.arch) ?? "linux-x64";
      for (const build of [keep, "linux-x64-cuda", "linux-x64-vulkan"]) {
        mkdirSync(path.join(scope, build), { recursive: true });
        writeFileSync(path.join(scope, build, "llama.node"), "x");
      }
      const result = run(dir);
      expect(result.status, result.stderr).toBe(0);
      expect(readdirSync(scope)).toEqual([keep]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("does nothing, and does not fail, where the package is installed (it has no scripts/)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-postinstall-"));
    try {
      const result = run(dir);
      expect(result.status, result.stderr).toBe(0);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
