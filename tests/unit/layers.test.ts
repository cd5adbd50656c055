import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { relativeImports } from "../support/imports.js";

/*
 * Dependencies point down: a room imports only from rooms below it (and from itself).
 * training/ sits beside evals/: it may use evals/ (its scorers) but not the cli. (ui/ holds the
 * page and its components, TSX built for the browser, which read views/ only.)
 */
const LAYERS = [
  "cli",
  "server",
  "training",
  "evals",
  "graphs",
  "nodes",
  "views",
  "grounding",
  "sandbox",
  "models",
  "tables",
  "storage",
  "settings",
  "blackboard",
];
const root = path.resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** The project folders a file imports from, by its relative import specifiers. */
function importedLayers(file: string): string[] {
  return relativeImports(path.join(root, file)).map(
    (target) => path.relative(root, target).split(path.sep)[0] ?? "",
  );
}

describe("the layers", () => {
  it.each(LAYERS)("%s/ imports nothing from a layer above it", (layer) => {
    const above = new Set(LAYERS.slice(0, LAYERS.indexOf(layer)));
    const upward = sources(layer).flatMap((file) =>
      importedLayers(file)
        .filter((target) => above.has(target))
        .map((target) => `${file} -> ${target}/`),
    );
    expect(upward).toEqual([]);
  });

  it("lists every room that holds runtime code", () => {
    const rooms = readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && sources(entry.name).length > 0)
      .map((entry) => entry.name)
      .filter((name) => !["tests", "bench", "scripts", "node_modules", "dist"].includes(name))
      .filter((name) => !name.startsWith("."));
    expect(rooms.sort()).toEqual([...LAYERS].sort());
  });

  it("finds the imports it checks", () => {
    expect(importedLayers("graphs/table_qa/graph.ts")).toContain("nodes");
  });
});
