import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { files, runtimeFolders } from "../../scripts/source-stamp.mjs";

/*
 * Settings come from the environment through one schema each (settings/), read by the entry
 * points (cli/, server/) or as a function's default, `env = process.env`, that a test can
 * replace. Nothing deeper reads a variable inline: `process.env.X` there is a knob with no
 * declaration, no validation and no line in docs/configuration.md.
 */

const root = path.resolve(import.meta.dirname, "../..");
const ENTRY_ROOMS = new Set(["cli", "server", "settings"]);

/** The files that touch the environment for another reason than reading a setting. */
const OWN_REASONS: Record<string, string> = {
  "sandbox/e2b-reaper.ts": "a process of its own: its parent hands it its work in its environment",
  "sandbox/local-interpreter.ts": "hands an allow-list of the environment to the interpreter",
  "storage/artifact-store-s3.ts": "silences the AWS SDK's warning, a switch of the SDK's own",
  "models/download-model.ts": "a script run on its own (npm run setup)",
};

const DEFAULT_PARAMETER = /\benv(?:\??:\s*[\w.<>[\],|\s"]+?)?\s*=\s*process\.env\b/g;

function inlineReads(source: string): number {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");
  const all = text.match(/process\.env\b/g)?.length ?? 0;
  return all - (text.match(DEFAULT_PARAMETER)?.length ?? 0);
}

const runtimeFiles = runtimeFolders(root)
  .filter((folder) => !ENTRY_ROOMS.has(folder))
  .flatMap((folder) => [...files(root, folder)])
  .filter((file) => /\.(ts|mts)$/.test(file) && !file.endsWith(".d.ts"));

describe("reading the environment", () => {
  it("scans the runtime's rooms", () => {
    expect(runtimeFiles.length).toBeGreaterThan(150);
    expect(runtimeFiles).toContain("tables/line-limits.ts");
  });

  it("happens below the entry points only as a replaceable default, or for a reason named here", () => {
    const offenders = runtimeFiles.filter(
      (file) =>
        !(file in OWN_REASONS) && inlineReads(readFileSync(path.join(root, file), "utf8")) > 0,
    );
    expect(offenders).toEqual([]);
  });

  it("tells a default parameter from an inline read", () => {
    expect(inlineReads("export function f(env: NodeJS.ProcessEnv = process.env) {}")).toBe(0);
    expect(inlineReads("function g(file: string, env = process.env) {}")).toBe(0);
    expect(inlineReads("const k = process.env.TABLEMINDS_X ?? 3;")).toBe(1);
    expect(inlineReads('const k = process.env["TABLEMINDS_X"];')).toBe(1);
    expect(inlineReads("schema.parse(process.env)")).toBe(1);
    expect(inlineReads("/** default process.env */\n// process.env.X\nconst a = 1;")).toBe(0);
  });

  it("names reasons only for files that still need them", () => {
    for (const file of Object.keys(OWN_REASONS)) {
      expect(inlineReads(readFileSync(path.join(root, file), "utf8")), file).toBeGreaterThan(0);
    }
  });
});
