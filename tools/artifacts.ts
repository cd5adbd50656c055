import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
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

/**
 * Stores bytes under their own hash and returns the absolute path; storing the
 * same content twice is a no-op. Written to a unique temporary name and renamed, so a
 * crash never leaves a half-written artifact under a valid hash, and concurrent
 * writers of the same content both succeed.
 */
export async function putArtifact(
  bytes: Buffer | string,
  extension: "csv" | "parquet",
): Promise<{ sha256: string; uri: string }> {
  const digest = sha256(bytes);
  const dir = artifactDir();
  const uri = path.join(dir, `${digest}.${extension}`);
  try {
    await stat(uri);
    return { sha256: digest, uri };
  } catch {
    await mkdir(dir, { recursive: true });
    const tmp = `${uri}.${randomUUID()}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, uri);
    return { sha256: digest, uri };
  }
}

export async function readArtifact(uri: string): Promise<Buffer> {
  return readFile(uri);
}
