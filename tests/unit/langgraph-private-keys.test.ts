import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LANGGRAPH_PRIVATE_KEYS } from "../../nodes/subrun.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const LANGGRAPH = path.join(ROOT, "node_modules/@langchain/langgraph");
const RUNTIME = JSON.parse(readFileSync(path.join(ROOT, "tsconfig.json"), "utf8")).include.filter(
  (entry: string) => !["tests", "bench", "scripts", "vitest.config.ts"].includes(entry),
) as string[];

describe("LangGraph's private config keys", () => {
  it("are the installed LangGraph's own, at the exact version package.json pins", () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
    const pinned = manifest.dependencies["@langchain/langgraph"] as string;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const installed = JSON.parse(readFileSync(path.join(LANGGRAPH, "package.json"), "utf8"));
    expect(installed.version).toBe(pinned);
    const constants = readFileSync(path.join(LANGGRAPH, "dist/constants.js"), "utf8");
    for (const [name, key] of Object.entries(LANGGRAPH_PRIVATE_KEYS)) {
      expect(constants).toContain(`const ${name} = ${JSON.stringify(key)};`);
    }
  });

  it("are named in nodes/subrun.ts and nowhere else in the runtime", () => {
    const named = RUNTIME.flatMap((folder) =>
      readdirSync(path.join(ROOT, folder), { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile() && /\.(ts|js|mjs)$/.test(entry.name))
        .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
        .filter((file) => readFileSync(path.join(ROOT, file), "utf8").includes("__pregel")),
    );
    expect(named).toEqual(["nodes/subrun.ts"]);
  });
});
