import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { S3ArtifactStore } from "../../storage/artifact-store-s3.js";
import { freePort } from "../support/dev-server.js";

/*
 * A fetch from the object store outlives an outage of the store (a store that is not there yet,
 * then answers), and fails at once, in one line, on an answer (access denied): a run is not
 * failed by a store that is back seconds later.
 */

const BYTES = Buffer.from("city,km\nGraz,2\n");
const env = (port: number) => ({
  AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test-secret",
  AWS_REGION: "us-east-1",
});

describe("fetching from the object store through an outage", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  function serve(port: number, status: number): Promise<void> {
    server = createServer((_req, res) => {
      res.writeHead(status, { "content-type": "application/octet-stream" });
      res.end(status === 200 ? BYTES : "<Error><Code>AccessDenied</Code></Error>");
    });
    return new Promise((resolve) => server?.listen(port, "127.0.0.1", () => resolve()));
  }

  it("waits for a store that is not there yet, and gets the bytes once it answers", async () => {
    const port = await freePort();
    const store = S3ArtifactStore.fromUrl("s3://tables/artifacts", env(port));
    const target = path.join(mkdtempSync(path.join(os.tmpdir(), "tableminds-fetch-")), "t.csv");
    const fetching = store.fetch("t.csv", target);
    // Down for a second and a half: refused connections all along.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await serve(port, 200);
    expect(await fetching).toBe(createHash("sha256").update(BYTES).digest("hex"));
    expect(readFileSync(target)).toEqual(BYTES);
  }, 30_000);

  it("fails at once on the store's refusal, naming the object", async () => {
    const port = await freePort();
    await serve(port, 403);
    const store = S3ArtifactStore.fromUrl("s3://tables/artifacts", env(port));
    const target = path.join(mkdtempSync(path.join(os.tmpdir(), "tableminds-fetch-")), "t.csv");
    const started = Date.now();
    await expect(store.fetch("t.csv", target)).rejects.toThrow(
      /^could not fetch s3:\/\/tables\/artifacts\/t\.csv: /,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
