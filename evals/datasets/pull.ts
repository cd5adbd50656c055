import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { z } from "zod";
import { DATA_PATH_HINT, type DatasetName, datasetHome, PULLED_ENTRY } from "./index.js";

interface FileSource {
  kind: "file";
  url: string;
  /** Throws when the downloaded bytes are not what the loader reads. */
  check: (text: string) => void;
}

interface ZipSource {
  kind: "zip";
  url: string;
  /** A file that marks the dataset's root inside the archive. */
  marker: string;
  /** Paths under the root to unpack (a trailing `/` keeps a whole folder); empty: everything. */
  keep: string[];
}

export type DatasetSource = FileSource | ZipSource;

function checkJsonLines(text: string): void {
  const lines = text.split("\n").filter((line) => line.trim());
  if (lines.length === 0) throw new Error("the file is empty");
  lines.forEach((line, i) => {
    try {
      JSON.parse(line);
    } catch {
      throw new Error(`line ${i + 1} is not JSON`);
    }
  });
}

function checkJsonArray(text: string): void {
  const json: unknown = JSON.parse(text);
  if (!Array.isArray(json) || json.length === 0) throw new Error("not a non-empty JSON array");
}

/** Each dataset's upstream location; TabFact is the archive of the commit the HF script pins. */
export const SOURCES: Record<DatasetName, DatasetSource> = {
  tablebench: {
    kind: "file",
    url: "https://huggingface.co/datasets/Multilingual-Multimodal-NLP/TableBench/resolve/main/TableBench_DP.jsonl",
    check: checkJsonLines,
  },
  wikitq: {
    kind: "zip",
    url: "https://github.com/ppasupat/WikiTableQuestions/releases/download/v1.0.2/WikiTableQuestions-1.0.2-compact.zip",
    marker: "data/pristine-unseen-tables.tsv",
    keep: [],
  },
  tabfact: {
    kind: "zip",
    url: "https://github.com/wenhuchen/Table-Fact-Checking/archive/948b5560e2f7f8c9139bd91c7f093346a2bb56a8.zip",
    marker: "tokenized_data/test_examples.json",
    // The archive is the whole repository (several hundred MB); the loader needs only these.
    keep: [
      "tokenized_data/test_examples.json",
      "tokenized_data/val_examples.json",
      "data/",
      "README.md",
      "LICENSE",
    ],
  },
  finqa: {
    kind: "file",
    url: "https://raw.githubusercontent.com/czyssrs/FinQA/main/dataset/test.json",
    check: checkJsonArray,
  },
};

const MirrorSchema = z.url({ protocol: /^https?$/ });

/**
 * The URL a dataset is downloaded from: upstream, or `<mirror>/<name>/<upstream file name>`
 * when a mirror is given (option, else TABLEMINDS_DATA_MIRROR).
 */
export function sourceUrl(name: DatasetName, mirror?: string): string {
  const base = (mirror ?? servicesSettings().TABLEMINDS_DATA_MIRROR)?.trim();
  const { url } = SOURCES[name];
  if (!base) return url;
  const parsed = MirrorSchema.safeParse(base);
  if (!parsed.success) throw new Error(`TABLEMINDS_DATA_MIRROR=${base} is not an http(s) URL`);
  return `${parsed.data.replace(/\/+$/, "")}/${name}/${path.posix.basename(new URL(url).pathname)}`;
}

/** How to get the dataset by hand, for the error of a failed pull. */
function byHand(name: DatasetName, url: string, dir: string): string {
  const source = SOURCES[name];
  const place =
    source.kind === "zip"
      ? `unzip it, and move the folder that holds ${source.marker} to ${path.join(dir, PULLED_ENTRY[name])}`
      : `save it as ${path.join(dir, PULLED_ENTRY[name])}`;
  return (
    `  To get it by hand: download ${url} on a machine with internet access, then ${place}.\n` +
    `  Or give the evaluation your own copy with --data PATH (${DATA_PATH_HINT[name]}).`
  );
}

export class PullError extends Error {
  constructor(name: DatasetName, url: string, dir: string, reason: string) {
    super(`could not download ${name} from ${url}: ${reason}.\n${byHand(name, url, dir)}`);
    this.name = "PullError";
  }
}

/** A readable reason for a failed fetch: undici puts the system error in `cause`. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  const detail = cause?.message ?? (error as Error).message;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `${detail} (the host name does not resolve: is this machine offline?)`;
  }
  return code ? `${detail} (${code})` : detail;
}

export interface PullOptions {
  /** Where to put the dataset; default: its home, where the loaders look. */
  dir?: string;
  /** A base URL standing in for the upstream hosts (else TABLEMINDS_DATA_MIRROR). */
  mirror?: string;
  /** Abandon the download when no byte arrives for this long (default 60 s). */
  stallMs?: number;
  onProgress?: (bytes: number, total: number | null) => void;
}

export interface PullResult {
  /** What the loader reads: the file, or the dataset's root directory. */
  path: string;
  url: string;
  bytes: number;
}

