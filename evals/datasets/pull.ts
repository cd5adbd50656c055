import { spawnSync } from "node:child_process";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type DatasetName, datasetHome } from "./index.js";

/** Where each dataset comes from; TABLEMINDS_DATA_MIRROR=<url> serves `<url>/<name>/<file>` instead. */
export const SOURCES: Record<DatasetName, { url: string; file: string; unzip: boolean }> = {
  tablebench: {
    url: "https://huggingface.co/datasets/Multilingual-Multimodal-NLP/TableBench/resolve/main/TableBench_DP.jsonl",
    file: "tablebench_test.jsonl",
    unzip: false,
  },
  wikitq: {
    url: "https://github.com/ppasupat/WikiTableQuestions/releases/download/v1.0.2/WikiTableQuestions-1.0.2-compact.zip",
    file: "WikiTableQuestions.zip",
    unzip: true,
  },
  tabfact: {
    url: "https://github.com/wenhuchen/Table-Fact-Checking/archive/refs/heads/master.zip",
    file: "Table-Fact-Checking.zip",
    unzip: true,
  },
  finqa: {
    url: "https://raw.githubusercontent.com/czyssrs/FinQA/main/dataset/test.json",
    file: "test.json",
    unzip: false,
  },
};

export class PullError extends Error {
  constructor(name: DatasetName, url: string, reason: string) {
    const home = datasetHome(name);
    super(
      `could not download ${name} from ${url}: ${reason}.\n` +
        `  On a machine with internet access, download that file into ${home}` +
        `${SOURCES[name].unzip ? " and unzip it there" : ` as ${SOURCES[name].file}`},\n` +
        `  or pass the dataset's path to eval with --data PATH.`,
    );
    this.name = "PullError";
  }
}

export function sourceUrl(name: DatasetName): string {
  const mirror = process.env.TABLEMINDS_DATA_MIRROR?.trim();
  const { url } = SOURCES[name];
  return mirror
    ? `${mirror.replace(/\/$/, "")}/${name}/${path.basename(new URL(url).pathname)}`
    : url;
}

/**
 * Downloads a dataset into its home: to a temporary file first, renamed into place only when
 * the whole body arrived, so an interrupted download never looks complete.
 */
export async function pullDataset(
  name: DatasetName,
  onProgress?: (bytes: number, total: number | null) => void,
): Promise<string> {
  const home = datasetHome(name);
  mkdirSync(home, { recursive: true });
  const url = sourceUrl(name);
  const target = path.join(home, SOURCES[name].file);
  const partial = `${target}.partial-${process.pid}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(10 * 60_000) });
  } catch (error) {
    throw new PullError(
      name,
      url,
      (error as Error).cause ? String((error as Error).cause) : (error as Error).message,
    );
  }
  if (!response.ok || !response.body) throw new PullError(name, url, `HTTP ${response.status}`);
  const total = Number(response.headers.get("content-length")) || null;
  let bytes = 0;
  const body = Readable.fromWeb(
    response.body as import("node:stream/web").ReadableStream<Uint8Array>,
  );
  body.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    onProgress?.(bytes, total);
  });
  try {
    await pipeline(body, createWriteStream(partial));
    if (total !== null && statSync(partial).size !== total) {
      throw new Error(`got ${statSync(partial).size} of ${total} bytes`);
    }
  } catch (error) {
    rmSync(partial, { force: true });
    throw new PullError(name, url, `the download broke off (${(error as Error).message})`);
  }
  renameSync(partial, target);
  if (SOURCES[name].unzip) return unzipInto(name, target, home);
  return target;
}

/** Unzips with Python's zipfile module (the sandbox's Python is there anyway). */
function unzipInto(name: DatasetName, zip: string, home: string): string {
  const python = process.env.TABLEMINDS_PYTHON ?? "python3";
  const result = spawnSync(python, ["-m", "zipfile", "-e", zip, home], { encoding: "utf8" });
  if (result.status !== 0)
    throw new PullError(name, zip, `unzip failed: ${result.stderr || result.error?.message}`);
  rmSync(zip, { force: true });
  // The archive holds one top directory; the loader wants the directory with data/ in it.
  const top = readdirSync(home).find((entry) => existsSync(path.join(home, entry, "data")));
  return top ? path.join(home, top) : home;
}
