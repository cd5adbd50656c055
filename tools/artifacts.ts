import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from "node:fs/promises";
import path from "node:path";

/** Where tableminds keeps its files: `TABLEMINDS_HOME`, default `./.tableminds`. */
export function tablemindsHome(): string {
  return process.env.TABLEMINDS_HOME ?? path.resolve(".tableminds");
}

/** Where table bytes live. */
export function artifactDir(): string {
  return path.join(tablemindsHome(), "artifacts");
}

export function sha256(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export type ArtifactExtension = "csv" | "parquet";

/** Marks an artifact as used now, for `prune`; a missing file is not an error. */
export async function touchArtifact(uri: string): Promise<void> {
  const now = new Date();
  await utimes(uri, now, now).catch(() => {});
}

/**
 * Stores bytes under their own hash and returns the absolute path; storing the
 * same content twice is a no-op. Written to a unique temporary name and renamed, so a
 * crash never leaves a half-written artifact under a valid hash, and concurrent
 * writers of the same content both succeed.
 */
export async function putArtifact(
  bytes: Buffer | string,
  extension: ArtifactExtension,
): Promise<{ sha256: string; uri: string }> {
  const digest = sha256(bytes);
  const dir = artifactDir();
  const uri = path.join(dir, `${digest}.${extension}`);
  try {
    await stat(uri);
    await touchArtifact(uri);
    return { sha256: digest, uri };
  } catch {
    await mkdir(dir, { recursive: true });
    const tmp = `${uri}.${randomUUID()}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, uri);
    return { sha256: digest, uri };
  }
}

/** A fresh temporary path in the artifact store, for a file written there and then adopted. */
export async function artifactTempPath(extension: ArtifactExtension): Promise<string> {
  const dir = artifactDir();
  await mkdir(dir, { recursive: true });
  return path.join(dir, `${randomUUID()}.${extension}.tmp`);
}

/** The sha256 of a file, read as a stream so a large one is never held whole. */
export async function hashFile(file: string, opts: { start?: number } = {}): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { start: opts.start ?? 0 })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest("hex");
}

/**
 * Moves a finished temporary file (see artifactTempPath) to its place under its hash;
 * when that content is stored already, the temporary file is removed instead.
 */
export async function adoptArtifact(
  tmp: string,
  digest: string,
  extension: ArtifactExtension,
): Promise<{ sha256: string; uri: string }> {
  const uri = path.join(artifactDir(), `${digest}.${extension}`);
  try {
    await stat(uri);
    await rm(tmp, { force: true });
    await touchArtifact(uri);
  } catch {
    await rename(tmp, uri);
  }
  return { sha256: digest, uri };
}

export async function readArtifact(uri: string): Promise<Buffer> {
  return readFile(uri);
}

/** Files of the store prune may remove: tables, caches derived from them, their index. */
const PRUNABLE = /^[0-9a-f]{64}(?:\.[A-Za-z0-9_.-]+)?\.(?:csv|parquet|pkl|json)$/;
/** A temporary file this young may still be being written. */
export const TEMP_GRACE_MS = 60 * 60 * 1000;
/** Subdirectories of the store whose files are pruned like the tables. */
const PRUNED_SUBDIRS = ["index"];

export interface PrunedFile {
  path: string;
  bytes: number;
  /** Last use: the later of the file's access and modification times. */
  lastUsed: Date;
}

export interface PruneResult {
  removed: PrunedFile[];
  bytes: number;
  /** Files kept because they were used recently enough. */
  kept: number;
}

/**
 * Removes the artifact store's files not used for `olderThanDays` days (touched on every
 * reuse), and temporary files older than an hour (younger ones may still be written). Only regular files directly
 * in the store (or its index) whose names the store itself gives are candidates: nothing
 * outside it, no symbolic link, no file of another name. `dryRun` only lists them.
 */
export async function pruneArtifacts(opts: {
  olderThanDays: number;
  dryRun?: boolean;
  now?: Date;
}): Promise<PruneResult> {
  const now = (opts.now ?? new Date()).getTime();
  const cutoff = now - opts.olderThanDays * 24 * 60 * 60 * 1000;
  const root = artifactDir();
  const dirs = [root, ...PRUNED_SUBDIRS.map((sub) => path.join(root, sub))];
  const result: PruneResult = { removed: [], bytes: 0, kept: 0 };
  for (const dir of dirs) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const isTemp = name.endsWith(".tmp");
      if (!isTemp && !PRUNABLE.test(name)) continue;
      const file = path.join(dir, name);
      const info = await lstat(file).catch(() => null);
      if (!info?.isFile()) continue;
      const lastUsed = Math.max(info.atimeMs, info.mtimeMs);
      // A temporary file an hour old was left by a crashed writer, whatever the age asked for.
      const stale = isTemp ? info.mtimeMs < now - TEMP_GRACE_MS : lastUsed < cutoff;
      if (!stale) {
        result.kept++;
        continue;
      }
      if (!opts.dryRun) await rm(file, { force: true });
      result.removed.push({ path: file, bytes: info.size, lastUsed: new Date(lastUsed) });
      result.bytes += info.size;
    }
  }
  return result;
}
