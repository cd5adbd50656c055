import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EMBED_PACKAGE, EMBED_VERSION } from "../../cli/serve.js";

const manifest = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

describe("the embeddable LangGraph server serve runs on", () => {
  it("is pinned to the one version serve is tested with, as an optional peer", () => {
    expect(manifest.peerDependencies[EMBED_PACKAGE]).toBe(EMBED_VERSION);
    expect(manifest.devDependencies[EMBED_PACKAGE]).toBe(EMBED_VERSION);
    expect(manifest.peerDependenciesMeta[EMBED_PACKAGE]?.optional).toBe(true);
    // Not a dependency: it brings a TypeScript loader a one-machine install does not need.
    expect(manifest.dependencies[EMBED_PACKAGE]).toBeUndefined();
    const installed = JSON.parse(
      readFileSync(
        new URL(`../../node_modules/${EMBED_PACKAGE}/package.json`, import.meta.url),
        "utf8",
      ),
    ) as { version: string };
    expect(installed.version).toBe(EMBED_VERSION);
  });
});
