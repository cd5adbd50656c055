import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { z } from "zod";
import { artifactDir, sha256, tempPathFor, touchArtifact } from "../storage/artifacts.js";

/*
 * What tables derives from a stored table (DuckDB's profile summary, the cell index),
 * kept beside the artifacts so that a later process asking about the same table content skips
 * the work. A `kind` names what is kept and carries its version: bump it when the same table
 * would come out otherwise.
 */

function derivedFile(kind: string, key: readonly unknown[]): string {
  const name = `${sha256(JSON.stringify([kind, ...key]))}.${kind.replace(/\W/g, "-")}.json`;
  return path.join(artifactDir(), "index", name);
}

/**
 * What was derived before, in any process, for this key (the table's hash and the options);
 * null when there is none or it does not parse as `schema`.
 */
export async function readDerived<T>(
  kind: string,
  key: readonly unknown[],
  schema: z.ZodType<T>,
): Promise<T | null> {
  const file = derivedFile(kind, key);
  try {
    const parsed = schema.safeParse(JSON.parse(await readFile(file, "utf8")));
    if (!parsed.success) return null;
    await touchArtifact(file);
    return parsed.data;
  } catch {
    return null;
  }
}

/** Keeps what was derived for later processes; a failure to write only loses the reuse. */
export async function writeDerived(
  kind: string,
  key: readonly unknown[],
  value: unknown,
): Promise<void> {
  const file = derivedFile(kind, key);
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = tempPathFor(file);
    await writeFile(tmp, JSON.stringify(value));
    await rename(tmp, file);
  } catch {}
}
