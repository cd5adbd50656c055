import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import {
  chmod,
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
import { tablemindsHome } from "../settings/operator.js";
import { artifactStore } from "./artifact-store.js";
import { isAlive } from "./pids.js";

/*
 * The artifact folder holds every table file a reader opens. With a shared store
 * (TABLEMINDS_ARTIFACT_STORE, storage/artifact-store.ts) it is this machine's cache of it, by
 * hash: whatever goes into the folder is put to the store first, and whatever is needed and
 * missing is fetched from it, checked against its name before it is renamed into place.
 * What is derived from a table (the load index, cached summaries and cell indexes under
 * `index/`, and the sandbox's pickles, signed with this machine's key) stays in the folder
 * only: each machine makes and verifies its own.
 */

export { tablemindsHome };

/** Where table bytes live on this machine (with a shared store: its local cache). */
export function artifactDir(): string {
  return path.join(tablemindsHome(), "artifacts");
}

/** The name of a stored table, in the folder and in the store: `<sha256>.<ext>`. */
const STORED_TABLE = /^[0-9a-f]{64}\.(?:csv|parquet)$/;
/** A name of the store (`<sha256>.<ext>`, `uploads/<sha256><ext>`): the digest it begins with. */
const NAMED_DIGEST = /^(?:uploads\/)?([0-9a-f]{64})\.[a-z]+$/;

export function sha256(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Tables are CSV or Parquet; the figures a run drew are PNG and SVG. */
export type ArtifactExtension = "csv" | "parquet" | "png" | "svg";

/** The artifacts a `removingOnFailure` call has added to the store so far. */
const added = new AsyncLocalStorage<Set<string>>();

/**
 * Runs `work`; when it throws, the artifacts it added to the store (not those that were there
 * already) are removed again, so that a load that fails half way leaves nothing behind
 * (in the folder: a shared store keeps what was put to it, harmless under its own hash).
 */
export async function removingOnFailure<T>(work: () => Promise<T>): Promise<T> {
  const mine = new Set<string>();
  try {
    return await added.run(mine, work);
  } catch (error) {
    await Promise.all([...mine].map((uri) => rm(uri, { force: true })));
    throw error;
  }
}

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
  const name = `${digest}.${extension}`;
  const uri = path.join(dir, name);
  if (await exists(uri)) {
    await touchArtifact(uri);
    await shareArtifact(uri);
    return { sha256: digest, uri };
  }
  await mkdir(dir, { recursive: true });
  const tmp = tempPathFor(uri);
  try {
    await writeFile(tmp, bytes);
    await settleArtifact(tmp, name);
    added.getStore()?.add(uri);
  } finally {
    await rm(tmp, { force: true });
  }
  return { sha256: digest, uri };
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/**
 * Puts the finished temporary file `tmp` in place as `name` (relative to the folder), shared
 * with the store first (awaited: a table or upload this returns is fetchable by any machine).
 */
export async function settleArtifact(tmp: string, name: string): Promise<void> {
  await (await artifactStore()).put(tmp, name);
  await rename(tmp, path.join(artifactDir(), name));
}

/**
 * Makes sure the shared store has a table already in the folder (one stored before the store was
 * set, found through the load index): asked once per process, sent only when missing.
 */
export async function shareArtifact(file: string): Promise<void> {
  const name = path.basename(file);
  if (path.dirname(file) !== artifactDir() || !STORED_TABLE.test(name)) return;
  await (await artifactStore()).put(file, name, { check: true });
}

/** Fetches in flight, by file, so that two readers of a missing table fetch it once. */
const fetching = new Map<string, Promise<void>>();

/**
 * Makes sure the folder has `name` (relative to it), fetching it from the store when missing;
 * the bytes are checked against the digest the name begins with before they are renamed into
 * place, and nothing is left behind when they do not match. A name the store does not have
 * stays missing: the reader says so.
 */
export async function cachedArtifact(name: string): Promise<string> {
  const file = path.join(artifactDir(), name);
  if (await exists(file)) return file;
  let pending = fetching.get(file);
  if (!pending) {
    pending = fetchArtifact(name, file).finally(() => fetching.delete(file));
    fetching.set(file, pending);
  }
  await pending;
  return file;
}

async function fetchArtifact(name: string, file: string): Promise<void> {
  const digest = NAMED_DIGEST.exec(name)?.[1];
  if (digest === undefined) return;
  const store = await artifactStore();
  const tmp = tempPathFor(file);
  try {
    const fetched = await store.fetch(name, tmp);
    if (fetched === null) return;
    if (fetched !== digest) {
      throw new Error(`${store.where(name)}: its bytes do not match the sha256 it is named by`);
    }
    // An upload is kept as storeUpload keeps it: readable by this user only.
    if (name.startsWith("uploads/")) await chmod(tmp, 0o600);
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * The file a reader opens for a table: its `<sha256>.<ext>` in this machine's folder, fetched
 * from the shared store when missing, also when `uri` names another machine's folder (a
 * TableRef checkpointed there); the bytes are never read from that other path. A file not of
 * the store (one a caller of this process named itself) is opened where it is.
 */
export async function localArtifact(table: { uri: string; sha256: string }): Promise<string> {
  const name = path.basename(table.uri);
  const dir = artifactDir();
  const ours = path.dirname(table.uri) === dir;
  const stored = name === `${table.sha256}.csv` || name === `${table.sha256}.parquet`;
  if (!ours && !stored) return table.uri;
  if (!STORED_TABLE.test(name)) return path.join(dir, name);
  return cachedArtifact(name);
}

/**
 * A unique temporary name beside `file`, for writing it whole and renaming it into place. It
 * names the writing process (`.pid<pid>.tmp`), so that `prune` frees what a killed writer
 * left at once, instead of after TEMP_GRACE_MS.
 */
export function tempPathFor(file: string): string {
  return `${file}.${randomUUID()}.pid${process.pid}.tmp`;
}

/** The pid a temporary file's name gives (tempPathFor), or null. */
export function writerOf(name: string): number | null {
  const pid = /\.pid(\d+)\.tmp$/.exec(name)?.[1];
  return pid === undefined ? null : Number(pid);
}

/** A fresh temporary path in the artifact store, for a file written there and then adopted. */
export async function artifactTempPath(extension: ArtifactExtension): Promise<string> {
  const dir = artifactDir();
  await mkdir(dir, { recursive: true });
  return tempPathFor(path.join(dir, `${randomUUID()}.${extension}`));
}

/** Pieces a file is hashed in: Node's default of 64 KB takes about twice as long. */
const HASH_CHUNK_BYTES = 1024 * 1024;

/** The sha256 of a file, read as a stream so a large one is never held whole. */
export async function hashFile(file: string, opts: { start?: number } = {}): Promise<string> {
  const hash = createHash("sha256");
  const stream = createReadStream(file, {
    start: opts.start ?? 0,
    highWaterMark: HASH_CHUNK_BYTES,
  });
  for await (const chunk of stream) {
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
  const name = `${digest}.${extension}`;
  const uri = path.join(artifactDir(), name);
  if (await exists(uri)) {
    await rm(tmp, { force: true });
    await touchArtifact(uri);
    await shareArtifact(uri);
  } else {
    await settleArtifact(tmp, name);
    added.getStore()?.add(uri);
  }
  return { sha256: digest, uri };
}

export async function readArtifact(uri: string): Promise<Buffer> {
  return readFile(uri);
}

/** Files of the store prune may remove: tables, caches derived from them, their index, figures. */
const PRUNABLE = /^[0-9a-f]{64}(?:\.[A-Za-z0-9_.-]+)?\.(?:csv|parquet|pkl|json|png|svg)$/;
/** A pickle the sandbox keeps of a table (`<sha256>.pandas-<version>[.signed].pkl`). */
const PICKLE = /^([0-9a-f]{64})\.pandas-[A-Za-z0-9_.+-]+\.pkl$/;
/** An entry of the load index: `index/<key>.json` (derived caches have a kind before `.json`). */
const INDEX_ENTRY = /^[0-9a-f]{64}\.json$/;
/** A temporary file this young may still be being written. */
export const TEMP_GRACE_MS = 60 * 60 * 1000;
const INDEX = "index";

export interface PrunedFile {
  path: string;
  bytes: number;
  /** Last use: the later of the file's access and modification times. */
  lastUsed: Date;
  /** Why it goes: not used for the days asked, or nothing uses it any more. */
  why: string;
}

export interface PruneResult {
  removed: PrunedFile[];
  bytes: number;
  /** Files kept because they were used recently enough. */
  kept: number;
}

export interface PruneOptions {
  olderThanDays: number;
  dryRun?: boolean;
  now?: Date;
  /**
   * Whether a load-index entry is of no use any more (unreadable, of an older loader, or naming
   * a table that is gone); the store cannot tell by itself (see tables/load-index.ts).
   * `gone` holds the tables this prune removes.
   */
  unusedIndexEntry?: (file: string, gone: ReadonlySet<string>) => Promise<boolean>;
}

interface Candidate {
  file: string;
  name: string;
  inIndex: boolean;
  bytes: number;
  lastUsed: number;
  mtime: number;
}

async function candidates(root: string): Promise<{ found: Candidate[]; tables: Set<string> }> {
  const found: Candidate[] = [];
  /** Every file name directly in the store, to tell whether a pickle's table is there. */
  const tables = new Set<string>();
  for (const [dir, inIndex] of [
    [root, false],
    [path.join(root, INDEX), true],
  ] as const) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!inIndex) tables.add(name);
      if (!name.endsWith(".tmp") && !PRUNABLE.test(name)) continue;
      const file = path.join(dir, name);
      const info = await lstat(file).catch(() => null);
      if (!info?.isFile()) continue;
      const lastUsed = Math.max(info.atimeMs, info.mtimeMs);
      found.push({ file, name, inIndex, bytes: info.size, lastUsed, mtime: info.mtimeMs });
    }
  }
  return { found, tables };
}

/**
 * Removes the artifact store's files that are no longer used: those not used for
 * `olderThanDays` days (touched on every reuse); temporary files whose writer is gone (at once
 * when their name says which process wrote them, else after an hour); pickles of tables that
 * are gone; and, with `unusedIndexEntry`, index entries that can no longer be used. Only
 * regular files directly in the store (or its index) whose names the store itself gives are
 * candidates: nothing outside it, no symbolic link, no file of another name. `dryRun` only
 * lists them. Only this machine's folder is pruned: with a shared store, a table removed here
 * is fetched again when needed, and the store itself is never pruned.
 */
export async function pruneArtifacts(opts: PruneOptions): Promise<PruneResult> {
  const now = (opts.now ?? new Date()).getTime();
  const cutoff = now - opts.olderThanDays * 24 * 60 * 60 * 1000;
  const root = artifactDir();
  const { found, tables } = await candidates(root);
  const result: PruneResult = { removed: [], bytes: 0, kept: 0 };
  const gone = new Set<string>();
  const remove = async (candidate: Candidate, why: string) => {
    if (!opts.dryRun) await rm(candidate.file, { force: true });
    if (!candidate.inIndex) {
      tables.delete(candidate.name);
      gone.add(candidate.file);
    }
    result.removed.push({
      path: candidate.file,
      bytes: candidate.bytes,
      lastUsed: new Date(candidate.lastUsed),
      why,
    });
    result.bytes += candidate.bytes;
  };
  const later: Candidate[] = [];
  for (const candidate of found) {
    if (candidate.name.endsWith(".tmp")) {
      const writer = writerOf(candidate.name);
      // A temporary file an hour old was left by a crashed writer, whatever the age asked for.
      if (writer !== null && writer !== process.pid && !isAlive(writer)) {
        await remove(candidate, "left by a writer that is gone");
      } else if (candidate.mtime < now - TEMP_GRACE_MS) {
        await remove(candidate, "left by a writer an hour ago");
      } else result.kept++;
    } else if (candidate.lastUsed < cutoff) {
      await remove(candidate, `not used for ${opts.olderThanDays} days`);
    } else later.push(candidate);
  }
  // What is left of the rest once the old tables are gone.
  for (const candidate of later) {
    const table = PICKLE.exec(candidate.name)?.[1];
    if (!candidate.inIndex && table && !tables.has(`${table}.csv`)) {
      await remove(candidate, "its table is gone");
    } else if (
      candidate.inIndex &&
      INDEX_ENTRY.test(candidate.name) &&
      (await opts.unusedIndexEntry?.(candidate.file, gone))
    ) {
      await remove(candidate, "it names a table that is gone, or an older loader wrote it");
    } else result.kept++;
  }
  return result;
}
