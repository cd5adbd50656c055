import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeFolders } from "../../scripts/source-stamp.mjs";
import { builtCheckoutCopy } from "../support/checkout-copy.js";

/*
 * The checkout build of `npm run setup` (.build/) runs only while it matches the sources: built
 * in a copy of the checkout, so that the build of the repository itself is left alone.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const MARK = "ran the checkout build";
let copy: string;

function tableminds(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [path.join(copy, "cli/bin.js"), ...args], {
    cwd: copy,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
}

beforeAll(() => {
  copy = builtCheckoutCopy(MARK);
}, 120_000);

afterAll(() => {
  rmSync(copy, { recursive: true, force: true });
});

describe("a checkout's start", () => {
  it("runs its build while the sources are as they were built, and it works", () => {
    const run = tableminds(["graphs"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain(MARK);
    expect(run.stdout).toMatch(/^table_qa +plan, code, run, answer/m);
    expect(readFileSync(path.join(copy, ".build/sources.stamp"), "utf8")).toMatch(
      /^[0-9a-f]{64}\n$/,
    );
  });

  it("compiles every runtime module: each TypeScript file has its JavaScript in the build", () => {
    const missing = runtimeFolders(ROOT).flatMap((folder: string) =>
      readdirSync(path.join(copy, folder), { recursive: true, encoding: "utf8" })
        .filter((file) => /\.ts$/.test(file) && !/\.(test|d)\.ts$/.test(file))
        .map((file) => path.join(folder, file.replace(/\.ts$/, ".js")))
        .filter((file) => !existsSync(path.join(copy, ".build", file))),
    );
    expect(missing).toEqual([]);
    expect(runtimeFolders(ROOT)).toContain("server");
  });

  it("runs the sources when asked to", () => {
    const run = tableminds(["graphs"], { TABLEMINDS_FROM_SOURCES: "1" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain(MARK);
  });

  it("loads a user's TypeScript worker though the build registers no loader", () => {
    const dir = path.join(copy, "my-workers");
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "rows.ts"),
      [
        'import { z } from "zod";',
        "const input: z.ZodObject = z.object({ task: z.string() });",
        "export default {",
        '  name: "rows",',
        '  description: "counts rows",',
        "  input,",
        "  run: async (): Promise<number> => 1,",
        "};",
      ].join("\n"),
    );
    const registry = pathToFileURL(
      path.join(copy, ".build/graphs/orchestrator/workers/registry.js"),
    ).href;
    const script = `const { loadWorkers } = await import(${JSON.stringify(registry)});
      const workers = await loadWorkers([${JSON.stringify(dir)}]);
      console.log([...workers.keys()].join(","));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: copy,
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim().split(",")).toContain("rows");
  });

  it("runs the sources once a source file changed after the build", () => {
    const touched = path.join(copy, "nodes/coder.ts");
    const later = new Date(Date.now() + 5_000);
    utimesSync(touched, later, later);
    const run = tableminds(["graphs"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain(MARK);
  });
});