const unique = () => `${process.pid}-${randomBytes(4).toString("hex")}`;

/**
 * Downloads a dataset: to a temporary file first, checked (size, JSON, archive), then renamed
 * or unpacked into place, so an interrupted or broken download never looks complete. A copy
 * already there is replaced only by a complete new one.
 */
export async function pullDataset(
  name: DatasetName,
  options: PullOptions = {},
): Promise<PullResult> {
  const dir = path.resolve(options.dir ?? datasetHome(name));
  const url = sourceUrl(name, options.mirror);
  const fail = (reason: string) => new PullError(name, url, dir, reason);
  await mkdir(dir, { recursive: true });
  const partial = path.join(dir, `.download-${unique()}.partial`);
  try {
    const bytes = await download(url, partial, options, fail);
    const target = path.join(dir, PULLED_ENTRY[name]);
    const source = SOURCES[name];
    if (source.kind === "file") {
      try {
        source.check(await readFile(partial, "utf8"));
      } catch (error) {
        throw fail(`the downloaded file is not the dataset (${(error as Error).message})`);
      }
      await rename(partial, target);
    } else {
      await unpack(source, partial, dir, target, fail);
    }
    return { path: target, url, bytes };
  } finally {
    await rm(partial, { force: true });
  }
}

async function download(
  url: string,
  file: string,
  options: PullOptions,
  fail: (reason: string) => PullError,
): Promise<number> {
  const stallMs = options.stallMs ?? 60_000;
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), stallMs);
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), stallMs);
  };
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        signal: controller.signal,
        headers: { "accept-encoding": "identity" },
      });
    } catch (error) {
      throw fail(
        controller.signal.aborted ? `no answer within ${stallMs} ms` : networkReason(error),
      );
    }
    if (!response.ok || !response.body)
      throw fail(`HTTP ${response.status} ${response.statusText}`);
    const encoded = (response.headers.get("content-encoding") ?? "identity") !== "identity";
    const declared = Number(response.headers.get("content-length"));
    const total = !encoded && declared > 0 ? declared : null;
    let bytes = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        alive();
        options.onProgress?.(bytes, total);
        done(null, chunk);
      },
    });
    try {
      await pipeline(
        Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
        count,
        createWriteStream(file),
      );
    } catch (error) {
      const why = controller.signal.aborted
        ? `nothing arrived for ${stallMs} ms`
        : networkReason(error);
      throw fail(`the download broke off after ${bytes} bytes (${why})`);
    }
    const size = (await stat(file)).size;
    if (total !== null && size !== total) throw fail(`got ${size} of ${total} bytes`);
    if (size === 0) throw fail("the server sent an empty file");
    return size;
  } finally {
    clearTimeout(timer);
  }
}

/** Unpacks with Python's zipfile (the sandbox needs Python anyway); prints the archive's root. */
const UNZIP_SCRIPT = `
import sys, zipfile
archive, dest, marker, keep = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with zipfile.ZipFile(archive) as z:
    names = z.namelist()
    roots = [n[: len(n) - len(marker)] for n in names
             if n == marker or n.endswith("/" + marker)]
    if not roots:
        sys.exit("the archive has no " + marker)
    root = min(roots, key=len)
    for n in names:
        rel = n[len(root):]
        if not n.startswith(root) or not rel:
            continue
        if keep and not any(rel == k or (k.endswith("/") and rel.startswith(k)) for k in keep):
            continue
        z.extract(n, dest)
    print(root)
`;

import { pythonOverride } from "../../settings/operator.js";
import { servicesSettings } from "../../settings/services.js";

function runPython(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const python = pythonOverride() ?? "python3";
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-c", UNZIP_SCRIPT, ...args], {
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
    child.on("error", (error) =>
      reject(new Error(`${python} could not be started (${error.message})`)),
    );
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function unpack(
  source: ZipSource,
  zip: string,
  dir: string,
  target: string,
  fail: (reason: string) => PullError,
): Promise<void> {
  const scratch = path.join(dir, `.unpack-${unique()}`);
  try {
    let result: Awaited<ReturnType<typeof runPython>>;
    try {
      result = await runPython([zip, scratch, source.marker, ...source.keep]);
    } catch (error) {
      throw fail(`unpacking the zip needs Python 3: ${(error as Error).message}`);
    }
    const lastError = result.stderr.trim().split("\n").at(-1) ?? "";
    if (result.code !== 0) throw fail(`the zip could not be unpacked (${lastError})`);
    const root = path.join(scratch, result.stdout.trim());
    if (!existsSync(path.join(root, source.marker))) {
      throw fail(`the unpacked zip has no ${source.marker}`);
    }
    // Swap the new copy in: an old one is moved aside first, and removed only afterwards.
    const old = `${target}.old-${unique()}`;
    const hadOld = existsSync(target);
    if (hadOld) await rename(target, old);
    try {
      await rename(root, target);
    } catch (error) {
      if (hadOld) await rename(old, target);
      throw error;
    }
    if (hadOld) await rm(old, { recursive: true, force: true });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
