import { randomUUID } from "node:crypto";
import { constants, createWriteStream, realpathSync } from "node:fs";
import { mkdir, open, readlink, rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { TableRef, TableSource } from "../blackboard/schemas.js";
import { readerLimit } from "../settings/limits.js";
import { isServed } from "../settings/operator.js";
import { artifactDir, cachedArtifact, hashFile, settleArtifact } from "../storage/artifacts.js";
import { TableLoadError } from "./errors.js";
import { TABLE_FORMATS } from "./formats.js";

/*
 * Where a run's tables may come from (the input policy): inline rows, files uploaded into the
 * artifact store, or paths under the operator's table roots. Everything else is refused, in one
 * line, before a byte of it is read.
 */

/** An upload's id: the sha256 of its bytes and the table format it was sent as. */
export const UPLOAD_ID = new RegExp(
  `^[0-9a-f]{64}(${TABLE_FORMATS.map((f) => f.replace(".", "\\.")).join("|")})$`,
);

/**
 * Uploads bigger than this are cut off: TABLEMINDS_UPLOAD_MAX_MB, default 256 MB. A setting
 * that is not a whole number throws its one line (a server refuses to start with it).
 */
export function uploadLimitBytes(env?: NodeJS.ProcessEnv): number {
  const setting = readerLimit("uploadMaxMb", env);
  if ("problem" in setting) throw new Error(setting.problem);
  return setting.value * 1024 * 1024;
}

function uploadDir(): string {
  return path.join(artifactDir(), "uploads");
}

export class UploadError extends Error {
  override name = "UploadError";
  constructor(
    message: string,
    readonly status: 400 | 413,
  ) {
    super(message);
  }
}

/**
 * Stores an uploaded table file under its sha256 and returns the source a run names it by.
 * The bytes are streamed to a temporary file and counted, so an upload over the limit is cut
 * off, not held.
 */
export async function storeUpload(
  body: ReadableStream<Uint8Array> | Readable,
  fileName: string,
  limit = uploadLimitBytes(),
): Promise<{ upload: string; name: string }> {
  const extension = path.extname(fileName).toLowerCase();
  if (!TABLE_FORMATS.includes(extension)) {
    throw new UploadError(
      `${fileName}: unsupported format (supported: ${TABLE_FORMATS.join(", ")})`,
      400,
    );
  }
  const dir = uploadDir();
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `${randomUUID()}.tmp`);
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) {
        done(new UploadError(`${fileName}: larger than ${limit / 1024 / 1024} MB`, 413));
      } else done(null, chunk);
    },
  });
  const source = body instanceof Readable ? body : Readable.fromWeb(body as never);
  try {
    await pipeline(source, counted, createWriteStream(tmp, { flags: "wx", mode: 0o600 }));
    if (seen === 0) throw new UploadError(`${fileName}: the file is empty`, 400);
    const upload = `${await hashFile(tmp)}${extension}`;
    // With a shared store, put there before the id is handed out: any machine can load it.
    await settleArtifact(tmp, `uploads/${upload}`);
    return { upload, name: path.basename(fileName, extension) };
  } finally {
    await rm(tmp, { force: true });
  }
}

/** The file of an upload in the store (see localUpload for one stored by another machine). */
export function uploadPath(upload: string): string {
  if (!UPLOAD_ID.test(upload)) throw new TableLoadError(upload, "not an upload's id");
  return path.join(uploadDir(), upload);
}

/**
 * Before `file` is read: when it is an upload's file in this store (uploadPath) and missing
 * here, it is fetched from the shared store (checked against its sha256). Any other file is
 * left alone.
 */
export async function localUpload(file: string): Promise<void> {
  const upload = path.basename(file);
  if (path.dirname(file) === uploadDir() && UPLOAD_ID.test(upload)) {
    await cachedArtifact(`uploads/${upload}`);
  }
}

function real(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}

/** Table roots resolved once: they are the operator's, not a run's. */
const realRoots = new Map<string, string>();

