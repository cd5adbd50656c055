import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { artifactDir, putArtifact, sha256 } from "../../storage/artifacts.js";
import { useTempHome } from "../support/env.js";

describe("artifact store", () => {
  it("stores content under its hash, once, even when written concurrently", async () => {
    useTempHome();
    const bytes = "a,b\n1,2\n";
    const stored = await Promise.all(Array.from({ length: 8 }, () => putArtifact(bytes, "csv")));
    expect(new Set(stored.map((s) => s.uri)).size).toBe(1);
    expect(stored[0]?.sha256).toBe(sha256(bytes));
    expect(stored[0]?.uri).toBe(path.join(artifactDir(), `${sha256(bytes)}.csv`));
    expect(await readFile(stored[0]?.uri ?? "", "utf8")).toBe(bytes);
    expect(await readdir(artifactDir())).toEqual([`${sha256(bytes)}.csv`]);
  });
});
