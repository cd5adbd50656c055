import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { downloadFile } from "./download.js";
import { type CatalogModel, DEFAULT_MODEL_HUB, hubUrl } from "./local-spec.js";

export const HubEnvSchema = z.object({
  /** The model hub's base URL: a mirror, or a loopback server in tests. */
  TABLEMINDS_MODEL_HUB: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z.url({ protocol: /^https?$/ }).optional(),
  ),
});

export interface HubInstall {
  file: string;
  /** How the file came to be trusted: already checked (its stamp), hashed again, or downloaded. */
  how: "stamp" | "hash" | "download";
  /** Bytes an earlier, broken download had left, that this one kept. */
  resumedFrom: number;
}

async function mtimeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

/**
 * Installs a catalog model into `dir` from the hub: the file at its pinned revision, resumed
 * when an earlier download broke, refused (and deleted) unless its sha256 is the catalog's. A
 * stamp beside the file (`<file>.sha256`, as scripts/setup-model.sh writes) says it was checked,
 * so a second run reads nothing; a file newer than its stamp is hashed again.
 */
export async function installFromHub(
  model: CatalogModel,
  options: {
    dir: string;
    hub?: string;
    progress?: boolean;
    stallMs?: number;
    /** Told the URL when a download starts (not when the file is there already). */
    onDownload?: (url: string) => void;
  },
): Promise<HubInstall> {
  const file = path.join(options.dir, model.file);
  const stamp = `${file}.sha256`;
  const [fileTime, stampTime] = await Promise.all([mtimeOf(file), mtimeOf(stamp)]);
  if (fileTime !== undefined) {
    const stamped = await readFile(stamp, "utf8").catch(() => "");
    if (stamped.trim() === model.sha256 && stampTime !== undefined && fileTime <= stampTime) {
      return { file, how: "stamp", resumedFrom: 0 };
    }
    if ((await sha256Of(file)) === model.sha256) {
      await writeFile(stamp, `${model.sha256}\n`);
      return { file, how: "hash", resumedFrom: 0 };
    }
    await rm(file, { force: true });
  }
  await rm(stamp, { force: true });
  const url = hubUrl(model, options.hub ?? DEFAULT_MODEL_HUB);
  options.onDownload?.(url);
  const result = await downloadFile({
    url,
    dest: file,
    sha256: model.sha256,
    bytes: model.bytes,
    progress: options.progress ?? true,
    ...(options.stallMs === undefined ? {} : { stallMs: options.stallMs }),
  });
  await writeFile(stamp, `${model.sha256}\n`);
  return { file, how: "download", resumedFrom: result.resumedFrom };
}