function realRoot(root: string): string {
  const known = realRoots.get(root);
  if (known !== undefined) return known;
  try {
    const resolved = realpathSync.native(root);
    realRoots.set(root, resolved);
    return resolved;
  } catch {
    // A root that does not exist yet is resolved again next time.
    return path.resolve(root);
  }
}

function inside(file: string, root: string): boolean {
  const relative = path.relative(realRoot(root), file);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

export interface SourcePolicy {
  tableRoots: readonly string[];
  tableFiles: readonly string[];
}

/**
 * The source as the loader reads it: an upload becomes its file in the store; a path must lie,
 * after its symbolic links are followed, under a table root or be one of the files the
 * operator named. Inline rows pass as they are.
 */
export function allowedSource(source: TableSource, policy: SourcePolicy): TableSource {
  if ("upload" in source) {
    const { upload, ...rest } = source;
    return { ...rest, path: uploadPath(upload), name: source.name ?? path.parse(upload).name };
  }
  if (!("path" in source)) return source;
  assertAllowedFile(source.path, real(source.path), policy);
  return source;
}

/** Refuses `file` (shown as `given`) unless it is a named file or lies under a table root. */
function assertAllowedFile(given: string, file: string, policy: SourcePolicy): void {
  const named = policy.tableFiles.some((f) => real(f) === file);
  if (named || policy.tableRoots.some((root) => inside(file, root))) return;
  const roots = policy.tableRoots.length
    ? `outside the table roots (${policy.tableRoots.join(", ")})`
    : "refused: this server reads no table paths";
  throw new TableLoadError(
    given,
    `${roots}; send the rows inline or upload the file (POST /tables), or have the operator add its folder to TABLEMINDS_TABLE_ROOTS`,
  );
}

/** A path source's file as the loader reads it, and what to do once it is read. */
export interface PinnedFile {
  path: string;
  done(): Promise<void>;
}

/**
 * On a server, a path source's file opened once: the opened descriptor's real path checked
 * against the table roots, and its bytes copied from that descriptor into a private folder
 * that the loader reads, so that a symbolic link swapped after the check (or between two
 * reads) reads nothing outside the roots. Files of the artifact store (uploads) and a CLI's
 * files are read where they are.
 */
export async function pinnedFile(file: string, policy: SourcePolicy): Promise<PinnedFile> {
  const unpinned = { path: file, done: async () => {} };
  if (!isServed() || inside(real(file), artifactDir())) return unpinned;
  const handle = await open(file, constants.O_RDONLY | constants.O_NOCTTY);
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`);
    assertAllowedFile(file, opened, policy);
    if (!(await handle.stat()).isFile()) throw new TableLoadError(file, "not a regular file");
    const dir = path.join(artifactDir(), "pinned", randomUUID());
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const copy = path.join(dir, path.basename(file));
    await pipeline(
      handle.createReadStream({ autoClose: false, start: 0 }),
      createWriteStream(copy, { flags: "wx", mode: 0o600 }),
    );
    return { path: copy, done: () => rm(dir, { recursive: true, force: true }) };
  } finally {
    await handle.close();
  }
}

/** Whether `uri` is named `<sha256>.<ext>` by its own sha256, as the store names a table. */
function storedName(uri: string, sha256: string): boolean {
  const name = path.basename(uri);
  return path.isAbsolute(uri) && (name === `${sha256}.csv` || name === `${sha256}.parquet`);
}

/**
 * A table handed to a run ready-made must be a file of the artifact store under its own
 * digest (and so must the text view its reading names): its `uri` is read by the sandbox, so
 * it cannot be any path. The folder it names may be another machine's (a TableRef checkpointed
 * there): its bytes are only ever read from this machine's folder, by that name
 * (localArtifact in storage/artifacts.ts), fetched from the shared store when missing.
 */
export function assertStoredTable(table: TableRef): void {
  const text = table.reading?.text;
  if (!storedName(table.uri, table.sha256) || (text && !storedName(text.uri, text.sha256))) {
    throw new TableLoadError(
      table.name,
      "a table given ready-made must be in the artifact store under its sha256; give its rows or file instead",
    );
  }
}
