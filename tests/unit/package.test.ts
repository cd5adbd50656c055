/**
 * The package's manifest against the code: every module the runtime folders import is a
 * dependency and every dependency is imported; our engines range lies inside what each
 * dependency declares; the exports and the files shipped point at the compiled modules;
 * `tableminds --help` loads no more than the flags need.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import os from "node:os";
import path from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { ASK_TABLE_FORMATS } from "../../cli/main.js";
import { graphModuleFile } from "../../graphs/registry.js";
import { TABLE_FORMATS } from "../../tables/load.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface Manifest {
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines: { node: string };
  files: string[];
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string | string[]>>;
  scripts: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as Manifest;
const buildConfig = JSON.parse(readFileSync(path.join(ROOT, "tsconfig.build.json"), "utf8")) as {
  include: string[];
};
/** The folders compiled into dist/: the code that runs when the package is installed. */
const RUNTIME_FOLDERS = buildConfig.include;

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ts$/.test(e.name) && !/\.(d|test)\.ts$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The package a bare specifier names: "@scope/name/sub" -> "@scope/name", "name/sub" -> "name". */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

// An import clause ({ a, b }, * as x, x) holds no quotes, so a match cannot run into a string.
const STATIC_IMPORT = /^[ \t]*(?:import|export)\s(?:[^;"'`]*?\sfrom\s)?\s*["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
const REQUIRE_RESOLVE = /\b(?:require|import\.meta)\.resolve\(\s*["']([^"'./][^"']*)["']\s*\)/g;

/** Import specifiers of a source file; type-only imports are erased, so they are skipped. */
function specifiers(file: string, { dynamic = true } = {}): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(STATIC_IMPORT)) {
    if (!/^\s*(import|export)\s+type\s/.test(match[0])) found.push(match[1] ?? "");
  }
  if (dynamic) {
    for (const match of text.matchAll(DYNAMIC_IMPORT)) found.push(match[1] ?? "");
    for (const match of text.matchAll(REQUIRE_RESOLVE)) found.push(match[1] ?? "");
  }
  return found.filter(Boolean);
}

const isBuiltin = (name: string) => name.startsWith("node:") || builtinModules.includes(name);

/** The packages the runtime folders import, with one file that imports each. */
function runtimeImports(): Map<string, string> {
  const used = new Map<string, string>();
  for (const folder of RUNTIME_FOLDERS) {
    for (const file of sourceFiles(folder)) {
      for (const spec of specifiers(file)) {
        if (spec.startsWith(".") || isBuiltin(spec)) continue;
        const name = packageOf(spec);
        if (name !== manifest.name && !used.has(name)) used.set(name, path.relative(ROOT, file));
      }
    }
  }
  return used;
}

describe("dependencies", () => {
  const used = runtimeImports();

  it("lists every package the runtime code imports", () => {
    // An optional peer (serve's embeddable server) is imported where it is needed, and a
    // missing one is said in one line (cli/serve.ts); it is a devDependency here.
    const optional = Object.keys(manifest.peerDependenciesMeta ?? {}).filter(
      (name) => manifest.peerDependenciesMeta?.[name]?.optional && name in manifest.devDependencies,
    );
    expect(optional).toEqual(["@langchain/langgraph-api"]);
    const missing = [...used].filter(
      ([name]) => !(name in manifest.dependencies) && !optional.includes(name),
    );
    expect(missing.map(([name, file]) => `${name} (imported by ${file})`)).toEqual([]);
  });

  it("lists only packages the runtime code imports; the rest are devDependencies", () => {
    const unused = Object.keys(manifest.dependencies).filter((name) => !used.has(name));
    expect(unused).toEqual([]);
    expect(manifest.dependencies).not.toHaveProperty("tsx");
    expect(manifest.devDependencies).toHaveProperty("tsx");
  });

  /** Each dependency's engines.node, as installed. */
  const declared = Object.keys(manifest.dependencies).flatMap((name) => {
    const file = path.join(ROOT, "node_modules", name, "package.json");
    const node = (JSON.parse(readFileSync(file, "utf8")) as { engines?: { node?: string } }).engines
      ?.node;
    return node ? [{ name, node }] : [];
  });

  /**
   * Our range cut into one piece per alternative and major version: semver.subset does not
   * join adjacent ranges, so ">=22 <27" is inside "22.x || 23.x || ... || 26.x" only piece by
   * piece.
   */
  function byMajor(range: string): string[] {
    const pieces: string[] = [];
    for (const alternative of range.split("||").map((part) => part.trim())) {
      for (let major = 0; major <= 99; major += 1) {
        const piece = `${alternative} ${major}.x`;
        if (semver.validRange(piece) && semver.minVersion(piece)) pieces.push(piece);
      }
    }
    return pieces;
  }

  it("declares a node range inside every dependency's engines.node", () => {
    const ours = manifest.engines.node;
    expect(semver.validRange(ours)).not.toBeNull();
    const pieces = byMajor(ours);
    expect(pieces.length).toBeGreaterThan(0);
    const outside = declared
      .filter(({ node }) => !pieces.every((piece) => semver.subset(piece, node)))
      .map(({ name, node }) => `${name} wants node ${node}`);
    expect(outside, `engines.node is ${ours}`).toEqual([]);
  });

  it("takes in the Node that runs these tests", () => {
    expect(semver.satisfies(process.versions.node, manifest.engines.node)).toBe(true);
  });

  it("is no stricter than the dependencies: its lowest version is the highest they ask for", () => {
    const lowest = semver.minVersion(manifest.engines.node)?.version ?? "";
    const floors = declared.map(({ node }) => semver.minVersion(node)?.version ?? "0.0.0");
    expect(floors).toContain(lowest);
    expect(floors.every((floor) => semver.lte(floor, lowest))).toBe(true);
  });
});

describe("the package's files", () => {
  it("ships the compiled tree, the bin and the README, not the sources", () => {
    expect(manifest.files).toEqual(expect.arrayContaining(["dist/", "cli/bin.js", "README.md"]));
    expect(manifest.files.filter((f) => RUNTIME_FOLDERS.includes(f.replace(/\/$/, "")))).toEqual(
      [],
    );
    expect(Object.values(manifest.bin)).toEqual(["./cli/bin.js"]);
    expect(manifest.scripts.prepack).toMatch(/scripts\/build\.mjs/);
  });

  it("exports tableminds/workers compiled to dist, and from the source in the repository", () => {
    const workers = manifest.exports["./workers"];
    if (typeof workers !== "object") throw new Error("./workers has no conditions");
    const source = workers.development;
    expect(typeof source).toBe("string");
    const compiled = `./dist/${String(source).slice(2).replace(/\.ts$/, ".js")}`;
    expect(workers.default).toBe(compiled);
    expect(workers.types).toEqual([source, compiled.replace(/\.js$/, ".d.ts")]);
    // The condition Node uses comes last, so no other tool's condition is shadowed by it.
    expect(Object.keys(workers).at(-1)).toBe("default");
  });
});

describe("graphModuleFile", () => {
  function project(files: string[]): string {
    const root = mkdtempSync(path.join(os.tmpdir(), "tableminds-spec-"));
    for (const file of files) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), "export const graph = 1;\n");
    }
    return root;
  }

  it("takes the source when it is there, even beside a compiled module", () => {
    const root = project(["graphs/g.ts", "graphs/g.js"]);
    expect(graphModuleFile("./graphs/g.ts", root)).toBe(path.join(root, "graphs/g.ts"));
  });

  it("takes the compiled module when only it is there, as in the npm package", () => {
    const root = project(["graphs/g.js", "graphs/g.d.ts"]);
    expect(graphModuleFile("./graphs/g.ts", root)).toBe(path.join(root, "graphs/g.js"));
  });

  it("leaves a missing file as named, so the import says what is missing", () => {
    const root = project([]);
    expect(graphModuleFile("./graphs/g.ts", root)).toBe(path.join(root, "graphs/g.ts"));
  });
});

describe("start-up of the command", () => {
  /** Packages reached by static imports from cli/main.ts (what `--help` loads). */
  function staticClosure(entry: string): Set<string> {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of specifiers(file, { dynamic: false })) {
        if (spec.startsWith("."))
          walk(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")));
        else if (!isBuiltin(spec)) packages.add(packageOf(spec));
      }
    };
    walk(entry);
    return packages;
  }

  it("loads commander and zod for help, not LangChain, DuckDB or the local model", () => {
    const loaded = staticClosure(path.join(ROOT, "cli/main.ts"));
    expect(loaded).toContain("commander");
    expect(
      [...loaded].filter((name) => !["commander", "zod", "cli-progress"].includes(name)),
    ).toEqual([]);
  });

  it("names the table file types as the loader does, without loading it", () => {
    expect(ASK_TABLE_FORMATS).toEqual(TABLE_FORMATS);
  });
});
