/**
 * readScratchFile (sandbox/local.ts): how Node reads a table file a run left in its
 * scratch directory, where the code may have put anything under that name.
 */
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readScratchFile } from "../../sandbox/local.js";

const LIMITS = { maxBytes: 1_000, timeoutMs: 5_000 };

/** `promise`, or an error once `ms` have passed: a read that blocks fails the test. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe.runIf(process.platform === "linux")("readScratchFile", () => {
  let dir: string;
  let outside: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-scratch-read-"));
    outside = path.join(dir, "..", `${path.basename(dir)}-outside.csv`);
    writeFileSync(outside, "secret\n");
    writeFileSync(path.join(dir, "plain.csv"), "x\n1\n");
    execFileSync("mkfifo", [path.join(dir, "fifo.csv")]);
    symlinkSync(outside, path.join(dir, "link.csv"));
    mkdirSync(path.join(dir, "folder.csv"));
    writeFileSync(path.join(dir, "original.csv"), "x\n2\n");
    linkSync(path.join(dir, "original.csv"), path.join(dir, "hard.csv"));
    writeFileSync(path.join(dir, "big.csv"), "x".repeat(LIMITS.maxBytes + 1));
    writeFileSync(path.join(dir, "edge.csv"), "x".repeat(LIMITS.maxBytes));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { force: true });
  });

  it("reads a regular file within the bound", async () => {
    expect((await readScratchFile(dir, "plain.csv", LIMITS)).toString()).toBe("x\n1\n");
    expect((await readScratchFile(dir, "edge.csv", LIMITS)).length).toBe(LIMITS.maxBytes);
  });

  it("refuses a FIFO at once instead of waiting for a writer", async () => {
    // Four times, as many as libuv has file threads: none of them is left waiting.
    const reads = Array.from({ length: 4 }, () =>
      within(3_000, readScratchFile(dir, "fifo.csv", LIMITS)).then(
        () => "read",
        (error: Error) => error.message,
      ),
    );
    expect(await Promise.all(reads)).toEqual(
      Array(4).fill("its file is a FIFO, not a regular file"),
    );
    expect(await within(3_000, readFile(path.join(dir, "plain.csv"), "utf8"))).toBe("x\n1\n");
  });

  it("refuses a symlink, a directory, a hard link and a file over the bound", async () => {
    const refused = async (name: string) =>
      within(3_000, readScratchFile(dir, name, LIMITS)).then(
        () => "read",
        (error: Error) => error.message,
      );
    expect(await refused("link.csv")).toBe("its file is a symbolic link");
    expect(await refused("folder.csv")).toBe("its file is a directory, not a regular file");
    expect(await refused("hard.csv")).toMatch(/^its file has 2 links/);
    expect(await refused("big.csv")).toBe("its file has 1001 bytes, more than the 1000 allowed");
  });

  it("takes plain file names only", async () => {
    for (const name of ["../plain.csv", `../${path.basename(outside)}`, "a/b.csv", ".", ".."]) {
      await expect(readScratchFile(dir, name, LIMITS)).rejects.toThrow(/bad file name/);
    }
  });
});
