import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DownloadError, downloadFile } from "../../models/download.js";
import { type RangeServer, startRangeServer } from "../support/range-server.js";

const BODY = randomBytes(300_000);
const SHA = createHash("sha256").update(BODY).digest("hex");

let server: RangeServer;
let base: string;
let behaviour: RangeServer["behaviour"];
const dir = mkdtempSync(path.join(tmpdir(), "tableminds-download-"));

beforeAll(async () => {
  server = await startRangeServer(BODY);
  ({ url: base, behaviour } = server);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function resetRanges(): void {
  server.requests.length = 0;
}

describe("downloadFile against a loopback server", () => {
  it("resumes a broken download with a Range request and checks the sha256", async () => {
    const dest = path.join(dir, "resume", "model.gguf");
    resetRanges();
    behaviour.breakAfter = 120_000;
    const broken = await downloadFile({
      url: `${base}/m`,
      dest,
      sha256: SHA,
      progress: false,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(broken).toBeInstanceOf(DownloadError);
    expect((broken as Error).message).toMatch(/run it again to resume/);
    expect(existsSync(dest)).toBe(false);
    const kept = statSync(`${dest}.part`).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(BODY.length);

    const result = await downloadFile({ url: `${base}/m`, dest, sha256: SHA, progress: false });
    expect(server.requests.map((r) => r.range)).toEqual([undefined, `bytes=${kept}-`]);
    expect(result).toEqual({ file: dest, bytes: BODY.length, resumedFrom: kept });
    expect(readFileSync(dest).equals(BODY)).toBe(true);
    expect(existsSync(`${dest}.part`)).toBe(false);

    // Once there, the file is not asked for again.
    await downloadFile({ url: `${base}/m`, dest, progress: false });
    expect(server.requests.map((r) => r.range)).toHaveLength(2);
  });

  it("starts over when the server ignores the range", async () => {
    const dest = path.join(dir, "norange.gguf");
    writeFileSync(`${dest}.part`, BODY.subarray(0, 1000));
    behaviour.ignoreRange = true;
    try {
      const result = await downloadFile({ url: `${base}/m`, dest, sha256: SHA, progress: false });
      expect(result.resumedFrom).toBe(0);
      expect(readFileSync(dest).equals(BODY)).toBe(true);
    } finally {
      behaviour.ignoreRange = false;
    }
  });

  it("deletes a download whose sha256 is wrong", async () => {
    const dest = path.join(dir, "bad.gguf");
    await expect(
      downloadFile({ url: `${base}/m`, dest, sha256: "0".repeat(64), progress: false }),
    ).rejects.toThrow(/expected 0{64}; it was deleted/);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.part`)).toBe(false);
  });

  it("says which URL could not be reached", async () => {
    const dest = path.join(dir, "refused.gguf");
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(
      downloadFile({ url: `http://127.0.0.1:${port}/m`, dest, progress: false }),
    ).rejects.toThrow(new RegExp(`cannot download http://127.0.0.1:${port}/m: .*ECONNREFUSED`));
  });
});
