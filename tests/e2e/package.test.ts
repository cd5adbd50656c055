/**
 * The npm package as a user gets it: `npm pack` (which builds dist/ in prepack), installed from
 * the tarball into an empty project, then its `tableminds` run with plain Node: no tsx, no
 * TypeScript sources, no repository beside it.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/cli.js";
import { EXAMPLES, stubEnv } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command, killed after `timeoutMs`; NODE_OPTIONS is dropped so no loader rides along. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs: number },
): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  delete env.NODE_OPTIONS;
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/**
 * DuckDB's native addon for this machine, as `name@version`. It is an optional dependency of
 * @duckdb/node-bindings, and --omit=optional (which keeps node-llama-cpp's GPU builds, hundreds
 * of MB, out of the install) drops it; a user's plain `npm install` gets it.
 */
function duckdbBinding(): string {
  const manifest = JSON.parse(
    readFileSync(path.join(ROOT, "node_modules/@duckdb/node-bindings/package.json"), "utf8"),
  ) as { optionalDependencies: Record<string, string> };
  const name = `@duckdb/node-bindings-${process.platform}-${process.arch}`;
  const version = manifest.optionalDependencies[name];
  if (!version) throw new Error(`DuckDB ships no ${name}`);
  return `${name}@${version}`;
}

describe("the npm package", () => {
  let work: string;
  let project: string;
  let installed: string;
  let stub: StubServer;

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), "tableminds-pack-"));
    const pack = await run(NPM, ["pack", "--json", "--pack-destination", work], {
      cwd: ROOT,
      timeoutMs: 180_000,
    });
    expect(pack.code, pack.stderr).toBe(0);
    const [report] = JSON.parse(pack.stdout) as { filename: string }[];
    if (!report) throw new Error(`npm pack reported no tarball: ${pack.stdout}`);

    project = path.join(work, "project");
    mkdirSync(project);
    writeFileSync(path.join(project, "package.json"), '{ "name": "a-user", "private": true }\n');
    const install = await run(
      NPM,
      [
        "install",
        path.join(work, report.filename),
        duckdbBinding(),
        "--omit=optional",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
      ],
      { cwd: project, timeoutMs: 300_000 },
    );
    expect(install.code, install.stderr).toBe(0);
    installed = path.join(project, "node_modules", "tableminds");
    stub = await startStubOpenAI({ respond: medalsTeam() });
  }, 600_000);

  afterAll(async () => {
    await stub?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("holds compiled JavaScript and what it reads, not the TypeScript sources", () => {
    const files = filesUnder(installed);
    const sources = files.filter((f) => /\.[cm]?tsx?$/.test(f) && !/\.d\.[cm]?ts$/.test(f));
    expect(sources).toEqual([]);
    expect(files).toContain(path.join("dist", "cli", "main.js"));
    expect(files).toContain(path.join("dist", "graphs", "table_qa", "graph.js"));
    expect(files).toContain(
      path.join("dist", "graphs", "orchestrator", "workers", "contract.d.ts"),
    );
    expect(files).toContain(path.join("dist", "sandbox", "interpreter.py"));
    expect(files).toContain(path.join("dist", "langgraph.json"));
    // The page of `tableminds ui`, bundled at pack time, compressed copies beside it.
    for (const name of ["page.js", "page.js.br", "page.css", "page.css.gz"]) {
      expect(files).toContain(path.join("dist", "ui", name));
    }
    // Tests, benchmarks and the repository's scripts stay out.
    expect(files.filter((f) => /^(tests|bench|scripts|docs|examples)\b/.test(f))).toEqual([]);
  });

  it("needs no TypeScript loader: tsx and typescript are not installed with it", () => {
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const dev of ["tsx", "typescript", "vitest", "@biomejs/biome"]) {
      expect(manifest.dependencies[dev], dev).toBeUndefined();
      expect(existsSync(path.join(project, "node_modules", dev)), dev).toBe(false);
    }
  });

  it("resolves tableminds/workers to the compiled module", async () => {
    const check = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const w = await import("tableminds/workers"); console.log(typeof w.defineWorker, import.meta.resolve("tableminds/workers"));',
      ],
      { cwd: project, timeoutMs: 60_000 },
    );
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(
      /^function .*\/node_modules\/tableminds\/dist\/graphs\/orchestrator\/workers\/contract\.js$/m,
    );
  });

  it("carries serve's modules and every package they import but the optional peer", async () => {
    // The embeddable server (@langchain/langgraph-api) is the peer a user adds for `serve`;
    // what the server's own modules import besides it comes with the package.
    const modules = ["auth.js", "run-errors.js", "leases.js", "fenced-saver.js", "page.js"].map(
      (name) => pathToFileURL(path.join(installed, "dist", "server", name)).href,
    );
    const check = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        [
          `for (const m of ${JSON.stringify(modules)}) await import(m); console.log("imported");`,
          // The page is found beside the compiled server, as packed (no bundler at run time).
          `const { pageRoutes } = await import(${JSON.stringify(modules.at(-1))});`,
          'const { Hono } = await import("hono"); const app = new Hono(); pageRoutes(app);',
          'const r = await app.request("/ui/page.js", { headers: { "accept-encoding": "br" } });',
          'console.log("page", r.status, r.headers.get("content-encoding"));',
        ].join("\n"),
      ],
      { cwd: project, timeoutMs: 60_000 },
    );
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain("imported");
    expect(check.stdout).toContain("page 200 br");
  });

  it("prints its help, listing the commands", async () => {
    const bin = path.join(project, "node_modules", ".bin", "tableminds");
    const help = await run(bin, ["--help"], { cwd: project, timeoutMs: 60_000 });
    expect(help.code, help.stderr).toBe(0);
    for (const command of ["ask", "doctor", "eval", "graphs"]) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, "m"));
    }
    const graphs = await run(bin, ["graphs"], { cwd: project, timeoutMs: 60_000 });
    expect(graphs.code, graphs.stderr).toBe(0);
    expect(graphs.stdout).toMatch(/^table_qa\s/m);
  });

  it("answers a question over a table against the stub endpoint", async () => {
    const bin = path.join(project, "node_modules", ".bin", "tableminds");
    const table = path.join(EXAMPLES, "olympics_2020_medals.csv");
    // --no-memory: memory.sqlite needs better-sqlite3's native addon, which its install script
    // fetches or compiles, and this install runs no scripts (no network beyond the registry).
    const asked = await run(bin, ["ask", table, MEDALS_QUESTION, "--no-memory"], {
      cwd: project,
      env: stubEnv(stub.url),
      timeoutMs: 120_000,
    });
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toMatch(/^Answer: 203$/m);
    expect(asked.stdout).toContain("[a1:out2]");
  });
});
