import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { datasetHome, loadDataset } from "../../evals/datasets/index.js";
import { PullError, pullDataset } from "../../evals/datasets/pull.js";
import { useTempHome } from "../support/env.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/datasets");
const SAMPLE = readFileSync(path.join(FIXTURES, "tablebench/tablebench_sample40.jsonl"));

/** A zip of the WikiTQ fixture under a WikiTableQuestions/ top directory, as upstream ships it. */
function wikitqZip(): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tableminds-zip-"));
  const zip = path.join(dir, "wtq.zip");
  const script = [
    "import os, sys, zipfile",
    "src, out = sys.argv[1], sys.argv[2]",
    "with zipfile.ZipFile(out, 'w') as z:",
    "    for root, _, files in os.walk(src):",
    "        for f in files:",
    "            full = os.path.join(root, f)",
    "            z.write(full, os.path.join('WikiTableQuestions', os.path.relpath(full, src)))",
  ].join("\n");
  const made = spawnSync("python3", ["-c", script, path.join(FIXTURES, "wikitq"), zip]);
  if (made.status !== 0) throw new Error(String(made.stderr));
  return readFileSync(zip);
}

describe("tableminds data pull, against a loopback mirror", () => {
  let server: Server;
  let mirror: string;
  let zip: Buffer;

  beforeAll(async () => {
    zip = wikitqZip();
    server = createServer((req, res) => {
      if (req.url === "/tablebench/TableBench_DP.jsonl") {
        res.writeHead(200, { "content-length": SAMPLE.length });
        return res.end(SAMPLE);
      }
      if (req.url === "/wikitq/WikiTableQuestions-1.0.2-compact.zip") {
        res.writeHead(200, { "content-length": zip.length });
        return res.end(zip);
      }
      if (req.url?.startsWith("/broken/")) {
        // Promise a whole file, send half of it, then hang up.
        res.writeHead(200, { "content-length": SAMPLE.length });
        res.write(SAMPLE.subarray(0, SAMPLE.length / 2));
        setTimeout(() => res.destroy(), 50);
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    mirror = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    useTempHome();
    process.env.TABLEMINDS_DATA_MIRROR = mirror;
  });
  afterAll(async () => {
    delete process.env.TABLEMINDS_DATA_MIRROR;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("downloads TableBench where the loader finds it", async () => {
    const pulled = await pullDataset("tablebench");
    expect(pulled.path).toBe(path.join(datasetHome("tablebench"), "tablebench_test.jsonl"));
    expect(pulled.url).toBe(`${mirror}/tablebench/TableBench_DP.jsonl`);
    expect(pulled.bytes).toBeGreaterThan(0);
    expect(await loadDataset("tablebench")).toHaveLength(40);
  });

  it("downloads and unzips WikiTQ where the loader finds it", async () => {
    await pullDataset("wikitq");
    const examples = await loadDataset("wikitq");
    expect(examples).toHaveLength(15);
    expect(examples[0]?.gold).toBe("Italy");
  });

  it("leaves nothing that looks complete when the download breaks off", async () => {
    process.env.TABLEMINDS_DATA_MIRROR = `${mirror}/broken`;
    await expect(pullDataset("tablebench")).rejects.toThrow(PullError);
    const home = datasetHome("tablebench");
    expect(existsSync(path.join(home, "tablebench_test.jsonl"))).toBe(false);
    expect(readdirSync(home)).toEqual([]);
  });

  it("says what to do when the upstream host cannot be reached", async () => {
    process.env.TABLEMINDS_DATA_MIRROR = "http://127.0.0.1:1";
    const error = await pullDataset("tablebench").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PullError);
    expect(String((error as Error).message)).toMatch(
      /download \S+TableBench_DP\.jsonl .*save it as \S+tablebench\/tablebench_test\.jsonl/s,
    );
    expect(String((error as Error).message)).toMatch(/--data PATH/);
  });
});
